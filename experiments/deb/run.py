"""The LFSS thesis (Chi-Hsun Li, "A Design and Implementation of Log Flash Storage System", NCTU
2004; docs/PAPERS.md) reproduced on nandlab: DEB, dynamic data clustering with an Extra Buffer
Region (battery-backed RAM), against DAC, "DAC with 4 MB" (the RAM as DAC's hottest region) and DEB
without the EBR.

- Table 5.1: Greedy, Cost-benefit and CAT, with and without a 4 MB EBR (10/90 locality, 40 MB
  updated).
- Figure 5.2: erases against reference locality (50/50 ... 10/90), CAT: DAC, DAC with 4 MB,
  DEB.
- Figure 5.3: erases against EBR size (0 ... 8 MB), the three cleaners.
- Figure 5.1: a Postmark-like file workload: JFFS (one circular log: FIFO cleaning), DAC, DAC
  with 4 MB, DEB.
- Figure 5.5: even wearing, 1 MB segments, CAT, 100,000 Postmark transactions: erases per
  segment.
- Traces: the same four systems on the real traces in ../shared/traces, on their own clock.

Setup (the paper's): 64 MB flash filled to 90 % before the measurement, 4 flash regions with
stable-time interval boundaries 100, 200, 300, 400 s, 4 MB EBR. The flash is the nor1999
preset (the Intel card of the DAC/LFSS line: 4 KB pages, 128 KB segments, 30.7 ms per page
program, 0.7 s per segment erase) resized to 64 MB, and requests are closed-loop: the
simulated clock, which the stable times are measured on, is the flash's own speed. The paper
ran LFSS on SDRAM and does not give its test program's rate; RESULTS.md shows how much the
clock matters (`clock` experiment: the same Table 5.1 with a 100× faster flash).

The end-of-run write-back of the EBR (the RAM pages reach flash when the run ends) is counted
in `erases`; `erases_in_run` leaves out the erases that write-back caused, which is what the
paper, measuring a running system, reports.

Usage: .venv/bin/python experiments/deb/run.py [--only NAME ...] [--jobs N] [--quick]
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
MIB = 1 << 20
FLASH_BYTES = 64 * MIB
UTILIZATION = 0.9
LOGICAL_BYTES = int(FLASH_BYTES * UTILIZATION)
UPDATED_BYTES = 40 * MIB
EBR_BYTES = 4 * MIB
CLEANERS = ["greedy", "cost-benefit", "cat"]
PAPER_TABLE_51 = {"greedy": (7818, 548), "cost-benefit": (4898, 417), "cat": (1972, 368)}

# The four systems of Figures 5.1 and 5.2 (plus DEB without its EBR).
SYSTEMS: dict[str, dict[str, Any]] = {
    "DAC": {"ftl.placement": "dac"},
    "DAC with 4 MB": {"ftl.placement": "dac", "dac.ram_region_bytes": EBR_BYTES},
    "DEB, no EBR": {"ftl.placement": "deb", "deb.ebr_size_bytes": 0},
    "DEB (LFSS)": {"ftl.placement": "deb", "deb.ebr_size_bytes": EBR_BYTES},
}


def device(segment_bytes: int = 128 * 1024) -> dict[str, Any]:
    return {
        "device.preset": "nor1999",
        "device.page_size_bytes": 4096,
        "device.pages_per_block": segment_bytes // 4096,
        "device.blocks": FLASH_BYTES // segment_bytes,
        "device.utilization": UTILIZATION,
    }


def synthetic(hot_data: float, hot_access: float) -> dict[str, Any]:
    """The paper's test program: 90 % prefill, then 40 MB of page updates, `hot_access` of
    them to `hot_data` of the data."""
    return device() | {
        "workload.kind": "hotcold",
        "workload.prefill": True,
        "workload.hot_data_fraction": hot_data,
        "workload.hot_access_fraction": hot_access,
        "workload.passes": UPDATED_BYTES / LOGICAL_BYTES,
    }


def postmark(transactions: int, segment_bytes: int = 128 * 1024) -> dict[str, Any]:
    """Postmark on a FAT volume over the whole device, 90 % prefilled; files of 512 B to
    16 KB."""
    return device(segment_bytes) | {
        "workload.kind": "postmark",
        "workload.fs.files": 2000,
        "workload.fs.file_bytes_min": 512,
        "workload.fs.file_bytes_max": 16384,
        "workload.fs.transactions": transactions,
    }


def tidy(df: pd.DataFrame) -> pd.DataFrame:
    out = df.copy()
    final = out.get("ram_region.final_write_back_erases")
    out["erases_in_run"] = out["erases"] - (final.fillna(0) if final is not None else 0)
    return out


def bar_chart(pivot: pd.DataFrame, ylabel: str, title: str, name: str) -> None:
    ax = pivot.plot.bar(rot=0, figsize=(8, 4))
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    plt.tight_layout()
    plt.savefig(HERE / name, dpi=110)
    plt.close()


def save(df: pd.DataFrame, name: str) -> None:
    nandlab.write_csv(df, HERE / f"{name}.csv")
    print(f"wrote {name}.csv ({len(df)} rows)")


def ram_columns(df: pd.DataFrame) -> list[str]:
    cols = ["ram_region.host_write_pages", "ram_region.in_place_updates",
            "ram_region.write_back_pages", "ram_region.final_write_back_pages"]
    return [c for c in cols if c in df.columns]


# Table 5.1's settings: the paper's (the hot tenth of 57.6 MB is 5.8 MB, more than the EBR),
# the same with the hot data halved (2.9 MB: it fits the EBR), and the paper's on a 100×
# faster flash (the clock the stable times are measured on).
TABLE_51_SETTINGS: dict[str, dict[str, Any]] = {
    "10/90": {},
    "5/90 (hot data fits the EBR)": {"workload.hot_data_fraction": 0.05},
    "10/90, 100x faster flash": {"timing.read_page_ns": 8192, "timing.program_page_ns": 307_200,
                                 "timing.erase_block_ns": 7_000_000},
}


def table51(jobs: int, settings: list[str], name: str) -> pd.DataFrame:
    """Table 5.1: three cleaners without and with a 4 MB EBR (10/90, 40 MB updated)."""
    points = [{**TABLE_51_SETTINGS[s], "ftl.cleaning": c, "deb.ebr_size_bytes": e}
              for s in settings for c in CLEANERS for e in [0, EBR_BYTES]]
    raw = tidy(nandlab.sweep_points(synthetic(0.1, 0.9) | {"ftl.placement": "deb"}, points,
                                    jobs=jobs))
    raw["setting"] = [s for s in settings for _ in range(2 * len(CLEANERS))]
    rows = []
    for (setting, c), g in raw.groupby(["setting", "ftl.cleaning"], sort=False):
        no = g[g["deb.ebr_size_bytes"] == 0].iloc[0]
        yes = g[g["deb.ebr_size_bytes"] == EBR_BYTES].iloc[0]
        p_no, p_yes = PAPER_TABLE_51[c]
        rows.append({
            "setting": setting,
            "cleaning": c,
            "erases_no_ebr": int(no["erases"]),
            "erases_4mb_ebr": int(yes["erases"]),
            "erases_4mb_ebr_in_run": int(yes["erases_in_run"]),
            "reduction_percent": round(100 * (1 - yes["erases"] / no["erases"]), 1),
            "reduction_in_run_percent": round(100 * (1 - yes["erases_in_run"] / no["erases"]), 1),
            "paper_no_ebr": p_no,
            "paper_4mb_ebr": p_yes,
            "paper_reduction_percent": round(100 * (1 - p_yes / p_no), 1),
            "ebr_host_write_pages": int(yes["ram_region.host_write_pages"]),
            "ebr_in_place_updates": int(yes["ram_region.in_place_updates"]),
            "ebr_write_back_pages": int(yes["ram_region.write_back_pages"]),
            "ebr_final_write_back_pages": int(yes["ram_region.final_write_back_pages"]),
            "host_write_pages": int(yes["host_write_pages"]),
            "simulated_seconds": round(yes["sim_time_ns"] / 1e9, 1),
        })
    table = pd.DataFrame(rows)
    save(table, name)
    print(table[["setting", "cleaning", "erases_no_ebr", "erases_4mb_ebr", "reduction_percent",
                 "reduction_in_run_percent", "paper_reduction_percent"]].to_string(index=False))
    return table


def fig52(jobs: int, quick: bool) -> None:
    """Figure 5.2: erases against locality y/x (x % of the updates go to y % of the data)."""
    localities = [(0.5, 0.5), (0.1, 0.9)] if quick else [
        (0.5, 0.5), (0.4, 0.6), (0.3, 0.7), (0.2, 0.8), (0.1, 0.9)]
    points = []
    for hot_data, hot_access in localities:
        for keys in SYSTEMS.values():
            points.append({"workload.hot_data_fraction": hot_data,
                           "workload.hot_access_fraction": hot_access, **keys})
    base = synthetic(0.5, 0.5) | {"ftl.cleaning": "cat"}
    raw = tidy(nandlab.sweep_points(base, points, jobs=jobs))
    names = list(SYSTEMS)
    raw["system"] = [names[i % len(names)] for i in range(len(raw))]
    raw["locality"] = [f"{round(100 * d)}/{round(100 * a)}" for d, a in
                       zip(raw["workload.hot_data_fraction"], raw["workload.hot_access_fraction"])]
    out = raw[["locality", "system", "erases", "erases_in_run", "gc_copied_pages",
               *ram_columns(raw)]].copy()
    for loc, g in out.groupby("locality", sort=False):
        deb = float(g[g["system"] == "DEB (LFSS)"]["erases"].iloc[0])
        for name in ["DAC", "DAC with 4 MB"]:
            other = float(g[g["system"] == name]["erases"].iloc[0])
            out.loc[(out["locality"] == loc) & (out["system"] == name),
                    "deb_fewer_percent"] = round(100 * (1 - deb / other), 1)
    save(out, "fig52")
    print(out[["locality", "system", "erases", "deb_fewer_percent"]].to_string(index=False))
    pivot = out.pivot(index="locality", columns="system", values="erases")
    pivot = pivot.loc[out["locality"].unique(), names]
    ax = pivot.plot(marker="o", figsize=(7, 4))
    ax.set_ylabel("erases")
    ax.set_title("Figure 5.2: erases against locality (CAT, 64 MB, 40 MB updated)")
    plt.tight_layout()
    plt.savefig(HERE / "fig52_locality.png", dpi=110)
    plt.close()


def fig53(jobs: int, quick: bool) -> None:
    """Figure 5.3: erases against EBR size, three cleaners, 10/90."""
    sizes_mb = [0, 1, 4] if quick else [0, 0.5, 1, 2, 3, 4, 6, 8]
    raw = tidy(nandlab.sweep(synthetic(0.1, 0.9) | {"ftl.placement": "deb"},
                             {"ftl.cleaning": CLEANERS,
                              "deb.ebr_size_bytes": [int(s * MIB) for s in sizes_mb]},
                             jobs=jobs))
    raw["ebr_mb"] = raw["deb.ebr_size_bytes"] / MIB
    out = raw[["ftl.cleaning", "ebr_mb", "erases", "erases_in_run", *ram_columns(raw)]].copy()
    for c, g in out.groupby("ftl.cleaning", sort=False):
        zero = float(g[g["ebr_mb"] == 0]["erases"].iloc[0])
        out.loc[out["ftl.cleaning"] == c, "reduction_percent"] = \
            (100 * (1 - g["erases"] / zero)).round(1)
    save(out, "fig53")
    print(out[["ftl.cleaning", "ebr_mb", "erases", "reduction_percent"]].to_string(index=False))
    fig, ax = plt.subplots(figsize=(7, 4))
    for c, g in out.groupby("ftl.cleaning", sort=False):
        ax.plot(g["ebr_mb"], g["erases"], marker="o", label=c)
    ax.set_xlabel("EBR size (MB)")
    ax.set_ylabel("erases")
    ax.set_title("Figure 5.3: erases against EBR size (10/90, 40 MB updated)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(HERE / "fig53_ebr_size.png", dpi=110)
    plt.close(fig)


def fig51(jobs: int, quick: bool) -> None:
    """Figure 5.1: Postmark: JFFS, DAC, DAC with 4 MB, DEB (all CAT but JFFS)."""
    transactions = [20_000] if quick else [25_000, 50_000, 100_000]
    systems = {"JFFS": {"ftl.placement": "none", "ftl.cleaning": "fifo"}} | {
        k: v | {"ftl.cleaning": "cat"} for k, v in SYSTEMS.items()}
    points = []
    for t in transactions:
        for keys in systems.values():
            points.append({"workload.fs.transactions": t, **keys})
    raw = tidy(nandlab.sweep_points(postmark(transactions[0]), points, jobs=jobs))
    names = list(systems)
    raw["system"] = [names[i % len(names)] for i in range(len(raw))]
    raw["transactions"] = raw["workload.fs.transactions"].astype(int)
    out = raw[["transactions", "system", "erases", "erases_in_run", "host_write_pages",
               "gc_copied_pages", *ram_columns(raw)]]
    save(out, "fig51")
    print(out[["transactions", "system", "erases", "erases_in_run"]].to_string(index=False))
    pivot = out.pivot(index="transactions", columns="system", values="erases")[names]
    bar_chart(pivot, "erases", "Figure 5.1: Postmark on a 64 MB flash, 90 % full",
              "fig51_postmark.png")


def fig55(quick: bool) -> None:
    """Figure 5.5: erases per 1 MB segment after 100,000 Postmark transactions, DEB + CAT."""
    transactions = 20_000 if quick else 100_000
    rows = []
    for aware in [True, False]:
        # 64 segments at 90 % leave 6.4 spare; the cleaner needs 7 (a free reserve of 2, an
        # open segment per region, one more): 85 % here.
        cfg = postmark(transactions, segment_bytes=MIB) | {
            "device.utilization": 0.85,
            "ftl.placement": "deb", "ftl.cleaning": "cat", "deb.wear_aware": aware}
        r = nandlab.run(cfg)
        for _, h in r.wear_histogram.iterrows():
            rows.append({"wear_aware": aware, "erase_count": int(h["erase_count"]),
                         "segments": int(h["blocks"])})
        m = r.metrics
        print(f"wear_aware={aware}: erases {m['erases']}, per segment min {m['wear_min']} "
              f"max {m['wear_max']} mean {m['wear_mean']:.1f} std dev {m['wear_stddev']:.2f}")
    out = pd.DataFrame(rows)
    save(out, "fig55")
    fig, ax = plt.subplots(figsize=(7, 4))
    for aware, g in out.groupby("wear_aware", sort=False):
        ax.bar(g["erase_count"] + (0.2 if aware else -0.2), g["segments"], width=0.4,
               label="wear-aware region moves" if aware else "without")
    ax.set_xlabel("erases of a 1 MB segment")
    ax.set_ylabel("segments")
    ax.set_title(f"Figure 5.5: wear after {transactions:,} Postmark transactions (DEB, CAT)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(HERE / "fig55_wear.png", dpi=110)
    plt.close(fig)


def traces(jobs: int, quick: bool) -> None:
    """The four systems (CAT) on every real trace, timed by the trace's own timestamps; the
    flash is 1/0.9 of the trace's footprint and the EBR (or RAM region) 1/16 of the flash, the
    paper's 4 MB / 64 MB."""
    rows = []
    for trace, rel in TRACE_FILES.items():
        path = TRACES / rel
        if not path.exists():
            sys.exit(f"{path} is missing: the trace experiments need ../shared/traces")
        base = {"workload.kind": "trace", "workload.path": str(path),
                "workload.trace_timing": "trace", "workload.passes": 1 if quick else 3,
                "device.page_size_bytes": 4096, "device.pages_per_block": 32,
                "device.utilization": UTILIZATION, "ftl.cleaning": "cat"}
        # The device size follows the trace: learn it once, then size the RAM region.
        flash = int(nandlab.resolve_config(base)["device"]["blocks"]) * 32 * 4096
        ram = max(4096, flash // 16 // 4096 * 4096)
        points = []
        for keys in SYSTEMS.values():
            p = dict(keys)
            for k in ("dac.ram_region_bytes", "deb.ebr_size_bytes"):
                if p.get(k):
                    p[k] = ram
            points.append(p)
        raw = tidy(nandlab.sweep_points(base, points, jobs=jobs))
        for name, (_, r) in zip(SYSTEMS, raw.iterrows()):
            rows.append({"trace": trace, "system": name, "flash_mb": round(flash / MIB, 1),
                         "ram_mb": round(ram / MIB, 2), "erases": int(r["erases"]),
                         "erases_in_run": int(r["erases_in_run"]),
                         "write_amplification": round(r["write_amplification"], 3),
                         "simulated_hours": round(r["sim_time_ns"] / 3.6e12, 2)})
    out = pd.DataFrame(rows)
    for trace, g in out.groupby("trace", sort=False):
        dac = float(g[g["system"] == "DAC"]["erases"].iloc[0])
        out.loc[out["trace"] == trace, "vs_dac_percent"] = (100 * (g["erases"] / dac - 1)).round(1)
    save(out, "traces")
    print(out.to_string(index=False))
    pivot = out.pivot(index="trace", columns="system", values="vs_dac_percent")[list(SYSTEMS)]
    bar_chart(pivot, "erases vs DAC (%)", "Real traces, CAT: erases relative to DAC",
              "traces.png")


EXPERIMENTS = ["table51", "clock", "fig52", "fig53", "fig51", "fig55", "traces"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", choices=EXPERIMENTS)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="fewer points (a smoke run)")
    args = ap.parse_args()
    chosen = args.only or EXPERIMENTS
    for name in chosen:
        start = time.time()
        print(f"== {name}")
        if name == "table51":
            table51(args.jobs, list(TABLE_51_SETTINGS)[:2], "table51")
        elif name == "clock":
            table51(args.jobs, list(TABLE_51_SETTINGS)[::2], "clock")
        elif name == "fig52":
            fig52(args.jobs, args.quick)
        elif name == "fig53":
            fig53(args.jobs, args.quick)
        elif name == "fig51":
            fig51(args.jobs, args.quick)
        elif name == "fig55":
            fig55(args.quick)
        elif name == "traces":
            traces(args.jobs, args.quick)
        print(f"   {time.time() - start:.1f} s")


if __name__ == "__main__":
    main()
