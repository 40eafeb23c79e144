"""The sweeps' acceptance run: a 200-point sweep on the local and the Ray backend, and a sweep
killed at about half and resumed.

The grid: 5 cleaning policies × 4 placements × 10 seeds of a hot/cold workload on an 8,192-block
device (about a second per point on one core). Measured on this machine (2 cores):

1. the local backend (2 worker processes) and the Ray backend (a local cluster of 2 CPUs,
   started by the sweep, its start-up included in the time), both storing into a result store:
   wall time of each, and whether their rows are identical (wall-clock metrics aside,
   `nandlab.WALL_CLOCK_METRICS`);
2. for each backend, ``nandlab sweep --out DIR`` killed with SIGKILL (the driver and its
   workers) once about half the points are stored, then the same command again: the points
   the two runs did against one uninterrupted sweep's 200 (the points stored before the kill,
   plus at most those running — ``--jobs`` of them — plus the second run's), and the wall
   times.

Usage: make build python && .venv/bin/python experiments/sweep/run.py [--quick]
(--quick: 2 seeds, 40 points.) Writes results.json and RESULTS.md's figures to stdout; the
report of the Ray sweep's store to sweep.html (`nandlab report`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import pathlib
import signal
import subprocess
import sys
import tempfile
import time
from typing import Any

import pandas as pd

import nandlab

HERE = pathlib.Path(__file__).resolve().parent

BASE = {
    "device.blocks": 8192,
    "device.pages_per_block": 64,
    "workload.kind": "hotcold",
    "workload.passes": 3,
}
GRID = {
    "ftl.cleaning": ["greedy", "cost-benefit", "cat", "fifo", "random-d"],
    "ftl.placement": ["none", "dac", "host-gc", "oracle"],
}
JOBS = 2


def timed_sweep(seeds: list[int], **kwargs: Any) -> tuple[pd.DataFrame, float]:
    started = time.monotonic()
    frame = nandlab.sweep(BASE, GRID, seeds=seeds, jobs=JOBS, **kwargs)
    return frame, time.monotonic() - started


def stored_points(out: pathlib.Path) -> int:
    """Points stored so far, from the Parquet footers alone: polling must not take the CPU
    the sweep's two workers need."""
    import pyarrow.parquet as pq

    total = 0
    for part in out.glob("*.parquet"):
        # A part renamed away by a compaction between the listing and the read is skipped.
        with contextlib.suppress(OSError):
            total += pq.read_metadata(part).num_rows
    return total


def cli(out: pathlib.Path, seeds: list[int], backend: str) -> list[str]:
    args = [sys.executable, "-m", "nandlab", "sweep", "--quiet", "--jobs", str(JOBS)]
    for key, value in BASE.items():
        args += ["--set", f"{key}={value}"]
    for key, values in GRID.items():
        args += ["--grid", f"{key}={','.join(values)}"]
    args += ["--seeds", f"{seeds[0]}-{seeds[-1]}", "--backend", backend, "--out", str(out)]
    return args


def interrupted(seeds: list[int], backend: str, tmp: pathlib.Path) -> dict[str, object]:
    out = tmp / f"store-{backend}"
    total = len(seeds) * len(GRID["ftl.cleaning"]) * len(GRID["ftl.placement"])
    started = time.monotonic()
    first = subprocess.Popen(cli(out, seeds, backend), start_new_session=True,
                             stdout=subprocess.DEVNULL)
    while stored_points(out) < total // 2 and first.poll() is None:
        time.sleep(0.5)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    first_seconds = time.monotonic() - started
    # Ray's processes of the killed driver's cluster: gone with the process group.
    stored = stored_points(out)
    started = time.monotonic()
    second = subprocess.run(cli(out, seeds, backend), capture_output=True, text=True)
    second_seconds = time.monotonic() - started
    if second.returncode != 0:
        raise SystemExit(f"the resumed sweep failed: {second.stderr}")
    final = nandlab.load_sweep(out)
    flat = pd.read_parquet(out / "results.parquet")
    # Points running at the kill: --jobs of them (Ray queues twice the CPUs, but the tasks
    # beyond the CPUs wait without running).
    in_flight = JOBS
    return {
        "backend": backend,
        "points": total,
        "stored_at_kill": stored,
        "in_flight_at_most": in_flight,
        "resumed_points": total - stored,
        "final_points": len(final),
        "duplicates": int(flat["point"].duplicated().sum()),
        "work_ratio_at_most": (stored + in_flight + total - stored) / total,
        "first_seconds": round(first_seconds, 1),
        "second_seconds": round(second_seconds, 1),
        "second_output": second.stdout.strip(),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    seeds = list(range(1, 3 if args.quick else 11))
    results: dict[str, object] = {"version": nandlab.build_version, "base": BASE, "grid": GRID,
                                  "seeds": seeds, "jobs": JOBS, "cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = pathlib.Path(tmp_name)
        # Two rounds, alternating, each sweep into a store of its own: the local backend, Ray
        # starting (and stopping) its own cluster, and Ray on a cluster already running (as
        # with --address auto), whose start-up is timed apart.
        times: dict[str, list[float]] = {"local": [], "ray": [], "ray_warm": [], "ray_init": []}
        frames: dict[str, pd.DataFrame] = {}
        for round_ in range(2):
            for kind in ("local", "ray", "ray_warm"):
                out = tmp / f"{kind}-{round_}"
                if kind == "ray_warm":
                    import ray

                    started = time.monotonic()
                    ray.init(num_cpus=JOBS, include_dashboard=False, logging_level="WARNING")
                    times["ray_init"].append(time.monotonic() - started)
                try:
                    backend = "local" if kind == "local" else "ray"
                    frames[kind], seconds = timed_sweep(seeds, backend=backend, out=out)
                finally:
                    if kind == "ray_warm":
                        ray.shutdown()
                times[kind].append(seconds)
                print(f"round {round_ + 1}, {kind}: {len(frames[kind])} points in {seconds:.1f} s")
        wall = list(nandlab.WALL_CLOCK_METRICS)
        same = all(
            frames[k].drop(columns=wall).equals(frames["local"].drop(columns=wall))
            for k in ("ray", "ray_warm")
        )
        print(f"identical rows (wall-clock metrics aside): {same}")
        nandlab.report(tmp / "ray-1", HERE / "sweep.html",
                       title="200-point sweep on the Ray backend")
        best = {k: min(v) for k, v in times.items()}
        results["seconds"] = {k: [round(x, 1) for x in v] for k, v in times.items()}
        results["ray_over_local"] = round(best["ray"] / best["local"], 3)
        results["ray_warm_over_local"] = round(best["ray_warm"] / best["local"], 3)
        results["identical"] = bool(same)
        print(f"best of 2: local {best['local']:.1f} s, ray {best['ray']:.1f} s "
              f"({results['ray_over_local']}x, cluster start-up included), ray on a running "
              f"cluster {best['ray_warm']:.1f} s ({results['ray_warm_over_local']}x; its "
              f"start-up {best['ray_init']:.1f} s)")
        results["interrupted"] = [interrupted(seeds, b, tmp) for b in ("local", "ray")]
    for r in results["interrupted"]:  # type: ignore[attr-defined]
        print(f"interrupted {r['backend']}: {r['stored_at_kill']} stored at the kill, "
              f"{r['resumed_points']} run on resuming, {r['final_points']} in the end, "
              f"{r['duplicates']} duplicates; work <= {r['work_ratio_at_most']:.3f} x; "
              f"{r['first_seconds']} s + {r['second_seconds']} s")
    (HERE / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    print(f"version {nandlab.build_version}")


if __name__ == "__main__":
    main()
