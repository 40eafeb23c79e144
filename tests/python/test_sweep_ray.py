"""`nandlab.sweep(..., backend="ray")` on a local Ray cluster (``ray.init(num_cpus=2)``).

Goal: the Ray backend gives the local backend's rows bit for bit (wall-clock metrics aside),
ships traces to its workers, retries a point whose worker was killed, records a failing point
with its error, and shares the resumable store.
Method: one two-CPU cluster for the module; small devices, and ~1.5 s points where a process
is killed mid-point. Skipped, with the reason, only where Ray cannot be imported (`.ci/run` and
`make python` install it)."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import nandlab

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'nandlab[ray]')")

SLOW = {"device.blocks": 16384, "device.pages_per_block": 64}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    # The workers inherit this environment: their trace cache goes where the test can see it.
    cache = tmp_path_factory.mktemp("trace-cache")
    os.environ["NANDLAB_TRACE_CACHE"] = str(cache)
    ray.init(num_cpus=2, include_dashboard=False, logging_level="WARNING")
    try:
        yield cache
    finally:
        ray.shutdown()
        del os.environ["NANDLAB_TRACE_CACHE"]


def drop_wall(df: pd.DataFrame) -> pd.DataFrame:
    return df.drop(columns=[c for c in nandlab.WALL_CLOCK_METRICS if c in df.columns])


def test_ray_rows_equal_local_rows(cluster: Path, small: dict[str, Any]) -> None:
    grid = {"ftl.cleaning": ["greedy", "cat"], "ftl.placement": ["none", "dac"]}
    base = {**small, "workload.kind": "hotcold"}
    local = nandlab.sweep(base, grid, seeds=[1, 2], jobs=2)
    on_ray = nandlab.sweep(base, grid, seeds=[1, 2], backend="ray")
    assert len(on_ray) == 8
    pd.testing.assert_frame_equal(drop_wall(on_ray), drop_wall(local))


def test_traces_are_shipped_and_results_name_the_drivers_path(
    cluster: Path, msr_trace: Path
) -> None:
    base = {"workload.kind": "trace", "workload.path": str(msr_trace)}
    grid = {"ftl.cleaning": ["greedy", "cat"]}
    local = nandlab.sweep(base, grid)
    on_ray = nandlab.sweep(base, grid, backend="ray")
    pd.testing.assert_frame_equal(drop_wall(on_ray), drop_wall(local))
    assert set(on_ray["workload.path"]) == {str(msr_trace)}
    copies = list(cluster.glob(f"*/{msr_trace.name}"))
    assert len(copies) == 1, "one copy per trace content and node"
    assert copies[0].read_bytes() == msr_trace.read_bytes()


def test_a_failing_point_is_recorded_not_retried(cluster: Path, tmp_path: Path,
                                                 small: dict[str, Any]) -> None:
    with pytest.warns(nandlab.SweepWarning):
        df = nandlab.sweep(small, {"ftl.cleaning": ["lru", "greedy"]}, backend="ray",
                           out=tmp_path / "s")
    assert list(df["status"]) == ["failed", "ok"]
    assert "unknown value \"lru\"" in df["error"][0]


def _ray_task_processes() -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if cmdline.startswith(b"ray::run_point"):
                pids.append(int(entry))
    return pids


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to find Ray's workers")
def test_a_worker_killed_mid_point_is_retried(cluster: Path, tmp_path: Path) -> None:
    killed: list[int] = []

    def kill_a_task() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not killed:
            running = _ray_task_processes()
            if running:
                time.sleep(0.3)
                os.kill(running[0], signal.SIGKILL)
                killed.append(running[0])
            time.sleep(0.02)

    killer = threading.Thread(target=kill_a_task)
    killer.start()
    grid = {"ftl.cleaning": ["greedy", "cat"], "device.utilization": [0.7, 0.8]}
    df = nandlab.sweep(SLOW, grid, backend="ray", out=tmp_path / "s")
    killer.join()
    assert killed, "no Ray task process was found to kill"
    assert list(df["status"]) == ["ok"] * 4
    alone = nandlab.run(SLOW, set={"ftl.cleaning": "greedy", "device.utilization": 0.7})
    assert df["erases"][0] == alone.metrics["erases"]
