"""Sweep overhead: what a sweep costs beyond its points' simulations, and how `--jobs 2` scales
on 2 cores.

    .venv/bin/python experiments/speed/sweep_overhead.py [POINTS]     (from the repository root)

POINTS (default 16) hot/cold points of about 0.4 s each (8,192 blocks x 64 pages, 12 passes,
seeds 1..POINTS) run by `nandlab.sweep` with jobs 1 and jobs 2, each into a fresh result store
(`out=`, the usual way a study runs), alternating, best of 2. Overhead per point = (sweep wall x
jobs - the points' own simulation wall, `wall_seconds`) / points, as a share of the mean point.
"""

import sys
import tempfile
import time

import nandlab

BASE = {
    "workload.kind": "hotcold",
    "device.blocks": 8192,
    "device.pages_per_block": 64,
    "workload.passes": 12,
}


def one(points: int, jobs: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as out:
        t0 = time.perf_counter()
        df = nandlab.sweep(BASE, {"ftl.cleaning": ["greedy"]}, seeds=range(1, points + 1),
                           jobs=jobs, out=out)
        wall = time.perf_counter() - t0
    assert len(df) == points and df["error"].isna().all() if "error" in df else len(df) == points
    return wall, float(df["wall_seconds"].sum())


def main() -> None:
    points = int(sys.argv[1]) if len(sys.argv) > 1 else 16
    best: dict[int, tuple[float, float]] = {}
    for _ in range(2):
        for jobs in (1, 2):
            wall, sim = one(points, jobs)
            if jobs not in best or wall < best[jobs][0]:
                best[jobs] = (wall, sim)
    print(f"nandlab {nandlab.build_version}; {points} points, best of 2 alternating rounds")
    print(f"{'jobs':>4} {'sweep wall s':>13} {'points sim s':>13} {'mean point s':>13} "
          f"{'overhead/point s':>17} {'share of point':>15}")
    for jobs, (wall, sim) in sorted(best.items()):
        mean = sim / points
        overhead = (wall * jobs - sim) / points
        print(f"{jobs:>4} {wall:>13.2f} {sim:>13.2f} {mean:>13.3f} {overhead:>17.4f} "
              f"{overhead / mean:>14.1%}")
    print(f"jobs 2 speed-up over jobs 1: {best[1][0] / best[2][0]:.3f}x")


if __name__ == "__main__":
    main()
