"""Wear leveling and endurance from Python (``[wear]``): the leveler's record reaches the result
and its frame, a worn-out device ends the run with both lifetime marks, and bad keys raise a
`ConfigError` naming the key. Method: a small FAST device on a 99/5 hot/cold workload."""

from __future__ import annotations

from typing import Any

import pytest

import nandlab

BASE: dict[str, Any] = {
    "device.blocks": 128,
    "device.pages_per_block": 16,
    "ftl.kind": "fast",
    "workload.kind": "hotcold",
    "workload.hot_access_fraction": 0.99,
    "workload.hot_data_fraction": 0.05,
    "workload.passes": 30,
}


def test_lazy_wear_leveling_is_recorded_and_evens_wear() -> None:
    none = nandlab.run(BASE)
    lazy = nandlab.run({**BASE, "wear.kind": "lazy", "wear.delta": 4})
    assert none.metrics["wear_leveling"] is None
    w = lazy.metrics["wear_leveling"]
    assert w["kind"] == "lazy"
    assert w["remaps"] > 0
    assert w["delta"] == 4.0
    assert 0 < lazy.metrics["wear_leveling_erases"] <= w["remaps"]
    assert lazy.metrics["wear_stddev"] < 0.5 * none.metrics["wear_stddev"]
    row = lazy.to_frame().iloc[0]
    assert row["wear.kind"] == "lazy"
    assert row["wear_leveling.remaps"] == w["remaps"]


def test_adaptive_delta_records_its_sessions() -> None:
    r = nandlab.run({**BASE, "wear.kind": "lazy", "wear.delta": 4, "wear.adaptive": True,
                     "wear.session_wear_erases": 20})
    history = r.metrics["wear_leveling"]["delta_history"]
    assert history[0] == 4.0
    assert len(history) > 2


def test_endurance_gives_a_lifetime() -> None:
    r = nandlab.run({**BASE, "wear.endurance_cycles": 40, "workload.passes": 400})
    life = r.metrics["lifetime"]
    assert life["endurance_cycles"] == 40
    assert life["retired_blocks"] > 0
    assert 0 < life["first_wear_out_host_bytes"] <= life["unusable_host_bytes"]


@pytest.mark.parametrize(
    ("key", "value"), [("wear.kind", "dynamic"), ("wear.delta", 4), ("wear.threshold", 0)]
)
def test_bad_wear_keys_name_the_key(key: str, value: Any) -> None:
    config = {**BASE, "wear.kind": "static"} if key == "wear.threshold" else BASE
    with pytest.raises(nandlab.ConfigError, match=key.replace(".", r"\.")):
        nandlab.run({**config, key: value})
