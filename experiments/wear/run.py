"""The lazy wear-leveling paper (Chang, Huang, "A Low-Cost Wear-Leveling Algorithm for Block-Mapping
Solid-State Disks", LCTES'11; docs/PAPERS.md) reproduced on nandlab: lazy wear leveling against
static wear leveling (Chang et al.'s SW Leveler) and none.

- Figure 8: BAST, SAST and FAST × none / lazy / static: erase-count std dev and mean (the mean
  increase over none is the wear-leveling overhead), plus max/mean and extra write
  amplification.
- Figure 12: std dev and overhead ratio g (wear-leveling erases ÷ all erases) for Δ = 2..64,
  with the model g(Δ) = K/(2Δ) fitted.
- Figure 13: the adaptive Δ trajectory (sessions of 1,000 wear-leveling erases, λ = −0.1).
- Figure 14: std dev over total data written, lazy and static, on every trace.
- Figure 15: the final erase-count distribution.
- Lifetime: host bytes written until the first block wears out and until the device is unusable,
  with a small endurance so the runs reach it.

Setup (the paper's, scaled): 4 KB pages, 512 KB blocks, 2.5 % over-provisioning (utilization
1/1.025), FAST by default, Δ = TH = 16, each trace replayed 100 times. The paper's notebook,
desktop and multimedia traces are not public; the real traces in ../shared/traces stand in.
The logical size is each trace's footprint (nandlab sizes the device from the trace and fits
its addresses with `workload.fit = compact`, so a sparse trace becomes a dense volume); the
flash is 2.5 % larger. Tracks: `cloudphysics` (a VMware virtual disk, 1.2× its volume written
per replay, the closest to the notebook's 1.35×) is the default.

Usage: .venv/bin/python experiments/wear/run.py [--only NAME ...] [--jobs N] [--quick]
Writes <name>.csv and <name>.png next to this file; RESULTS.md discusses them.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

import nandlab

HERE = pathlib.Path(__file__).resolve().parent
TRACES = HERE.parents[2] / "shared" / "traces"
TRACE_FILES = {
    "cloudphysics": "cloudphysics-vscsi-excerpt/cloudPhysicsIO.csv.gz",
    "postmark": "postmark-disksim-ssd/ssd-postmark-aligned2.trace.gz",
    "iozone": "iozone-disksim-ssd/ssd-iozone-aligned2-100K.trace.gz",
    "tencent": "tencent-cbs-excerpt/cloud_storage-sample.csv.gz",
}
KINDS = ["none", "lazy", "static"]
FTLS = ["bast", "sast", "fast"]
# The paper's two system configurations of Figures 12 and 13.
CONFIGURATIONS = [("fast", "C1 (FAST)"), ("sast", "C2 (SAST)")]


def base(trace: str, replays: int) -> dict[str, Any]:
    path = TRACES / TRACE_FILES[trace]
    if not path.exists():
        sys.exit(f"{path} is missing: the wear experiments need ../shared/traces")
    return {
        "workload.kind": "trace",
        "workload.path": str(path),
        "workload.trace_timing": "closed",
        "workload.passes": replays,
        "device.page_size_bytes": 4096,
        "device.pages_per_block": 128,
        "device.utilization": 1 / 1.025,
        "ftl.kind": "fast",
    }


def save(df: pd.DataFrame, name: str) -> None:
    nandlab.write_csv(df, HERE / f"{name}.csv")
    print(f"wrote {name}.csv ({len(df)} rows)")


def fig8(jobs: int, replays: int) -> None:
    """Figure 8: every FTL × every leveler on the default trace and on postmark."""
    frames = []
    for trace in ["cloudphysics", "postmark"]:
        df = nandlab.sweep(base(trace, replays), {"ftl.kind": FTLS, "wear.kind": KINDS}, jobs=jobs)
        df.insert(0, "trace", trace)
        frames.append(df)
    raw = pd.concat(frames, ignore_index=True)
    rows = []
    for (trace, ftl), g in raw.groupby(["trace", "ftl.kind"], sort=False):
        none_mean = float(g[g["wear.kind"] == "none"]["wear_mean"].iloc[0])
        for _, r in g.iterrows():
            rows.append({
                "trace": trace,
                "ftl": ftl,
                "wear": r["wear.kind"],
                "wear_stddev": round(r["wear_stddev"], 2),
                "wear_mean": round(r["wear_mean"], 2),
                "max_over_mean": round(r["wear_max"] / r["wear_mean"], 3),
                "overhead_percent": round(100 * (r["wear_mean"] / none_mean - 1), 2),
                "wl_erases_percent": round(100 * r["wear_leveling_erases"] / r["erases"], 2),
                "extra_wa": round(r["wear_leveling_copies"] / r["host_write_pages"], 4),
                "write_amplification": round(r["write_amplification"], 3),
            })
    table = pd.DataFrame(rows)
    save(table, "fig8")
    for trace in table["trace"].unique():
        sub = table[table["trace"] == trace]
        fig, axes = plt.subplots(1, 2, figsize=(10, 4))
        for ax, metric, label in [(axes[0], "wear_mean", "average erase count"),
                                  (axes[1], "wear_stddev", "standard deviation")]:
            pivot = sub.pivot(index="ftl", columns="wear", values=metric).loc[FTLS, KINDS]
            pivot.plot.bar(ax=ax, rot=0)
            ax.set_ylabel(label)
            ax.set_xlabel("")
        fig.suptitle(f"Figure 8 on {trace} ({replays} replays)")
        fig.tight_layout()
        fig.savefig(HERE / f"fig8_{trace}.png", dpi=110)
        plt.close(fig)


def fig12(jobs: int, replays: int) -> None:
    """Figure 12: Δ sweep under FAST (C1) and SAST (C2)."""
    deltas = [2, 4, 8, 16, 32, 64]
    frames = []
    for ftl, name in CONFIGURATIONS:
        b = base("cloudphysics", replays) | {"ftl.kind": ftl, "wear.kind": "lazy"}
        df = nandlab.sweep(b, {"wear.delta": deltas}, jobs=jobs)
        df.insert(0, "configuration", name)
        frames.append(df)
    raw = pd.concat(frames, ignore_index=True)
    raw["overhead_ratio_percent"] = 100 * raw["wear_leveling_erases"] / raw["erases"]
    out = raw[["configuration", "wear.delta", "wear_stddev", "wear_mean",
               "overhead_ratio_percent"]].copy()
    # K of g(Δ) = K / (2Δ), least squares on 1/(2Δ).
    fits = {}
    for name, g in out.groupby("configuration", sort=False):
        x = 1 / (2 * g["wear.delta"])
        k = float((x * g["overhead_ratio_percent"]).sum() / (x * x).sum())
        fits[name] = k
    out["model_K"] = out["configuration"].map(fits)
    save(out, "fig12")
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for name, g in out.groupby("configuration", sort=False):
        axes[0].plot(g["wear.delta"], g["wear_stddev"], marker="o", label=name)
        line = axes[1].plot(g["wear.delta"], g["overhead_ratio_percent"], marker="o", label=name)
        xs = pd.Series(range(2, 65))
        axes[1].plot(xs, fits[name] / (2 * xs), ls="--", color=line[0].get_color(),
                     label=f"g(Δ) with K={fits[name]:.2f}")
    axes[0].set_ylabel("standard deviation")
    axes[1].set_ylabel("overhead ratio (%)")
    for ax in axes:
        ax.set_xlabel("Δ")
        ax.legend()
    fig.tight_layout()
    fig.savefig(HERE / "fig12_delta.png", dpi=110)
    plt.close(fig)


def fig13(replays: int) -> None:
    """Figure 13: adaptive Δ, sessions of 1,000 wear-leveling erases, λ = −0.1."""
    rows = []
    fig, ax = plt.subplots(figsize=(6, 4))
    for ftl, name in CONFIGURATIONS:
        cfg = base("cloudphysics", replays) | {
            "ftl.kind": ftl, "wear.kind": "lazy", "wear.adaptive": True,
        }
        r = nandlab.run(cfg)
        history = r.metrics["wear_leveling"]["delta_history"]
        g = 100 * r.metrics["wear_leveling_erases"] / r.metrics["erases"]
        for i, d in enumerate(history):
            rows.append({"configuration": name, "session": i, "delta": round(d, 3)})
        rows.append({"configuration": name, "session": "final",
                     "delta": round(r.metrics["wear_leveling"]["delta"], 3),
                     "final_stddev": round(r.metrics["wear_stddev"], 2),
                     "final_overhead_ratio_percent": round(g, 3)})
        ax.plot(range(len(history)), history, marker=".", label=name)
    save(pd.DataFrame(rows), "fig13")
    ax.set_xlabel("session (1,000 wear-leveling erases)")
    ax.set_ylabel("Δ")
    ax.legend()
    fig.tight_layout()
    fig.savefig(HERE / "fig13_adaptive_delta.png", dpi=110)
    plt.close(fig)


def fig14_15(replays: int) -> None:
    """Figure 14 (std dev over data written, every trace) and Figure 15 (final distribution)."""
    rows, hist = [], []
    for trace in TRACE_FILES:
        for kind in ["lazy", "static", "none"]:
            cfg = base(trace, replays) | {"wear.kind": kind}
            # About 50 samples over the run: one replay (and the prefill) measures the bytes
            # a replay writes.
            once = nandlab.run(base(trace, 1)).metrics["host_write_bytes"]
            cfg["run.sample_every_bytes"] = max(1 << 20, once * replays // 50)
            r = nandlab.run(cfg)
            for s in r.wear_samples:
                rows.append({"trace": trace, "wear": kind,
                             "host_written_gb": s.host_write_bytes / 1e9,
                             "wear_stddev": round(s.wear_stddev, 3),
                             "wear_mean": round(s.wear_mean, 3)})
            if trace == "cloudphysics":
                h = r.wear_histogram
                h.insert(0, "wear", kind)
                hist.append(h)
    df = pd.DataFrame(rows)
    save(df, "fig14")
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for ax, kind in zip(axes, ["lazy", "static"]):
        for trace, g in df[df["wear"] == kind].groupby("trace", sort=False):
            ax.plot(g["host_written_gb"], g["wear_stddev"], label=trace)
        ax.set_title(f"{kind} wear leveling")
        ax.set_xlabel("total data written (GB)")
        ax.legend()
    axes[0].set_ylabel("standard deviation")
    fig.tight_layout()
    fig.savefig(HERE / "fig14_stability.png", dpi=110)
    plt.close(fig)
    hdf = pd.concat(hist, ignore_index=True)
    save(hdf, "fig15")
    fig, ax = plt.subplots(figsize=(7, 4))
    for kind, g in hdf.groupby("wear", sort=False):
        ax.plot(g["erase_count"], g["blocks"], label=kind, lw=1)
    ax.set_xlabel("erase count")
    ax.set_ylabel("blocks")
    ax.set_title("Figure 15: final erase-count distribution (cloudphysics, FAST)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(HERE / "fig15_distribution.png", dpi=110)
    plt.close(fig)


def lifetime(jobs: int) -> None:
    """Host bytes until the first block wears out and until the device is unusable, with 150
    rated cycles per block so the runs get there (the run stops at unusable)."""
    frames = []
    for ftl in ["fast", "page"]:
        b = base("cloudphysics", 1000) | {"ftl.kind": ftl, "wear.endurance_cycles": 150}
        df = nandlab.sweep(b, {"wear.kind": KINDS}, jobs=jobs)
        frames.append(df)
    raw = pd.concat(frames, ignore_index=True)
    out = raw[["ftl.kind", "wear.kind", "lifetime.first_wear_out_host_bytes",
               "lifetime.unusable_host_bytes", "lifetime.retired_blocks"]].copy()
    out.columns = ["ftl", "wear", "first_wear_out_gb", "unusable_gb", "retired_blocks"]
    out["first_wear_out_gb"] = out["first_wear_out_gb"] / 1e9
    out["unusable_gb"] = out["unusable_gb"] / 1e9
    for col in ["first_wear_out", "unusable"]:
        none = out[out["wear"] == "none"].set_index("ftl")[f"{col}_gb"]
        out[f"{col}_ratio"] = (out[f"{col}_gb"] / out["ftl"].map(none)).round(3)
    save(out.round(3), "lifetime")


EXPERIMENTS = ["fig8", "fig12", "fig13", "fig14", "lifetime"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", nargs="*", choices=EXPERIMENTS)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="10 replays instead of 100")
    args = ap.parse_args()
    replays = 10 if args.quick else 100
    for name in args.only or EXPERIMENTS:
        t = time.time()
        if name == "fig8":
            fig8(args.jobs, replays)
        elif name == "fig12":
            fig12(args.jobs, replays)
        elif name == "fig13":
            fig13(replays)
        elif name == "fig14":
            fig14_15(replays)
        else:
            lifetime(args.jobs)
        print(f"{name}: {time.time() - t:.0f} s")


if __name__ == "__main__":
    main()
