"""Sweep overhead: what a sweep costs beyond its points' simulations, and how `--jobs 2` scales
on 2 cores.

    .venv/bin/python experiments/speed/sweep_overhead.py [SMALL LARGE]   (from the repository root)

Hot/cold points of about 0.55 s each (8,192 blocks x 64 pages, 12 passes, seeds 1..n) run by
`nandlab.sweep` into a fresh result store (`out=`, the usual way a study runs), with jobs 1 and
jobs 2, for a SMALL (default 8) and a LARGE (default 24) number of points, alternating, best of
2. Overhead = sweep wall x jobs - the points' own simulation wall (`wall_seconds`). Its growth
from SMALL to LARGE points, per added point, is the per-point overhead (store writes and
compaction, shipping results, the native call around the simulation); what remains at SMALL is
the per-sweep cost (imports, starting the worker processes).
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
    assert list(df["status"]) == ["ok"] * points
    return wall, float(df["wall_seconds"].sum())


def main() -> None:
    small, large = (int(a) for a in sys.argv[1:3]) if len(sys.argv) > 2 else (8, 24)
    best: dict[tuple[int, int], tuple[float, float]] = {}
    for _ in range(2):
        for points in (small, large):
            for jobs in (1, 2):
                wall, sim = one(points, jobs)
                key = (points, jobs)
                if key not in best or wall < best[key][0]:
                    best[key] = (wall, sim)
    print(f"nandlab {nandlab.build_version}; best of 2 alternating rounds")
    print(f"{'points':>6} {'jobs':>4} {'sweep wall s':>13} {'points sim s':>13} {'overhead s':>11}")
    for (points, jobs), (wall, sim) in sorted(best.items()):
        print(f"{points:>6} {jobs:>4} {wall:>13.2f} {sim:>13.2f} {wall * jobs - sim:>11.3f}")
    for jobs in (1, 2):
        (ws, ss), (wl, sl) = best[(small, jobs)], best[(large, jobs)]
        per_point = ((wl * jobs - sl) - (ws * jobs - ss)) / (large - small)
        mean_point = sl / large
        fixed = (ws * jobs - ss) - per_point * small
        print(f"jobs {jobs}: per-point overhead {per_point * 1e3:.1f} ms "
              f"({per_point / mean_point:.1%} of a {mean_point:.3f} s point); "
              f"per-sweep {fixed:.2f} s")
    for points in (small, large):
        print(f"{points} points: jobs 2 is {best[(points, 1)][0] / best[(points, 2)][0]:.3f}x "
              "jobs 1")


if __name__ == "__main__":
    main()
