"""The block-recycling paper (Lee et al., "Block recycling schemes and their cost-based
optimization in NAND flash memory based storage system", EMSOFT 2007; docs/PAPERS.md) reproduced
on nandlab.

- Figure 8: the cost per available page of a migration/merge sequence, W(n), against the
  merge-only cost W_merge, at alpha = 0.1 with the paper's MLC times (cost model only).
- Figures 7, 10, 11: the four recycling schemes (merge-only, merge+migration, periodic merge,
  optimization) on a block-mapped FTL with 8 log blocks and `mlc2007` timing, under
  Postmark-like small-file and large-file workloads and embedded-device workloads on a FAT
  volume model (the originals are not public: see `workload.kind = "postmark" | "embedded"`).
  Flash time is broken down into read, program, copy and erase.
- Figure 9: the periodic-merge scheme's flash time for periods 20..120.

Usage: .venv/bin/python experiments/migration/run.py [--only NAME ...] [--jobs N] [--quick]
Writes <name>.csv and <name>.png next to this file; RESULTS.md discusses them.
"""

from __future__ import annotations

import argparse
import pathlib
import time
from typing import Any

import pandas as pd

import nandlab
from nandlab import plot
from nandlab.recycling import optimal_migrations

HERE = pathlib.Path(__file__).resolve().parent
SCHEMES = ["merge-only", "cost-based", "periodic", "optimal"]
SCHEME_LABELS = {
    "merge-only": "merge-only",
    "cost-based": "merge+migration",
    "periodic": "merge+migration (periodic merge)",
    "optimal": "merge+migration (optimization)",
}

# The paper's device: MLC NAND (2 KB pages, 128 pages per block), 8 log blocks, block-mapped
# FTL with one log block per data block. 256 MiB of flash keeps runs short; the FAT volume
# fills the logical space (utilization 0.97: the 8 log blocks plus a merge reserve).
DEVICE: dict[str, Any] = {
    "device.preset": "mlc2007",
    "device.blocks": 1024,
    "device.utilization": 0.97,
    "ftl.kind": "bast",
    "ftl.log_blocks": 8,
}


def workloads(quick: bool) -> dict[str, dict[str, Any]]:
    scale = 0.2 if quick else 1.0
    t = lambda n: max(1, int(n * scale))  # noqa: E731
    return {
        # Postmark "directory/small file": 512-byte files across 50 directories.
        "postmark-small": {
            "workload.kind": "postmark",
            "workload.fs.directories": 50,
            "workload.fs.files": 500,
            "workload.fs.file_bytes_min": 512,
            "workload.fs.file_bytes_max": 512,
            "workload.fs.transactions": t(20_000),
        },
        # Postmark "large file": 1 MB files.
        "postmark-large": {
            "workload.kind": "postmark",
            "workload.fs.directories": 10,
            "workload.fs.files": 40,
            "workload.fs.file_bytes_min": 1 << 20,
            "workload.fs.file_bytes_max": 1 << 20,
            "workload.fs.transactions": t(400),
        },
        # The same with the MS-DOS layout: the data region is not aligned to pages or blocks,
        # so file data is never in place in a log block (no switch merges).
        "postmark-large-unaligned": {
            "workload.kind": "postmark",
            "workload.fs.directories": 10,
            "workload.fs.files": 40,
            "workload.fs.file_bytes_min": 1 << 20,
            "workload.fs.file_bytes_max": 1 << 20,
            "workload.fs.transactions": t(400),
            "workload.fs.data_align_bytes": 512,
        },
        # Embedded devices: small records appended to a few files (FAT and directory sectors
        # rewritten on every record).
        "embedded": {
            "workload.kind": "embedded",
            "workload.fs.transactions": t(50_000),
        },
    }


def save(df: pd.DataFrame, name: str) -> None:
    nandlab.write_csv(df, HERE / f"{name}.csv")
    print(f"wrote {name}.csv ({len(df)} rows)")


def fig8_cost_curve(jobs: int, quick: bool) -> None:
    """W(n) and W_merge per available page at alpha = 0.1, N_p = 128, C_E = 1.5 ms,
    C_cp = 1.128 ms."""
    r = optimal_migrations(alpha=0.1, pages_per_block=128, erase_cost=1.5, copy_cost=1.128,
                           n_max=120)
    df = pd.DataFrame({"n": range(len(r.w)), "W(n)": r.w, "W_merge": r.w_merge})
    save(df, "fig8_cost_curve")
    print(f"n0 = {r.n0}, W(n0) = {r.w_n0:.5f} ms, W_merge = {r.w_merge:.5f} ms, "
          f"ratio = {r.ratio:.4f}, equilibrium p = {r.equilibrium_p}")
    long = df.melt(id_vars="n", var_name="curve", value_name="ms per available page")
    plot.lines(long, "n", "ms per available page", hue="curve",
               title="Figure 8: cost per available page, alpha = 0.1",
               path=HERE / "fig8_cost_curve.png")


