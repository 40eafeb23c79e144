"""Config plumbing on the Python side: dotted/nested normalisation and `set=` values written
as TOML. Method: format values, then read them back through `resolve_config`, which parses
them with the same code the CLI uses."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import nandlab
from nandlab._config import flatten, toml_value


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (True, "true"),
        (False, "false"),
        (7, "7"),
        (0.85, "0.85"),
        (1e-05, "1e-05"),
        ("cat", '"cat"'),
        ('a"b\\c', '"a\\"b\\\\c"'),
        ("tab\there\n", '"tab\there\\u000A"'),
        ([1, 2.5], "[1, 2.5]"),
        ({"kind": "uniform", "passes": 1}, '{kind = "uniform", passes = 1}'),
    ],
)
def test_toml_value(value: Any, text: str) -> None:
    assert toml_value(value) == text


@pytest.mark.parametrize(
    "path", ['we"ird\\name.csv', "ünïcödé 🚀.csv", "ctl\x01\x7f.csv", "trailing\\"]
)
def test_strings_survive_overrides(path: str, tmp_path: Path) -> None:
    # A trace path only applies to a trace workload, whose file must exist to resolve.
    trace = tmp_path / path
    trace.write_text("128166372003061629,hm,0,Write,0,4096,1000\n")
    resolved = nandlab.resolve_config(
        {"device.blocks": 64},
        set={"workload.kind": "trace", "workload.format": "msr", "workload.path": str(trace)},
    )
    assert resolved["workload"]["path"] == str(trace)


def test_overrides_keep_types() -> None:
    resolved = nandlab.resolve_config(
        set={
            "device.utilization": 0.75,
            "workload.prefill": False,
            "run.seed": 12,
            "ftl.placement": "oracle",
            "ftl.regions": 3,
            "ftl.oracle_boundaries_passes": [0.5, 2.0],
        }
    )
    assert resolved["workload"]["prefill"] is False
    assert resolved["run"]["seed"] == 12
    assert resolved["ftl"]["oracle_boundaries_passes"] == [0.5, 2.0]
    assert resolved["derived"]["utilization"] == pytest.approx(0.75, abs=1e-4)


def test_numpy_like_scalars() -> None:
    class Scalar:
        def __init__(self, value: Any) -> None:
            self.value = value

        def item(self) -> Any:
            return self.value

    resolved = nandlab.resolve_config({"device.blocks": Scalar(64)}, set={"run.seed": Scalar(5)})
    assert resolved["device"]["blocks"] == 64
    assert resolved["run"]["seed"] == 5


def test_none_means_default() -> None:
    resolved = nandlab.resolve_config({"device": {"blocks": 64, "utilization": None}})
    assert resolved["device"]["utilization"] == pytest.approx(0.8, abs=1e-3)


def test_flatten() -> None:
    assert flatten({"a": {"b": 1, "c": {"d": [1]}}, "e": 2}) == {"a.b": 1, "a.c.d": [1], "e": 2}
