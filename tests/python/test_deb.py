"""DEB and RAM regions from Python (``[deb]``, ``[dac]``): the EBR's record reaches the result
and its frame, the EBR lowers the erases of a skewed workload, a sweep over EBR sizes mixes
runs with and without a RAM region, and bad keys raise a `ConfigError` naming the key.
Method: a 16 MB page-mapped device at 90 % utilization on a 90/10 hot/cold workload."""

from __future__ import annotations

from typing import Any

import pytest

import nandlab

BASE: dict[str, Any] = {
    "device.blocks": 128,
    "device.pages_per_block": 32,
    "device.utilization": 0.9,
    "workload.kind": "hotcold",
    "workload.hot_access_fraction": 0.9,
    "workload.hot_data_fraction": 0.1,
    "workload.passes": 2,
    "ftl.placement": "deb",
    "ftl.cleaning": "greedy",
}


def test_the_ebr_absorbs_updates_and_is_written_back_at_the_end() -> None:
    without = nandlab.run({**BASE, "deb.ebr_size_bytes": 0})
    with_ebr = nandlab.run({**BASE, "deb.ebr_size_bytes": 2 << 20})
    assert without.metrics["ram_region"] is None
    ram = with_ebr.metrics["ram_region"]
    assert ram["capacity_pages"] == 512
    assert ram["used_pages"] == 0
    assert ram["in_place_updates"] > 0
    assert ram["final_write_back_pages"] > 0
    assert with_ebr.metrics["erases"] < 0.8 * without.metrics["erases"]
    row = with_ebr.to_frame().iloc[0]
    assert row["ram_region.in_place_updates"] == ram["in_place_updates"]
    assert row["deb.stable_time_intervals_s"] == "[100.0, 200.0, 300.0, 400.0]"


def test_sweep_mixes_runs_with_and_without_a_ram_region() -> None:
    df = nandlab.sweep(BASE, {"deb.ebr_size_bytes": [0, 1 << 20]})
    assert list(df["deb.ebr_size_bytes"]) == [0, 1 << 20]
    assert df["ram_region.capacity_pages"].isna().tolist() == [True, False]


@pytest.mark.parametrize(
    ("overrides", "key"),
    [
        ({"deb.stable_time_intervals_s": [100, 50]}, "deb.stable_time_intervals_s"),
        ({"device.ram_bytes": 1 << 20}, "deb.ebr_size_bytes"),
        ({"deb.ebr_write_back_threshold": 0}, "deb.ebr_write_back_threshold"),
        ({"ftl.placement": "dac", "deb.ebr_size_bytes": 4096}, "deb.ebr_size_bytes"),
        ({"ftl.placement": "none", "dac.ram_region_bytes": 4096}, "dac.ram_region_bytes"),
    ],
)
def test_bad_deb_keys_name_the_key(overrides: dict[str, Any], key: str) -> None:
    with pytest.raises(nandlab.ConfigError, match=key.replace(".", r"\.")):
        nandlab.run({**BASE, **overrides})
