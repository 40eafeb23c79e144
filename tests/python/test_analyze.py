"""`nandlab.analyze`: the benchmarks paper's trace characterisation through the Python front, on a
hand-made MSR trace whose figures are worked out by hand, and on the real traces beside the
repository (skipped when ../shared is absent)."""

from __future__ import annotations

from pathlib import Path

import pytest

import nandlab

SHARED = Path(__file__).resolve().parents[3] / "shared" / "traces"

# System-call traces (their SOURCE.md): no block addresses to analyse.
NOT_BLOCK_TRACES = {"android-mobigen"}

TICKS_PER_MS = 10_000  # MSR timestamps are 100 ns ticks


def msr(tmp_path: Path, rows: list[tuple[int, str, int, int]]) -> Path:
    """An MSR CSV from (time in ms, type, offset, size) rows."""
    lines = [
        f"{128166385295514663 + t * TICKS_PER_MS},hm,0,{kind},{off},{size},100"
        for t, kind, off, size in rows
    ]
    p = tmp_path / "t.csv"
    p.write_text("\n".join(lines) + "\n")
    return p


def test_hand_worked_msr_trace(tmp_path: Path) -> None:
    path = msr(
        tmp_path,
        [
            (0, "Write", 0, 4096),
            (1, "Write", 4096, 4096),  # sequential
            (2, "Write", 0, 8192),  # rewrites 8 KiB after 2 ms and 1 ms
            (3, "Read", 0, 4096),
            (5000, "Write", 8192, 8192),  # sequential (previous write ended at 8192)
        ],
    )
    a = nandlab.analyze(path)
    assert a.data["format"] == "msr"
    assert a.write_bytes == 24576
    assert a.read_bytes == 4096
    assert a.rewrite_ratio == pytest.approx(8192 / 24576)
    assert a.sequential_ratio == pytest.approx(2 / 4)
    assert a.alignment_ratio == 1.0
    assert a.request_bytes_typical == 8192  # 4096 and 8192 twice each: the longer
    assert a.data["short_rewrite_ratio"] == 1.0
    assert a.data["short_rewrite_share"] == pytest.approx(8192 / 24576)
    assert a.suite == "buffer", a.suite_reason
    t = a.table()
    assert t.loc[str(path), "write_requests"] == 4
    lba = a.samples("lba")
    assert list(lba["offset_bytes"]) == [0, 4096, 0, 8192]
    life = a.samples("life_cycle")
    assert sorted(life["life_ns"]) == [1_000_000, 2_000_000]
    assert list(a.samples("seek")["seek_bytes"]) == [0, -8192, 0]


def test_options_change_the_figures(tmp_path: Path) -> None:
    path = msr(tmp_path, [(0, "Write", 0, 4096), (1, "Write", 4096, 2048)])
    assert nandlab.analyze(path).alignment_ratio == 0.5
    assert nandlab.analyze(path, alignment_bytes=2048).alignment_ratio == 1.0
    assert nandlab.analyze(path, sequential_window=0).sequential_ratio == 0.0
    with pytest.raises(ValueError, match="alignment_bytes"):
        nandlab.analyze(path, alignment_bytes=0)


def test_errors_name_the_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("128166385295514663,hm,0,Write,0,4096,100\nnot,a,trace\n")
    with pytest.raises(nandlab.TraceError) as e:
        nandlab.analyze(bad, format="msr")
    assert e.value.line == 2
    with pytest.raises(nandlab.TraceError, match="unknown trace format"):
        nandlab.analyze(bad, format="nope")
    with pytest.raises(nandlab.TraceError):
        nandlab.analyze(tmp_path / "missing.csv")


def test_plot_draws_the_three_views(tmp_path: Path) -> None:
    path = msr(tmp_path, [(t, "Write", (t % 7) * 4096, 4096) for t in range(200)])
    fig = nandlab.analyze(path).plot(tmp_path / "views.png")
    assert len(fig.axes) == 3
    assert (tmp_path / "views.png").stat().st_size > 10_000


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/traces is not beside the repository")
def test_every_shared_trace_is_analysed() -> None:
    found = 0
    for source in sorted(SHARED.iterdir()):
        if source.name in NOT_BLOCK_TRACES:
            continue
        for f in sorted(source.iterdir()):
            if f.name == "SOURCE.md" or f.is_dir():
                continue
            a = nandlab.analyze(f)
            found += 1
            assert a.data["requests"] > 0, f
            assert 0.0 <= a.rewrite_ratio <= 1.0
            assert 0.0 <= a.sequential_ratio <= 1.0
            assert a.suite in {"transfer", "mapping", "gc", "buffer", "none"}
    assert found >= 5


@pytest.mark.parametrize("name", nandlab.SUITES)
def test_suite_traces_land_on_their_targets_and_suites(tmp_path: Path, name: str) -> None:
    a = nandlab.suite(name, tmp_path / f"{name}.csv", write_bytes=16 << 20, seed=3)
    targets = a.data["targets"]
    for key in ("rewrite_ratio", "sequential_ratio", "alignment_ratio"):
        assert abs(a.data[key] - targets[key]) <= 0.02, (name, key, a.data[key])
    assert a.suite == name
    # The trace on disk reads back the same through the analyser.
    again = nandlab.analyze(tmp_path / f"{name}.csv")
    assert again.rewrite_ratio == a.rewrite_ratio


def test_suite_parameters_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown suite"):
        nandlab.suite("nope", tmp_path / "x.csv")
    with pytest.raises(ValueError, match="rewrite_ratio"):
        nandlab.suite("gc", tmp_path / "x.csv", rewrite_ratio=2)
    a = nandlab.suite(
        "mapping", tmp_path / "m.csv", write_bytes=4 << 20, request_bytes=[(8192, 1), (65536, 1)]
    )
    assert a.data["suite_params"]["request_bytes"] == [[8192, 1.0], [65536, 1.0]]