def breakdown(df: pd.DataFrame) -> pd.DataFrame:
    """Flash time in seconds by operation, and the change against merge-only."""
    out = pd.DataFrame({
        "workload": df["workload"],
        "scheme": df["ftl.recycling"].map(SCHEME_LABELS),
        "read_s": df["flash_time_ns.read"] / 1e9,
        "program_s": df["flash_time_ns.program"] / 1e9,
        "copy_s": df["flash_time_ns.copy"] / 1e9,
        "erase_s": df["flash_time_ns.erase"] / 1e9,
        "flash_time_s": df["flash_busy_ns"] / 1e9,
        "merges": df["switch_merges.count"] + df["partial_merges.count"]
        + df["full_merges.count"],
        "full_merges": df["full_merges.count"],
        "migrations": df["migrations.count"],
        "mean_pages_per_migration": (df["migrations.copied_pages"]
                                     / df["migrations.count"].where(df["migrations.count"] > 0)),
        "copied_pages": df["gc_copied_pages"],
        "erases": df["erases"],
        "host_write_pages": df["host_write_pages"],
    })
    base = out[out["scheme"] == "merge-only"].set_index("workload")["flash_time_s"]
    out["reduction_vs_merge_only_pct"] = [
        100.0 * (1.0 - t / base[w]) for w, t in zip(out["workload"], out["flash_time_s"])
    ]
    return out


def schemes(jobs: int, quick: bool) -> None:
    """Figures 7, 10, 11: the four schemes on each workload, flash time by operation."""
    frames = []
    for name, w in workloads(quick).items():
        df = nandlab.sweep({**DEVICE, **w}, {"ftl.recycling": SCHEMES}, jobs=jobs)
        df.insert(0, "workload", name)
        frames.append(df)
    raw = pd.concat(frames, ignore_index=True)
    save(raw, "schemes_raw")
    out = breakdown(raw)
    save(out, "schemes")
    print(out[["workload", "scheme", "flash_time_s", "reduction_vs_merge_only_pct",
               "migrations", "mean_pages_per_migration", "merges"]].to_string(index=False))
    for name in workloads(quick):
        part = out[out["workload"] == name].melt(
            id_vars=["scheme"], value_vars=["read_s", "program_s", "copy_s", "erase_s"],
            var_name="operation", value_name="flash time (s)")
        plot.bars(part, "scheme", "flash time (s)", hue="operation",
                  title=f"{name}: flash time by operation", path=HERE / f"schemes_{name}.png")


def fig9_period(jobs: int, quick: bool) -> None:
    """Figure 9: periodic merge for periods 20..120 on the small-file workload, with the
    on-line optimization and merge-only as references."""
    w = workloads(quick)["postmark-small"]
    periods = list(range(20, 121, 10))
    df = nandlab.sweep({**DEVICE, **w, "ftl.recycling": "periodic"},
                       {"ftl.migration_period": periods}, jobs=jobs)
    ref = nandlab.sweep({**DEVICE, **w}, {"ftl.recycling": ["optimal", "merge-only"]},
                        jobs=jobs)
    out = pd.DataFrame({
        "period": df["ftl.migration_period"],
        "flash_time_s": df["flash_busy_ns"] / 1e9,
        "migrations": df["migrations.count"],
        "merges": df["full_merges.count"] + df["partial_merges.count"]
        + df["switch_merges.count"],
    })
    for _, row in ref.iterrows():
        out[f"{row['ftl.recycling']}_s"] = row["flash_busy_ns"] / 1e9
    save(out, "fig9_period")
    print(out.to_string(index=False))
    long = out.melt(id_vars="period", value_vars=["flash_time_s", "optimal_s", "merge-only_s"],
                    var_name="scheme", value_name="flash time (s)")
    plot.lines(long, "period", "flash time (s)", hue="scheme",
               title="Figure 9: periodic merge period sweep (small files)",
               path=HERE / "fig9_period.png")


EXPERIMENTS = {"fig8": fig8_cost_curve, "schemes": schemes, "fig9": fig9_period}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="*", choices=list(EXPERIMENTS), default=list(EXPERIMENTS))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="smaller workloads (smoke test)")
    args = ap.parse_args()
    for name in args.only:
        t0 = time.time()
        EXPERIMENTS[name](args.jobs, args.quick)
        print(f"{name}: {time.time() - t0:.1f} s")


if __name__ == "__main__":
    main()
