"""`nandlab.sweep`: grid order, columns, seeds, worker processes, error reporting, Parquet.
Method: 2×2 grids on a small device, compared against single runs."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import nandlab

GRID = {"ftl.cleaning": ["greedy", "cat"], "device.utilization": [0.7, 0.8]}
EXPECTED_POINTS = [("greedy", 0.7), ("greedy", 0.8), ("cat", 0.7), ("cat", 0.8)]


def drop_wall(df: pd.DataFrame) -> pd.DataFrame:
    return df.drop(columns=list(nandlab.WALL_CLOCK_METRICS))


def test_two_jobs_grid_order_and_columns(small: dict[str, Any]) -> None:
    df = nandlab.sweep(small, GRID, jobs=2)
    assert len(df) == 4
    assert list(df.columns[:2]) == ["ftl.cleaning", "device.utilization"]
    assert list(zip(df["ftl.cleaning"], df["device.utilization"])) == EXPECTED_POINTS
    frame_columns = nandlab.run(small).to_frame().columns
    assert set(df.columns) == set(frame_columns)
    assert len(df.columns) == len(frame_columns), "grid keys are not repeated"
    for column in ("erases", "write_amplification", "seed", "version", "ftl.regions"):
        assert column in df.columns
    # Each row is the run of its point.
    for _, row in df.iterrows():
        single = nandlab.run(
            small,
            set={
                "ftl.cleaning": row["ftl.cleaning"],
                "device.utilization": row["device.utilization"],
            },
        )
        assert row["erases"] == single.metrics["erases"]
        assert row["gc_copied_pages"] == single.metrics["gc_copied_pages"]


def test_in_process_equals_workers(small: dict[str, Any]) -> None:
    serial = nandlab.sweep(small, GRID, jobs=1)
    parallel = nandlab.sweep(small, GRID, jobs=2)
    pd.testing.assert_frame_equal(drop_wall(serial), drop_wall(parallel))


def test_seeds_vary_fastest(small: dict[str, Any]) -> None:
    df = nandlab.sweep(
        {**small, "workload.kind": "hotcold"}, {"ftl.cleaning": ["greedy", "cat"]}, seeds=[3, 4]
    )
    assert list(df.columns[:2]) == ["ftl.cleaning", "run.seed"]
    assert list(zip(df["ftl.cleaning"], df["run.seed"])) == [
        ("greedy", 3),
        ("greedy", 4),
        ("cat", 3),
        ("cat", 4),
    ]
    assert list(df["seed"]) == [3, 4, 3, 4]
    assert df.loc[0, "erases"] != df.loc[1, "erases"]
    with pytest.raises(ValueError, match=r"run\.seed"):
        nandlab.sweep(small, {"run.seed": [1]}, seeds=[1])


def test_toml_base(tmp_path: Path) -> None:
    path = tmp_path / "base.toml"
    path.write_text("[device]\nblocks = 64\npages_per_block = 16\n")
    df = nandlab.sweep(path, {"ftl.cleaning": ["greedy", "fifo"]}, jobs=2)
    assert list(df["ftl.cleaning"]) == ["greedy", "fifo"]
    assert (df["device.blocks"] == 64).all()


def test_error_names_the_point(small: dict[str, Any]) -> None:
    for jobs in (1, 2):
        with pytest.raises(nandlab.ConfigError, match=r"lru") as info:
            nandlab.sweep(small, {"ftl.cleaning": ["greedy", "lru"]}, jobs=jobs)
        message = str(info.value)
        assert "sweep point #1" in message
        assert "ftl.cleaning='lru'" in message
        assert info.value.key == "ftl.cleaning"


def test_bad_arguments(small: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="jobs"):
        nandlab.sweep(small, GRID, jobs=0)
    with pytest.raises(TypeError, match="sequence"):
        nandlab.sweep(small, {"ftl.cleaning": "greedy"})
    empty = nandlab.sweep(small, {"ftl.cleaning": []})
    assert len(empty) == 0
    assert list(empty.columns) == ["ftl.cleaning"]


@pytest.mark.skipif(importlib.util.find_spec("pyarrow") is None, reason="needs pyarrow")
def test_parquet_round_trip(tmp_path: Path, small: dict[str, Any]) -> None:
    df = nandlab.sweep(small, GRID)
    path = tmp_path / "sweep.parquet"
    nandlab.write_parquet(df, path)
    back = pd.read_parquet(path)
    pd.testing.assert_frame_equal(back, df, check_dtype=False)
    assert list(back.columns) == list(df.columns)


def test_sweep_points_runs_each_point(small: dict[str, Any]) -> None:
    points = [
        {"ftl.cleaning": "greedy"},
        {"ftl.cleaning": "cat", "device.utilization": 0.7},
        {"buffer.kind": "fab", "buffer.size_bytes": 65536},
    ]
    df = nandlab.sweep_points(small, points, jobs=2)
    assert len(df) == 3
    assert list(df["ftl.cleaning"][:2]) == ["greedy", "cat"]
    assert df["buffer.kind"].tolist() == ["none", "none", "fab"]
    for i, point in enumerate(points):
        single = nandlab.run(small, set=point)
        assert df["erases"][i] == single.metrics["erases"]
    assert df["buffer.write_hits"][2] == nandlab.run(small, set=points[2]).metrics["buffer"][
        "write_hits"
    ]
    with pytest.raises(TypeError, match="mapping"):
        nandlab.sweep_points(small, ["ftl.cleaning=cat"])  # type: ignore[list-item]


# ---------------------------------------------------------------- stores, workers

SLOW = {"device.blocks": 16384, "device.pages_per_block": 64}
"""A point that runs for about 1.5 s: long enough to kill something in the middle of it."""


def test_store_returns_the_in_memory_rows_and_skips_stored_points(
    tmp_path: Path, small: dict[str, Any]
) -> None:
    memory = nandlab.sweep(small, GRID)
    stored = nandlab.sweep(small, GRID, jobs=2, out=tmp_path / "s")
    assert list(stored["status"]) == ["ok"] * 4
    assert stored["error"].isna().all()
    pd.testing.assert_frame_equal(
        drop_wall(stored.drop(columns=["status", "error"])), drop_wall(memory)
    )
    pd.testing.assert_frame_equal(nandlab.load_sweep(tmp_path / "s"), stored)
    # Complete: compacted into one file in grid order.
    assert sorted(p.name for p in (tmp_path / "s").iterdir()) == [
        "manifest.json",
        "results.parquet",
    ]
    flat = pd.read_parquet(tmp_path / "s" / "results.parquet")
    assert list(flat["point"]) == [0, 1, 2, 3]
    # Run again: nothing runs (the wall-clock fields are the stored ones).
    again = nandlab.sweep(small, GRID, jobs=2, out=tmp_path / "s")
    pd.testing.assert_frame_equal(again, stored)


def test_a_failing_point_is_stored_with_its_error(tmp_path: Path, small: dict[str, Any]) -> None:
    grid = {"ftl.cleaning": ["greedy", "lru"]}
    with pytest.warns(nandlab.SweepWarning, match="1 of 2 sweep points failed"):
        df = nandlab.sweep(small, grid, out=tmp_path / "s")
    assert list(df["status"]) == ["ok", "failed"]
    assert "unknown value \"lru\"" in df["error"][1]
    assert pd.isna(df["erases"][1])
    assert df["erases"][0] > 0
    stored = pd.read_parquet(tmp_path / "s" / "results.parquet")
    assert stored["error_type"][1] == "ConfigError"
    assert '"key": "ftl.cleaning"' in stored["error_attributes"][1]
    # Not run again (deterministic), unless asked.
    with pytest.warns(nandlab.SweepWarning):
        nandlab.sweep(small, grid, out=tmp_path / "s")
    with pytest.warns(nandlab.SweepWarning):
        df2 = nandlab.sweep(small, grid, out=tmp_path / "s", retry_failed=True)
    assert list(df2["status"]) == ["ok", "failed"]


def test_a_store_of_another_sweep_is_refused_naming_the_difference(
    tmp_path: Path, small: dict[str, Any]
) -> None:
    out = tmp_path / "s"
    nandlab.sweep(small, GRID, out=out)
    changed = r"grid 'ftl.cleaning' was \['greedy', 'cat'\], now \['greedy'\]"
    with pytest.raises(nandlab.SweepStoreError, match=changed):
        nandlab.sweep(small, {**GRID, "ftl.cleaning": ["greedy"]}, out=out)
    with pytest.raises(nandlab.SweepStoreError, match=r"seeds were None, now \[1\]"):
        nandlab.sweep(small, GRID, out=out, seeds=[1])
    with pytest.raises(nandlab.SweepStoreError, match=r"device.blocks: 64 -> 128"):
        nandlab.sweep({**small, "device.blocks": 128}, GRID, out=out)
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["version"] = "nandlab 0.0.1 (0123456789ab)"
    (out / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(nandlab.SweepStoreError, match=r"run by 'nandlab 0.0.1 \(0123456789ab\)'"):
        nandlab.sweep(small, GRID, out=out)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(nandlab.SweepStoreError, match="not a nandlab sweep store"):
        nandlab.sweep(small, GRID, out=tmp_path / "other")


def test_a_buffer_size_in_the_base_serves_every_buffer_kind(small: dict[str, Any]) -> None:
    df = nandlab.sweep(
        {**small, "buffer.size_bytes": 65536}, {"buffer.kind": ["none", "lru", "fab"]}
    )
    assert list(df["buffer.kind"]) == ["none", "lru", "fab"]
    assert pd.isna(df["buffer.size_bytes"][0])
    assert list(df["buffer.size_bytes"][1:]) == [65536, 65536]
    assert df["buffer.write_hits"][0] == 0
    assert df["buffer.write_hits"][2] > 0


def test_progress_shows_points_failures_rate_and_eta(
    small: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    nandlab.sweep(small, GRID, progress=True)
    err = capsys.readouterr().err
    assert "nandlab sweep: 1/4 points" in err
    assert "ETA" in err
    assert "nandlab sweep: 4/4 points" in err
    assert "points/s" in err


def _run_script(tmp_path: Path, body: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(body))
    return subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )


def test_a_script_without_the_main_guard_is_told_what_to_add(
    tmp_path: Path, small: dict[str, Any]
) -> None:
    body = f"""
        import nandlab
        nandlab.sweep({small!r}, {{"ftl.cleaning": ["greedy", "cat"]}}, jobs=2)
        print("done")
    """
    r = _run_script(tmp_path, body)
    assert r.returncode == 1
    assert "script.py (line 3)" in r.stderr
    assert 'if __name__ == "__main__":' in r.stderr
    assert "BrokenProcessPool" not in r.stderr
    guard = 'if __name__ == "__main__":\n            nandlab.sweep('
    guarded = body.replace("nandlab.sweep(", guard)
    r = _run_script(tmp_path, guarded)
    assert r.returncode == 0, r.stderr
    assert "done" in r.stdout


def _children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry))
    return out


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to find worker processes")
def test_a_worker_killed_mid_point_is_replaced_and_its_point_run_again(tmp_path: Path) -> None:
    killed: list[int] = []

    def kill_a_worker() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            # The pool's workers: children of this process running the spawn bootstrap.
            workers = [
                p
                for p in _children(os.getpid())
                if b"spawn_main" in Path(f"/proc/{p}/cmdline").read_bytes()
            ]
            if len(workers) >= 2:
                time.sleep(0.5)  # well into their first points
                os.kill(workers[0], signal.SIGKILL)
                killed.append(workers[0])
                return
            time.sleep(0.05)

    killer = threading.Thread(target=kill_a_worker)
    killer.start()
    grid = {"ftl.cleaning": ["greedy", "cat"], "device.utilization": [0.7, 0.8]}
    df = nandlab.sweep(SLOW, grid, jobs=2, out=tmp_path / "s")
    killer.join()
    assert killed, "no worker was found to kill"
    assert list(df["status"]) == ["ok"] * 4
    alone = nandlab.run(SLOW, set={"ftl.cleaning": "cat", "device.utilization": 0.8})
    assert df["erases"][3] == alone.metrics["erases"]


def test_a_killed_sweep_resumes_with_exactly_the_missing_points(tmp_path: Path) -> None:
    out = tmp_path / "s"
    grid = {"ftl.cleaning": ["greedy", "cat", "fifo"], "device.utilization": [0.7, 0.75, 0.8]}
    body = f"""
        import nandlab
        if __name__ == "__main__":
            nandlab.sweep({SLOW!r}, {grid!r}, jobs=2, out={str(out)!r})
    """
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(body))
    driver = subprocess.Popen([sys.executable, str(script)], cwd=tmp_path,
                              start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while len(list(out.glob("part-*.parquet"))) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        # kill -9 of the whole sweep: its driver and its workers.
        os.killpg(driver.pid, signal.SIGKILL)
    finally:
        driver.wait()
    first = len(nandlab.load_sweep(out))
    assert 2 <= first < 9, first
    df = nandlab.sweep(SLOW, grid, jobs=2, out=out)
    assert list(df["status"]) == ["ok"] * 9
    assert list(zip(df["ftl.cleaning"], df["device.utilization"])) == [
        (c, u) for c in grid["ftl.cleaning"] for u in grid["device.utilization"]
    ]
    flat = pd.read_parquet(out / "results.parquet")
    assert sorted(flat["point"]) == list(range(9)), "every point once"


def test_a_batch_whose_first_row_failed_keeps_the_results_after_it(tmp_path: Path) -> None:
    # A failed point's row has no result column; written first in a batch (a parallel sweep
    # whose failing point finished first), it once dropped the ok points' results.
    import pandas as pd

    from nandlab import _store

    rows = [
        {_store.POINT: 0, _store.STATUS: "failed", _store.ERROR: "unknown value"},
        {_store.POINT: 1, _store.STATUS: "ok", _store.RESULT_JSON: '{"metrics": {}}'},
    ]
    _store._write_rows(tmp_path / "part.parquet", rows)
    back = pd.read_parquet(tmp_path / "part.parquet").set_index(_store.POINT)
    assert back.loc[1, _store.RESULT_JSON] == '{"metrics": {}}'
    assert back.loc[0, _store.ERROR] == "unknown value"
