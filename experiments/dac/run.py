"""The DAC paper (Chiang, Lee & Chang, "Using data clustering to improve cleaning performance for
flash memory", 1999; docs/PAPERS.md) reproduced on nandlab: DAC dynamic data clustering with Greedy,
Cost-benefit and CAT cleaning.

The paper's hplajw traces are not public. Each figure is run on synthetic workloads that follow
the paper's own generator (hot/cold "x/y" locality, Poisson arrivals, sequential prefill) and,
where the figure is trace-driven, on the real block traces in ../shared/traces as well.

Usage: .venv/bin/python experiments/dac/run.py [--only NAME ...] [--jobs N] [--quick]
Writes <name>.csv and <name>.png next to this file; RESULTS.md discusses them.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

import pandas as pd

import nandlab
from nandlab import plot

HERE = pathlib.Path(__file__).resolve().parent
TRACES = HERE.parents[2] / "shared" / "traces"
POLICIES = ["greedy", "cost-benefit", "cat"]
METRICS = ["erases", "gc_copied_pages", "cleaning_cost", "wear_stddev", "write_amplification"]

# Trace-driven stand-ins for hplajw: the write-heavy samples with rewrites.
REAL_TRACES = {
    "iozone": "iozone-disksim-ssd/ssd-iozone-aligned2-100K.trace.gz",
    "cloudphysics": "cloudphysics-vscsi-excerpt/cloudPhysicsIO.csv.gz",
}


def save(df: pd.DataFrame, name: str) -> None:
    nandlab.write_csv(df, HERE / f"{name}.csv")
    print(f"wrote {name}.csv ({len(df)} rows)")


def regions_sweep(jobs: int, quick: bool) -> None:
    """Figure 7: erases, copies, cleaning cost and wear vs number of DAC regions (1 = off).

    The paper: 283 MB flash, 128 KB segments, 1 KB blocks, 85 % prefill, hplajw traces. Here the
    same geometry with hot/cold 90/10 writes (hplajw's 71 % metadata writes give similar skew),
    about 5 passes written after 2 warm-up passes, as hplajw wrote 1331 MB onto 278 MB."""
    base = {
        "device.page_size_bytes": 1024,
        "device.pages_per_block": 128,
        "device.blocks": 566 if quick else 2264,
        "device.utilization": 0.85,
        "workload.kind": "hotcold",
        "workload.hot_access_fraction": 0.9,
        "workload.hot_data_fraction": 0.1,
        "workload.warmup_passes": 2,
        "workload.passes": 5,
        "ftl.placement": "dac",
    }
    regions = [1, 2, 3, 4, 6, 8, 12, 16]
    df = nandlab.sweep(base, {"ftl.cleaning": POLICIES, "ftl.regions": regions}, jobs=jobs)
    df.insert(0, "workload", "hotcold 90/10")
    frames = [df]
    for name, rel in REAL_TRACES.items():
        path = TRACES / rel
        if not path.exists():
            print(f"note: {path} missing; skipping the {name} trace", file=sys.stderr)
            continue
        tb = {
            "workload.kind": "trace",
            "workload.path": str(path),
            "device.utilization": 0.85,
            "workload.passes": 1 if quick else 3,
            "ftl.placement": "dac",
        }
        t = nandlab.sweep(tb, {"ftl.cleaning": POLICIES, "ftl.regions": [1, 2, 4, 8, 16]},
                          jobs=jobs)
        t.insert(0, "workload", name)
        frames.append(t)
    out = pd.concat(frames, ignore_index=True)
    save(out, "regions")
    syn = out[out["workload"] == "hotcold 90/10"]
    for metric in ["erases", "gc_copied_pages", "cleaning_cost", "wear_stddev"]:
        plot.lines(syn, x="ftl.regions", y=metric, hue="ftl.cleaning",
                   path=HERE / f"regions_{metric}.png")
    for name in REAL_TRACES:
        sub = out[out["workload"] == name]
        if len(sub):
            plot.lines(sub, x="ftl.regions", y="cleaning_cost", hue="ftl.cleaning",
                       path=HERE / f"regions_cleaning_cost_{name}.png")


def utilization_sweep(jobs: int, quick: bool) -> None:
    """Figure 9: cleaning cost vs flash utilization, DAC off (1 region) and on (4 regions)."""
    base = {
        "device.page_size_bytes": 1024,
        "device.pages_per_block": 128,
        "device.blocks": 566 if quick else 1132,
        "workload.kind": "hotcold",
        "workload.warmup_passes": 2,
        "workload.passes": 4,
        "ftl.placement": "dac",
    }
    util = [0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95]
    df = nandlab.sweep(base, {"device.utilization": util, "ftl.cleaning": POLICIES,
                              "ftl.regions": [1, 4]}, jobs=jobs)
    df["dac"] = df["ftl.regions"].map({1: "off", 4: "on"})
    df["series"] = df["ftl.cleaning"] + " " + df["dac"]
    save(df, "utilization")
    plot.lines(df, x="device.utilization", y="cleaning_cost", hue="series",
               path=HERE / "utilization_cleaning_cost.png")


def locality_sweep(jobs: int, quick: bool) -> None:
    """Figure 11: cleaning cost vs locality x/y; 24 MB flash, 128 KB blocks, 4 KB pages,
    85 % prefill, 192 MB written in 4 KB units with Poisson arrivals over 14 days; DAC off, on
    (4 regions, no threshold) and on with an 84-minute threshold. Averaged over seeds because a
    192-block device is noisy."""
    base = {
        "device.preset": "nor1999",
        "device.utilization": 0.85,
        "workload.kind": "hotcold",
        "workload.prefill": True,
        "workload.warmup_passes": 0,
        "workload.passes": 192 / (24 * 0.85),
        "workload.arrival": "poisson",
        "workload.duration_s": 14 * 86400,
        "ftl.placement": "dac",
    }
    localities = [(0.5, 0.5), (0.6, 0.4), (0.7, 0.3), (0.8, 0.2), (0.9, 0.1), (0.95, 0.05)]
    rows = []
    seeds = [1, 2] if quick else [1, 2, 3, 4, 5]
    for mode, extra in [("off", {"ftl.regions": 1}), ("on", {"ftl.regions": 4}),
                        ("on, 84 min", {"ftl.regions": 4, "ftl.time_threshold_s": 84 * 60})]:
        for x, y in localities:
            b = dict(base, **extra)
            b["workload.hot_access_fraction"] = x
            b["workload.hot_data_fraction"] = y
            df = nandlab.sweep(b, {"ftl.cleaning": POLICIES}, seeds=seeds, jobs=jobs)
            df["dac"] = mode
            df["locality"] = f"{round(x * 100)}/{round(y * 100)}"
            rows.append(df)
    out = pd.concat(rows, ignore_index=True)
    save(out, "locality")
    mean = (out.groupby(["locality", "ftl.cleaning", "dac"], sort=False)[METRICS].mean()
            .reset_index())
    save(mean, "locality_mean")
    for policy in POLICIES:
        sub = mean[mean["ftl.cleaning"] == policy]
        plot.bars(sub, x="locality", y="cleaning_cost", hue="dac",
                  path=HERE / f"locality_cleaning_cost_{policy}.png")


def threshold_sweep(jobs: int, quick: bool) -> None:
    """The time threshold's effect (Figures 8 and 11(b)) at the locality setting's 90/10 point:
    where the threshold sits relative to the hot pages' update interval decides whether it
    helps. With 192 MB over 14 days onto 20.4 MB of data, a hot page (10 % of the data, 90 % of
    the writes) is rewritten about every 4 hours."""
    base = {
        "device.preset": "nor1999",
        "device.utilization": 0.85,
        "workload.kind": "hotcold",
        "workload.warmup_passes": 0,
        "workload.passes": 192 / (24 * 0.85),
        "workload.arrival": "poisson",
        "workload.duration_s": 14 * 86400,
        "ftl.placement": "dac",
        "ftl.regions": 4,
    }
    seeds = [1, 2] if quick else [1, 2, 3, 4, 5]
    frames = []
    for label, minutes in [("none", None), ("30 min", 30), ("84 min", 84), ("4 h", 240),
                           ("8 h", 480), ("16 h", 960), ("2 days", 2880)]:
        b = dict(base)
        if minutes is not None:
            b["ftl.time_threshold_s"] = minutes * 60
        df = nandlab.sweep(b, {"ftl.cleaning": POLICIES}, seeds=seeds, jobs=jobs)
        df["threshold"] = label
        frames.append(df)
    out = pd.concat(frames, ignore_index=True)
    save(out, "threshold")
    mean = (out.groupby(["threshold", "ftl.cleaning"], sort=False)[METRICS].mean()
            .reset_index())
    save(mean, "threshold_mean")
    plot.bars(mean, x="threshold", y="cleaning_cost", hue="ftl.cleaning",
              path=HERE / "threshold_cleaning_cost.png")


def phases_run(jobs: int, quick: bool) -> None:
    """The flash memory server run: 24 MB flash (nor1999 timing), 4 KB pages, 90 % prefill,
    then four 40 MB phases: 90/10, uniform, 90/10, uniform; DAC 4 regions with a 30-minute
    threshold ("On*") and without ("On"), against one region ("Off")."""
    base = {
        "device.preset": "nor1999",
        "device.utilization": 0.9,
        "workload.kind": "phases",
        "workload.warmup_passes": 0,
        "ftl.placement": "dac",
    }
    rows = []
    seeds = [1, 2] if quick else [1, 2, 3, 4, 5]
    for mode, extra in [("Off", {"ftl.regions": 1}), ("On", {"ftl.regions": 4}),
                        ("On*", {"ftl.regions": 4, "ftl.time_threshold_s": 1800})]:
        df = nandlab.sweep(dict(base, **extra), {"ftl.cleaning": POLICIES}, seeds=seeds,
                           jobs=jobs)
        df["dac"] = mode
        rows.append(df)
    out = pd.concat(rows, ignore_index=True)
    out["throughput_kib_per_s"] = out["host_write_bytes"] / 1024 / (out["sim_time_ns"] / 1e9)
    save(out, "phases")
    mean = (out.groupby(["ftl.cleaning", "dac"], sort=False)
            [[*METRICS, "throughput_kib_per_s"]].mean().reset_index())
    save(mean, "phases_mean")
    plot.bars(mean, x="ftl.cleaning", y="erases", hue="dac", path=HERE / "phases_erases.png")
    plot.bars(mean, x="ftl.cleaning", y="throughput_kib_per_s", hue="dac",
              path=HERE / "phases_throughput.png")


EXPERIMENTS = {
    "regions": regions_sweep,
    "utilization": utilization_sweep,
    "locality": locality_sweep,
    "threshold": threshold_sweep,
    "phases": phases_run,
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", choices=sorted(EXPERIMENTS))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="smaller devices, fewer seeds")
    args = ap.parse_args()
    for name in args.only or list(EXPERIMENTS):
        t = time.time()
        print(f"== {name}")
        EXPERIMENTS[name](args.jobs, args.quick)
        print(f"   {time.time() - t:.1f} s")


if __name__ == "__main__":
    main()
