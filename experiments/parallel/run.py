"""The parallel sim-engine on nandlab: what gangs, chips and queue depth buy.

1. ``qd``: queue-depth scaling. 4 KiB random reads (read_fraction 0.999 on a prefilled device),
   random writes (steady state: prefill + 2 passes of warm-up) and a 70/30 read/write mix, at
   queue depth 1, 2, 4, ..., 256 on 1, 2, 4, 8 and 16 dies (1 = 1 gang x 1 chip, 2 = 2 x 1,
   4 = 2 x 2, 8 = 4 x 2, 16 = 4 x 4; one plane; ``generic`` timing; 256 blocks of 64 pages
   per die, utilization 0.8). IOPS and mean/p99 latency against queue depth; the QD-256 IOPS
   against the analytic bound min(dies / (R + x), gangs / x) for reads and the work bound
   (die and bus time per request, from the measured cleaning) for writes and the mix. A small
   diagnostic (``qd_write_diag``) looks at what keeps saturated steady-state writes below that
   bound: the cleaning floor ``ftl.gc_free_blocks_min`` (default: the logs one victim can copy
   into + the planes, so 1 + 1 = 2 on 1 die and 1 + 16 = 17 on 16 dies), allocation, and an
   erased device that never cleans.
2. ``gc``: foreground vs background cleaning on a bursty trace generated here (MQSim ASCII, 4 KiB
   random writes with 20 % reads in bursts, a trickle of reads in the idle gaps; written to
   ``data/``, which git ignores), replayed at its timestamps on 2 gangs x 2 chips at
   utilization 0.85 (one unmeasured replay first, for steady state).
3. ``trace``: the MSR Cambridge hm_0 excerpt (../shared/traces, referenced, not copied) on
   2 gangs x 2 chips x 2 planes, on 2 x 2 x 1 and on the same flash as one die, replayed at
   its timestamps and closed-loop at queue depth 32.

Usage: .venv/bin/python experiments/parallel/run.py [--only qd gc trace] [--jobs N] [--quick]
Writes <name>.csv and <name>.png next to this file; RESULTS.md discusses them.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import random
import time
from typing import Any

import pandas as pd

import nandlab
from nandlab import plot

HERE = pathlib.Path(__file__).resolve().parent
DATA = HERE / "data"
SEED = 1

# The generic preset's timing (ns); command_ns is 0.
PRESET = {p["name"]: p for p in nandlab.presets()}["generic"]
R_NS = PRESET["timing"]["read_page_ns"]
X_NS = PRESET["timing"]["transfer_page_ns"]
P_NS = PRESET["timing"]["program_page_ns"]
E_NS = PRESET["timing"]["erase_block_ns"]
assert PRESET["timing"]["command_ns"] == 0

# Parallel units -> (gangs, chips per channel).
SHAPES = {1: (1, 1), 2: (2, 1), 4: (2, 2), 8: (4, 2), 16: (4, 4)}
BLOCKS_PER_DIE = 256
PAGES_PER_BLOCK = 64
UTILIZATION = 0.8
MIXES = {"read": 0.999, "write": 0.0, "mix70/30": 0.7}

# ../shared/traces beside the repository (referenced, never copied: see its SOURCE.md).
TRACES = HERE.parents[2] / "shared" / "traces"
MSR_TRACE = TRACES / "msr-cambridge-hm0-excerpt" / "msr-cambridge1-sample.csv"


def shared_legend(fig: Any, axes: Any, title: str | None = None) -> None:
    """One legend under the panels instead of one per panel (they hide bars)."""
    handles, labels = axes[0].get_legend_handles_labels()
    for ax in axes:
        if ax.get_legend() is not None:
            ax.get_legend().remove()
    fig.legend(handles, labels, loc="outside lower center",
               ncol=len(labels) if len(labels) <= 5 else 3, frameon=False,
               title=title)


FINE = ("ratio", "utilization", "amplification", "parallelism")


def rounded(df: pd.DataFrame) -> pd.DataFrame:
    """Floats to 2 decimals (IOPS, MB/s, µs), ratios and utilizations to 4: the CSVs hold the
    figures RESULTS.md quotes."""
    out = df.copy()
    for c in out.columns:
        if pd.api.types.is_float_dtype(out[c]):
            out[c] = out[c].round(4 if any(f in c for f in FINE) else 2)
    return out


def save(df: pd.DataFrame, name: str) -> None:
    nandlab.write_csv(rounded(df), HERE / f"{name}.csv")
    print(f"wrote {name}.csv ({len(df)} rows)")


def show(df: pd.DataFrame) -> None:
    print(df.to_string(index=False, float_format=lambda v: f"{v:.4g}"))


def device(units: int) -> dict[str, Any]:
    gangs, chips = SHAPES[units]
    return {
        "device.preset": "generic",
        "device.gangs": gangs,
        "device.chips_per_channel": chips,
        "device.planes_per_die": 1,
        "device.blocks": BLOCKS_PER_DIE * units,
        "device.pages_per_block": PAGES_PER_BLOCK,
        "device.utilization": UTILIZATION,
    }


def logical_pages(cfg: dict[str, Any]) -> int:
    return int(nandlab.resolve_config(cfg)["derived"]["logical_pages"])


def mix_workload(mix: str, logical: int, quick: bool) -> dict[str, Any]:
    """Run lengths: `passes` counts page writes, so a read run of ~N reads (0.999: ~999 reads
    per write) has N / 1000 writes."""
    fraction = MIXES[mix]
    w: dict[str, Any] = {"workload.kind": "uniform", "workload.read_fraction": fraction,
                         "workload.request_bytes": 4096, "run.seed": SEED}
    if mix == "read":
        reads = 20_000 if quick else 100_000
        w.update({"workload.warmup_passes": 0,
                  "workload.passes": round(reads / 1000 / logical, 8)})
    elif mix == "write":
        w.update({"workload.warmup_passes": 1 if quick else 2,
                  "workload.passes": 0.25 if quick else 1})
    else:
        w.update({"workload.warmup_passes": 1 if quick else 2,
                  "workload.passes": 0.1 if quick else 0.5})
    return w


def read_bound(units: int) -> float:
    gangs, _ = SHAPES[units]
    return min(units / (R_NS + X_NS), gangs / X_NS) * 1e9


def work_bound(units: int, reads: float, writes: float, copies: float, erases: float
               ) -> tuple[float, float]:
    """Requests per second if every die (and every bus) were busy all the time with this run's
    work: host reads (R + x on a die, x on the bus), host programs (x + P; x), cleaner copies
    (a read and a program: R + 2x + P; 2x) and erases (E). Returns (die bound, bus bound)."""
    gangs, _ = SHAPES[units]
    requests = reads + writes
    die_ns = (reads * (R_NS + X_NS) + writes * (X_NS + P_NS)
              + copies * (R_NS + 2 * X_NS + P_NS) + erases * E_NS) / requests
    bus_ns = (reads * X_NS + writes * X_NS + copies * 2 * X_NS) / requests
    return units / die_ns * 1e9, gangs / bus_ns * 1e9


def mean_of(cell: Any) -> float:
    values = json.loads(cell) if isinstance(cell, str) else list(cell)
    return sum(values) / len(values) if values else float("nan")


def tidy(raw: pd.DataFrame) -> pd.DataFrame:
    out = pd.DataFrame({
        "units": raw["units"],
        "gangs": raw["device.gangs"],
        "chips_per_channel": raw["device.chips_per_channel"],
        "queue_depth": raw["workload.queue_depth"],
        "iops": raw["iops"],
        "host_mb_per_s": raw["host_mb_per_s"],
        "read_mean_us": raw["read_latency_ns.mean"] / 1e3,
        "read_p99_us": raw["read_latency_ns.p99"] / 1e3,
        "read_queue_mean_us": raw["read_queue_ns.mean"] / 1e3,
        "write_mean_us": raw["write_latency_ns.mean"] / 1e3,
        "write_p99_us": raw["write_latency_ns.p99"] / 1e3,
        "write_queue_mean_us": raw["write_queue_ns.mean"] / 1e3,
        "host_read_requests": raw["host_read_requests"],
        "host_write_requests": raw["host_write_requests"],
        "write_amplification": raw["write_amplification"],
        "erases": raw["erases"],
        "gc_copied_pages": raw["gc_copied_pages"],
        "parallelism_mean": raw["parallelism_mean"],
        "unit_utilization_mean": raw["unit_utilization"].map(mean_of),
        "channel_utilization_mean": raw["channel_utilization"].map(mean_of),
        "sim_time_ns": raw["sim_time_ns"],
    })
    # A read-only run's latency summaries are empty (count 0): no figure rather than 0.
    for side in ("read", "write"):
        none = raw[f"host_{side}_requests"] == 0
        for c in (f"{side}_mean_us", f"{side}_p99_us", f"{side}_queue_mean_us"):
            out.loc[none, c] = float("nan")
    return out


def qd(jobs: int, quick: bool) -> None:
    """Section 1: IOPS and latency against queue depth, per mix and unit count."""
    units_list = [1, 4, 16] if quick else list(SHAPES)
    depths = [1, 4, 32, 256] if quick else [2 ** i for i in range(9)]
    frames = []
    for mix in MIXES:
        points = []
        for units in units_list:
            dev = device(units)
            w = mix_workload(mix, logical_pages(dev), quick)
            for depth in depths:
                points.append({**dev, **w, "workload.queue_depth": depth})
        raw = nandlab.sweep_points({}, points, jobs=jobs, progress=True)
        raw["units"] = [p["device.blocks"] // BLOCKS_PER_DIE for p in points]
        frames.append(tidy(raw).assign(mix=mix))
    df = pd.concat(frames, ignore_index=True)
    df.insert(0, "mix", df.pop("mix"))
    save(df, "qd_scaling")
    show(df[["mix", "units", "queue_depth", "iops", "read_mean_us", "read_p99_us",
             "write_mean_us", "write_p99_us", "write_amplification", "parallelism_mean"]])

    # The saturated point against the bounds.
    top = df[df["queue_depth"] == max(depths)]
    rows = []
    for _, r in top.iterrows():
        die_b, bus_b = work_bound(int(r["units"]), r["host_read_requests"],
                                  r["host_write_requests"], r["gc_copied_pages"], r["erases"])
        row = {"mix": r["mix"], "units": int(r["units"]), "gangs": int(r["gangs"]),
               "queue_depth": int(r["queue_depth"]), "iops": r["iops"],
               "work_bound_die_iops": die_b, "work_bound_bus_iops": bus_b,
               "work_bound_iops": min(die_b, bus_b),
               "ratio_to_work_bound": r["iops"] / min(die_b, bus_b),
               "write_amplification": r["write_amplification"],
               "unit_utilization_mean": r["unit_utilization_mean"],
               "channel_utilization_mean": r["channel_utilization_mean"]}
        if r["mix"] == "read":
            row["analytic_read_bound_iops"] = read_bound(int(r["units"]))
            row["ratio_to_analytic_read_bound"] = r["iops"] / row["analytic_read_bound_iops"]
        rows.append(row)
    bound = pd.DataFrame(rows)
    save(bound, "qd_bound")
    show(bound)

    for metric, name, ylabel in [("iops", "qd_iops", "IOPS"),
                                 ("p99", "qd_p99", "p99 latency (µs)"),
                                 ("mean", "qd_mean", "mean latency (µs)")]:
        from matplotlib.figure import Figure
        fig = Figure(figsize=(15, 4.3), layout="constrained")
        axes = fig.subplots(1, 3)
        for ax, mix in zip(axes, MIXES):
            part = df[df["mix"] == mix].copy()
            part["dies"] = part["units"].astype(str)
            if metric == "iops":
                y = "iops"
            else:
                side = "read" if mix != "write" else "write"
                y = f"{side}_{metric}_us"
            plot.lines(part, "queue_depth", y, hue="dies", ax=ax, logy=True,
                       title=f"{mix}: {ylabel if metric == 'iops' else side + ' ' + ylabel}",
                       ylabel=ylabel if metric == "iops" else f"{side} {ylabel}")
            ax.set_xscale("log", base=2)
            if metric == "iops" and mix == "read":
                for units in units_list:
                    ax.axhline(read_bound(units), color="grey", lw=0.6, ls=":")
                ax.set_title("read: IOPS (dotted: min(dies/(R+x), gangs/x))")
        shared_legend(fig, axes, title="dies")
        fig.savefig(HERE / f"{name}.png", dpi=120)
        print(f"wrote {name}.png")

    if not quick:
        qd_write_diag(jobs)


def qd_write_diag(jobs: int) -> None:
    """What keeps saturated steady-state writes below the work bound: the same QD-256 random
    write on 16 dies with the default cleaning floor (ftl.gc_free_blocks_min = the logs one
    victim can copy into + the planes: 1 + 16 = 17 here, 1 + 1 = 2 on 1 die), with a larger
    floor, with round-robin allocation and on an erased device (no cleaning at all); 1 die for
    reference. The resolved floor of every run is in the CSV."""
    rows = []
    variants: list[tuple[int, str, dict[str, Any]]] = [
        (1, "default (gc_free_blocks_min = 1 log + 1 plane)", {}),
        (16, "default (gc_free_blocks_min = 1 log + 16 planes)", {}),
        (16, "gc_free_blocks_min 32", {"ftl.gc_free_blocks_min": 32}),
        (16, "gc_free_blocks_min 64", {"ftl.gc_free_blocks_min": 64}),
        (16, "allocation round-robin", {"ftl.allocation": "round-robin"}),
        (16, "erased device, no cleaning", {"workload.prefill": False,
                                            "workload.warmup_passes": 0,
                                            "workload.passes": 0.5}),
    ]
    points = []
    for units, _, extra in variants:
        dev = device(units)
        w = mix_workload("write", logical_pages(dev), False)
        points.append({**dev, **w, "workload.queue_depth": 256, **extra})
    floors = [nandlab.resolve_config(p)["ftl"]["gc_free_blocks_min"] for p in points]
    raw = nandlab.sweep_points({}, points, jobs=jobs, progress=True)
    for (units, label, _), floor, (_, r) in zip(variants, floors, raw.iterrows()):
        die_b, bus_b = work_bound(units, 0, r["host_write_requests"], r["gc_copied_pages"],
                                  r["erases"])
        util = json.loads(r["unit_utilization"]) if isinstance(r["unit_utilization"], str) \
            else list(r["unit_utilization"])
        rows.append({"units": units, "variant": label, "gc_free_blocks_min": floor,
                     "iops": r["iops"],
                     "work_bound_iops": min(die_b, bus_b),
                     "ratio_to_work_bound": r["iops"] / min(die_b, bus_b),
                     "write_amplification": r["write_amplification"],
                     "erases": r["erases"], "parallelism_mean": r["parallelism_mean"],
                     "unit_utilization_min": min(util), "unit_utilization_max": max(util),
                     "write_p99_us": r["write_latency_ns.p99"] / 1e3,
                     "write_max_us": r["write_latency_ns.max"] / 1e3})
    diag = pd.DataFrame(rows)
    save(diag, "qd_write_diag")
    show(diag)


# --- Section 2: foreground vs background cleaning on a bursty trace -------------------------

GC_DEVICE = {
    "device.preset": "generic",
    "device.gangs": 2,
    "device.chips_per_channel": 2,
    "device.blocks": 4 * BLOCKS_PER_DIE,
    "device.pages_per_block": PAGES_PER_BLOCK,
    "device.utilization": 0.85,
}
BURST = {"bursts": 100, "writes_per_burst": 1024, "write_rate_per_s": 12_000,
         "burst_read_fraction": 0.2, "gap_ms": 500, "idle_read_rate_per_s": 200}


def bursty_trace(path: pathlib.Path, logical: int, bursts: int, seed: int = SEED) -> dict:
    """MQSim ASCII (`arrival_ns device lba_sectors size_sectors type`, 0 = write, 1 = read):
    `bursts` bursts of Poisson arrivals — 4 KiB random writes at `write_rate_per_s` with reads
    mixed in (`burst_read_fraction` of the burst's requests) — each followed by an idle gap of
    `gap_ms` holding only Poisson reads at `idle_read_rate_per_s`. Uniform addresses over the
    logical pages."""
    rng = random.Random(seed)
    b = BURST
    rate = b["write_rate_per_s"] / (1 - b["burst_read_fraction"])
    per_burst = round(b["writes_per_burst"] / (1 - b["burst_read_fraction"]))
    t = 0.0
    lines = []
    writes = reads = 0
    for _ in range(bursts):
        for _ in range(per_burst):
            t += rng.expovariate(rate) * 1e9
            is_read = rng.random() < b["burst_read_fraction"]
            writes += not is_read
            reads += is_read
            lines.append(f"{int(t)} 0 {rng.randrange(logical) * 8} 8 {int(is_read)}")
        end = t + b["gap_ms"] * 1e6
        while True:
            t += rng.expovariate(b["idle_read_rate_per_s"]) * 1e9
            if t >= end:
                t = end
                break
            reads += 1
            lines.append(f"{int(t)} 0 {rng.randrange(logical) * 8} 8 1")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return {"requests": len(lines), "writes": writes, "reads": reads, "span_s": t / 1e9}


def gc(jobs: int, quick: bool) -> None:
    """Section 2: ftl.gc_mode foreground vs background on the bursty trace."""
    logical = logical_pages(GC_DEVICE)
    bursts = 25 if quick else BURST["bursts"]
    path = DATA / "bursty.trace"
    info = bursty_trace(path, logical, bursts)
    print(f"bursty trace: {path} {info}, logical pages {logical}")
    base = {**GC_DEVICE, "workload.kind": "trace", "workload.path": str(path),
            "workload.format": "mqsim", "workload.trace_timing": "trace",
            "workload.warmup_passes": 1, "workload.passes": 1, "run.seed": SEED}
    variants = [
        ("foreground", {"ftl.gc_mode": "foreground"}),
        ("foreground, read-priority", {"ftl.gc_mode": "foreground",
                                       "ftl.scheduler": "read-priority"}),
        ("background (default threshold)", {"ftl.gc_mode": "background"}),
        ("background, 20 free blocks", {"ftl.gc_mode": "background",
                                        "ftl.gc_background_free_blocks": 20}),
        ("background, 40 free blocks", {"ftl.gc_mode": "background",
                                        "ftl.gc_background_free_blocks": 40}),
        ("background, 40, read-priority", {"ftl.gc_mode": "background",
                                           "ftl.gc_background_free_blocks": 40,
                                           "ftl.scheduler": "read-priority"}),
    ]
    raw = nandlab.sweep_points(base, [v for _, v in variants], jobs=jobs, progress=True)
    # The resolved background threshold of each run (the default is derived from the device).
    thresholds = []
    for _, v in variants:
        cfg = nandlab.resolve_config({**base, **v})
        thresholds.append(cfg["ftl"]["gc_background_free_blocks"])
    rows = []
    for (label, v), threshold, (_, r) in zip(variants, thresholds, raw.iterrows()):
        row: dict[str, Any] = {"variant": label, "gc_mode": v["ftl.gc_mode"],
                               "gc_background_free_blocks": threshold,
                               "scheduler": v.get("ftl.scheduler", "fifo")}
        for side in ("write", "read"):
            for s in ("mean", "p50", "p90", "p99", "p999", "max"):
                row[f"{side}_{s}_us"] = r[f"{side}_latency_ns.{s}"] / 1e3
            row[f"{side}_queue_mean_us"] = r[f"{side}_queue_ns.mean"] / 1e3
        row.update({"erases": r["erases"], "gc_copied_pages": r["gc_copied_pages"],
                    "write_amplification": r["write_amplification"], "iops": r["iops"],
                    "host_write_requests": r["host_write_requests"],
                    "host_read_requests": r["host_read_requests"],
                    "unit_utilization_mean": mean_of(r["unit_utilization"]),
                    "sim_time_ns": r["sim_time_ns"]})
        rows.append(row)
    df = pd.DataFrame(rows)
    df["gc_background_free_blocks"] = df["gc_background_free_blocks"].astype("Int64")
    save(df, "gc_bursty")
    show(df[["variant", "gc_background_free_blocks", "write_mean_us", "write_p99_us",
             "write_max_us", "read_mean_us", "read_p99_us", "read_max_us", "erases",
             "write_amplification", "iops"]])

    from matplotlib.figure import Figure
    fig = Figure(figsize=(14, 4.6), layout="constrained")
    axes = fig.subplots(1, 2)
    for ax, side in zip(axes, ("write", "read")):
        long = df.melt(id_vars=["variant"],
                       value_vars=[f"{side}_{s}_us" for s in ("p50", "p90", "p99", "p999")],
                       var_name="percentile", value_name="latency_us")
        long["percentile"] = long["percentile"].str.split("_").str[1]
        plot.bars(long, "percentile", "latency_us", hue="variant", ax=ax, logy=True,
                  title=f"{side} latency percentiles, bursty trace (2 x 2 dies, u = 0.85)",
                  ylabel=f"{side} latency (µs)")
    shared_legend(fig, axes)
    fig.savefig(HERE / "gc_bursty.png", dpi=120)
    print("wrote gc_bursty.png")


# --- Section 3: a real trace -----------------------------------------------------------------

TRACE_SHAPES = [
    ("1 die (1x1x1)", {"device.gangs": 1, "device.chips_per_channel": 1,
                       "device.planes_per_die": 1}),
    ("4 dies (2x2x1)", {"device.gangs": 2, "device.chips_per_channel": 2,
                        "device.planes_per_die": 1}),
    ("4 dies x 2 planes (2x2x2)", {"device.gangs": 2, "device.chips_per_channel": 2,
                                   "device.planes_per_die": 2}),
]


def trace(jobs: int, quick: bool) -> None:
    """Section 3: MSR Cambridge hm_0 (1,000 requests) on 2 x 2 x 2 vs the same flash as one die,
    open loop (trace timestamps) and closed loop at queue depth 32."""
    if not MSR_TRACE.exists():
        print(f"trace: SKIPPED, {MSR_TRACE} is missing (see ../shared/traces/*/SOURCE.md)")
        return
    base = {"device.preset": "generic", "device.blocks": 256,
            "device.pages_per_block": PAGES_PER_BLOCK, "device.utilization": UTILIZATION,
            "workload.kind": "trace", "workload.path": str(MSR_TRACE), "workload.format": "msr",
            "workload.fit": "compact", "run.seed": SEED}
    timings = [("trace", {"workload.trace_timing": "trace"}),
               ("closed QD32", {"workload.trace_timing": "closed", "workload.queue_depth": 32})]
    points, labels = [], []
    for shape, hw in TRACE_SHAPES:
        for timing, t in timings:
            points.append({**hw, **t})
            labels.append((shape, timing))
    raw = nandlab.sweep_points(base, points, jobs=jobs, progress=True)
    rows = []
    for (shape, timing), (_, r) in zip(labels, raw.iterrows()):
        util = json.loads(r["unit_utilization"]) if isinstance(r["unit_utilization"], str) \
            else list(r["unit_utilization"])
        rows.append({
            "device": shape, "timing": timing,
            "dies": len(util),
            "iops": r["iops"], "host_mb_per_s": r["host_mb_per_s"],
            "read_mean_us": r["read_latency_ns.mean"] / 1e3,
            "read_p99_us": r["read_latency_ns.p99"] / 1e3,
            "read_max_us": r["read_latency_ns.max"] / 1e3,
            "write_mean_us": r["write_latency_ns.mean"] / 1e3,
            "write_p99_us": r["write_latency_ns.p99"] / 1e3,
            "write_max_us": r["write_latency_ns.max"] / 1e3,
            "read_queue_mean_us": r["read_queue_ns.mean"] / 1e3,
            "write_queue_mean_us": r["write_queue_ns.mean"] / 1e3,
            "parallelism_mean": r["parallelism_mean"],
            "unit_utilization": " ".join(f"{u:.4f}" for u in util),
            "channel_utilization": " ".join(
                f"{u:.4f}" for u in (json.loads(r["channel_utilization"])
                                     if isinstance(r["channel_utilization"], str)
                                     else r["channel_utilization"])),
            "host_read_requests": r["host_read_requests"],
            "host_write_requests": r["host_write_requests"],
            "flash_read_pages": r["flash_read_pages"],
            "flash_program_pages": r["flash_program_pages"],
            "erases": r["erases"],
            "sim_time_ns": r["sim_time_ns"],
            "trace": str(MSR_TRACE),
        })
    df = pd.DataFrame(rows)
    save(df, "trace_msr_hm0")
    show(df[["device", "timing", "iops", "read_mean_us", "read_p99_us", "write_mean_us",
             "write_p99_us", "parallelism_mean", "unit_utilization"]])

    from matplotlib.figure import Figure
    fig = Figure(figsize=(15, 4.3), layout="constrained")
    axes = fig.subplots(1, 3)
    long = df.melt(id_vars=["device", "timing"],
                   value_vars=["read_mean_us", "read_p99_us", "write_mean_us", "write_p99_us"],
                   var_name="latency", value_name="us")
    long["latency"] = long["latency"].str.replace("_us", "").str.replace("_", " ")
    for ax, timing in zip(axes[:2], ("trace", "closed QD32")):
        plot.bars(long[long["timing"] == timing], "latency", "us", hue="device", ax=ax,
                  logy=True, ylabel="latency (µs)",
                  title=f"MSR hm_0, {'trace timing (open loop)' if timing == 'trace' else timing}")
    plot.bars(df[df["timing"] == "closed QD32"], "device", "iops", ax=axes[2],
              title="MSR hm_0, closed loop QD32: IOPS", xlabel="", ylabel="IOPS")
    axes[2].tick_params(axis="x", labelsize=8)
    shared_legend(fig, axes[:2])
    fig.savefig(HERE / "trace_msr_hm0.png", dpi=120)
    print("wrote trace_msr_hm0.png")


SECTIONS = {"qd": qd, "gc": gc, "trace": trace}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="*", choices=list(SECTIONS), default=list(SECTIONS))
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--quick", action="store_true",
                    help="fewer unit counts and depths, shorter runs (smoke test)")
    args = ap.parse_args()
    print(nandlab.build_version)
    start = time.time()
    for name in args.only:
        t0 = time.time()
        SECTIONS[name](args.jobs, args.quick)
        print(f"{name}: {time.time() - t0:.1f} s")
    print(f"total: {time.time() - start:.1f} s")


if __name__ == "__main__":
    main()
