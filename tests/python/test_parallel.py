"""The parallel sim-engine through the Python front end: the hardware keys, the host's
queue depth and the parallelism metrics reach `nandlab.run` and `nandlab.sweep`. Method: random
4 KiB writes on a small device whose gang count varies, closed loop with 16 requests in flight;
the assertions are the engine's physics (more dies, more throughput, shorter queues) and the
metrics' shapes, not tuned numbers."""

from __future__ import annotations

import json
from typing import Any

import pytest

import nandlab
from nandlab import ConfigError

BASE: dict[str, Any] = {
    "device.blocks": 256,
    "device.pages_per_block": 32,
    "device.utilization": 0.8,
    "device.chips_per_channel": 2,
    "device.planes_per_die": 2,
    "workload.kind": "uniform",
    "workload.queue_depth": 16,
    "workload.warmup_passes": 1,
    "workload.passes": 2,
}


def test_more_gangs_more_throughput() -> None:
    df = nandlab.sweep(BASE, {"device.gangs": [1, 2, 4]}).set_index("device.gangs")
    iops = df["iops"]
    # Two chips per gang, each its own die: 2, 4 and 8 dies. Writes are bound by the program
    # time spread over the dies, so each doubling of the gangs must buy a clear gain.
    assert iops[2] > 1.5 * iops[1]
    assert iops[4] > 1.5 * iops[2]
    assert df["parallelism_mean"][4] > df["parallelism_mean"][1]
    assert df["write_queue_ns.mean"][4] < df["write_queue_ns.mean"][1]
    # The same host work whatever the hardware.
    assert df["host_write_pages"].nunique() == 1
    # Per-unit series are lists in the metrics and JSON text in the frame.
    for gangs in (1, 2, 4):
        units = json.loads(df["unit_utilization"][gangs])
        assert len(units) == 2 * gangs
        assert all(0.0 < u <= 1.0 for u in units)
        channels = json.loads(df["channel_utilization"][gangs])
        assert len(channels) == gangs


def test_result_records_the_hardware() -> None:
    result = nandlab.run(BASE, set={"device.gangs": 2})
    device = result.config["device"]
    assert (device["gangs"], device["chips_per_channel"], device["planes_per_die"]) == (2, 2, 2)
    assert result.config["workload"]["queue_depth"] == 16
    again = nandlab.run(result.config)
    volatile = set(nandlab.WALL_CLOCK_METRICS)
    assert {k: v for k, v in again.metrics.items() if k not in volatile} == {
        k: v for k, v in result.metrics.items() if k not in volatile
    }


def test_open_loop_takes_no_queue_depth() -> None:
    with pytest.raises(ConfigError, match=r"workload\.queue_depth") as info:
        nandlab.run(BASE, set={"workload.arrival": "poisson", "workload.arrival_rate_per_s": 1000})
    assert info.value.key == "workload.queue_depth"


def test_bad_hardware_names_the_key() -> None:
    with pytest.raises(ConfigError, match=r"device\.planes_per_die") as info:
        nandlab.run(BASE, set={"device.planes_per_die": 0})
    assert info.value.key == "device.planes_per_die"
