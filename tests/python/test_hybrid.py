"""Hybrid FTLs from Python: the recycling breakdown reaches the Result and its DataFrame, the
flash-time breakdown adds up, config errors name the key."""

import pytest

import nandlab


def test_bast_migration_metrics_reach_the_frame() -> None:
    r = nandlab.run(
        {
            "device.preset": "mlc2007",
            "device.blocks": 256,
            "device.utilization": 0.9,
            "ftl.kind": "bast",
            "ftl.recycling": "optimal",
            "workload.kind": "embedded",
            "workload.fs.transactions": 3000,
        }
    )
    m = r.metrics
    assert m["migrations"]["count"] > 0
    t = m["flash_time_ns"]
    assert t["read"] + t["program"] + t["copy"] + t["erase"] == m["flash_busy_ns"]
    row = r.to_frame().iloc[0]
    assert row["migrations.count"] == m["migrations"]["count"]
    assert row["full_merges.copied_pages"] == m["full_merges"]["copied_pages"]
    assert row["ftl.recycling"] == "optimal"


def test_sequential_overwrite_has_write_amplification_one() -> None:
    for kind in ("bast", "sast", "fast"):
        r = nandlab.run(
            {"ftl.kind": kind, "device.blocks": 128, "workload.kind": "sequential",
             "workload.passes": 2}
        )
        assert r.metrics["write_amplification"] == 1.0, kind
        assert r.metrics["full_merges"]["count"] == 0, kind


def test_migration_needs_bast() -> None:
    with pytest.raises(nandlab.ConfigError) as e:
        nandlab.run({"ftl.kind": "fast", "ftl.recycling": "periodic"})
    assert e.value.key == "ftl.recycling"
