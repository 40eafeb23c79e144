"""`nandlab.pbr`: the Per-Byte-Response replay and its diagnosis through the Python front, on a
simulated device (exact simulated times) built to show suboptimal garbage collection."""

from __future__ import annotations

from pathlib import Path

import pytest

import nandlab


def test_pbr_on_the_simulator_diagnoses_gc_and_exports(tmp_path: Path) -> None:
    trace = tmp_path / "gc.csv"
    nandlab.suite("gc", trace, write_bytes=64 << 20, area_bytes=256 << 20)
    r = nandlab.pbr(
        "sim:",
        trace,
        set={"device.logical_bytes": 256 << 20, "device.utilization": 0.9},
    )
    assert r.symptom == "gc"
    assert r.summary["simulated"] is True
    assert r.summary["writes"] == len(r.response_ns) == 16384
    frame = r.frame()
    assert list(frame.columns) == [
        "index",
        "offset_bytes",
        "length_bytes",
        "response_ns",
        "pbr_ns_per_byte",
    ]
    # An aligned 4 KiB write on a prefilled device with generic timing: one page program.
    aligned = frame[(frame.offset_bytes % 4096 == 0) & (frame.response_ns < 1_000_000)]
    assert (aligned.response_ns == 210_240).any()
    pq = pytest.importorskip("pyarrow.parquet")
    r.write_parquet(tmp_path / "pbr.parquet")
    table = pq.read_table(tmp_path / "pbr.parquet")
    assert table.num_rows == 16384
    assert b"nandlab.pbr" in table.schema.metadata
    r.plot(tmp_path / "pbr.png")
    assert (tmp_path / "pbr.png").stat().st_size > 10_000


def test_pbr_refuses_bad_targets(tmp_path: Path) -> None:
    trace = tmp_path / "t.csv"
    nandlab.suite("transfer", trace, write_bytes=1 << 20)
    with pytest.raises(ValueError, match="unknown target"):
        nandlab.pbr("http://x", trace)
    with pytest.raises(ValueError, match="--set"):
        nandlab.pbr("nbd://localhost:1", trace, set={"device.blocks": 64})
    with pytest.raises(nandlab.NandlabError, match="socket"):
        nandlab.pbr("nbd+unix:///?socket=/nonexistent.sock", trace)


def test_probe_finds_the_simulated_geometry() -> None:
    g = nandlab.probe(
        "sim:",
        set={
            "device.logical_bytes": 128 << 20,
            "device.channels_per_gang": 2,
            "ftl.mapping_zone_bytes": 8 << 20,
        },
        only=["page", "zone"],
    )
    assert g.effective_page_bytes == 8192
    assert g.zone_bytes == 8 << 20
    assert g.block_bytes is None
    assert g.parallel_units is None
    curves = g.curves()
    # The page: aligned and shifted writes; the zone: B against distance.
    assert len(curves) == 3
    with pytest.raises(ValueError, match="only takes"):
        nandlab.probe("sim:", only=["cache"])
