"""The FAB paper (Jo et al., "FAB: Flash-Aware Buffer Management Policy for Portable Media
Players", IEEE Trans. Consumer Electronics 2006; docs/PAPERS.md) reproduced on nandlab.

- Figure 6: erases and garbage-collection page writes of PLAIN (no buffer), BUF_LRU and
  BUF_FAB (plus BPLRU and CFLRU) on FAST with 8 log blocks, for the camera, MP3 and movie
  workloads on 512 MB, 1 GB and 2 GB of flash, normalized to PLAIN.
- Figure 7: the execution-time breakdown (GCREAD, GCWRITE, ERASE, DATAWRITE, and the buffer's
  RAM time) for the MP3 workload on 1 GB.
- Figure 8: buffer hits, normalized to LRU.
- Figure 9: erases against the buffer size (1-32 MB), camera workload, each flash size.
- Table III: the most block nodes FAB holds at once and their memory, MP3 on 1 GB.

The paper's PMP traces are not public: `workload.kind = "media-player"` models them (FAT32
volume, ~1 MB pictures, 4-5 MB MP3s, 15-30 MB movies written sequentially with write-through
FAT and directory updates; random deletes free space). Each run writes as many sectors as the
paper's Table I lists for that trace and flash size.

Usage: .venv/bin/python experiments/fab/run.py [--only NAME ...] [--jobs N] [--quick]
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

HERE = pathlib.Path(__file__).resolve().parent
MIB = 1 << 20
BLOCK_BYTES = 128 * 1024  # slc2006: 64 pages of 2 KB
FLASH_MB = [512, 1024, 2048]
MEDIA = ["camera", "mp3", "movie"]
BUFFERS = ["none", "lru", "fab", "bplru", "cflru"]
LABELS = {"none": "PLAIN", "lru": "BUF_LRU", "fab": "BUF_FAB", "bplru": "BPLRU",
          "cflru": "CFLRU"}
# The FAB paper's Table I: sectors written by each trace on each flash size.
TABLE1_SECTORS = {
    ("camera", 512): 868_154, ("camera", 1024): 1_803_561, ("camera", 2048): 4_335_023,
    ("mp3", 512): 1_146_234, ("mp3", 1024): 1_935_572, ("mp3", 2048): 5_602_743,
    ("movie", 512): 1_067_905, ("movie", 1024): 2_296_341, ("movie", 2048): 7_196_759,
}
# Blocks that are not logical space: FAST's 8 log blocks plus a small reserve for merges.
SPARE_BLOCKS = 16
BUFFER_MB_DEFAULT = 8  # the paper's recommended size (0.8 % of 1 GB)


def device(flash_mb: int) -> dict[str, Any]:
    blocks = flash_mb * MIB // BLOCK_BYTES
    return {
        "device.preset": "slc2006",
        "device.blocks": blocks,
        "device.logical_bytes": (blocks - SPARE_BLOCKS) * BLOCK_BYTES,
        "ftl.kind": "fast",
        "ftl.log_blocks": 8,
    }


def workload(media: str, flash_mb: int, quick: bool) -> dict[str, Any]:
    logical = (flash_mb * MIB // BLOCK_BYTES - SPARE_BLOCKS) * BLOCK_BYTES
    passes = TABLE1_SECTORS[(media, flash_mb)] * 512 / logical
    return {
        "workload.kind": "media-player",
        "workload.media": media,
        "workload.passes": round(passes * (0.25 if quick else 1.0), 4),
    }


def buffer(kind: str, mb: int) -> dict[str, Any]:
    if kind == "none":
        return {"buffer.kind": "none"}
    return {"buffer.kind": kind, "buffer.size_bytes": mb * MIB}


def sizes(quick: bool) -> list[int]:
    return [512] if quick else FLASH_MB


def grid(quick: bool, buffers: list[str], buffer_mb: list[int], media: list[str],
         flash: list[int], extra: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    out = []
    for f in flash:
        for m in media:
            for b in buffers:
                for mb in (buffer_mb if b != "none" else [0]):
                    out.append({**device(f), **workload(m, f, quick), **buffer(b, mb),
                                **(extra or {})})
    return out


def run_points(points: list[dict[str, Any]], jobs: int) -> pd.DataFrame:
    return nandlab.sweep_points({}, points, jobs=jobs, progress=True)


def tidy(df: pd.DataFrame) -> pd.DataFrame:
    """The columns the figures use, with readable names."""
    blocks = df["device.blocks"]
    out = pd.DataFrame({
        "flash_mb": blocks * BLOCK_BYTES // MIB,
        "media": df["workload.media"],
        "buffer": df["buffer.kind"].map(LABELS),
        "buffer_mb": df.get("buffer.size_bytes", pd.Series(0, index=df.index)).fillna(0) / MIB,
        "host_write_pages": df["host_write_pages"],
        "host_read_pages": df["host_read_pages"],
        "gc_writes": df["gc_copied_pages"],
        "erases": df["erases"],
        "switch_merges": df["switch_merges.count"],
        "partial_merges": df["partial_merges.count"],
        "full_merges": df["full_merges.count"],
        "buffer_hits": df["buffer.read_hits"] + df["buffer.write_hits"],
        "buffer_read_hits": df["buffer.read_hits"],
        "buffer_write_hits": df["buffer.write_hits"],
        "written_back": df["buffer.written_back_pages"],
        "final_written_back": df["buffer.final_written_pages"],
        "block_nodes_max": df["buffer.block_nodes_max"],
        "metadata_bytes_max": df["buffer.metadata_bytes_max"],
        "gc_read_s": df["exec_time_ns.gc_read"] / 1e9,
        "gc_write_s": df["exec_time_ns.gc_write"] / 1e9,
        "erase_s": df["exec_time_ns.erase"] / 1e9,
        "data_write_s": df["exec_time_ns.data_write"] / 1e9,
        "data_read_s": df["exec_time_ns.data_read"] / 1e9,
        "buffer_s": df["exec_time_ns.buffer"] / 1e9,
        "wall_s": df["wall_seconds"],
    })
    out["flash_time_s"] = (out["gc_read_s"] + out["gc_write_s"] + out["erase_s"]
                           + out["data_write_s"] + out["data_read_s"])
    return out


def save(df: pd.DataFrame, name: str) -> None:
    nandlab.write_csv(df, HERE / f"{name}.csv")
    print(f"wrote {name}.csv ({len(df)} rows)")


def normalize(df: pd.DataFrame, cols: list[str], base: str) -> pd.DataFrame:
    """Each column divided by the `base` buffer's value for the same flash size and media."""
    ref = df[df["buffer"] == base].set_index(["flash_mb", "media"])
    out = df.copy()
    for c in cols:
        out[f"{c}_norm"] = [
            v / ref.loc[(f, m), c] if ref.loc[(f, m), c] else float("nan")
            for f, m, v in zip(df["flash_mb"], df["media"], df[c])
        ]
    return out


def fig6(jobs: int, quick: bool, name: str = "fig6", extra: dict[str, Any] | None = None
         ) -> None:
    """Figure 6 (and 8): every media and flash size, five buffers of 8 MB."""
    raw = run_points(grid(quick, BUFFERS, [BUFFER_MB_DEFAULT], MEDIA, sizes(quick), extra),
                     jobs=jobs)
    save(raw, f"{name}_raw")
    df = normalize(tidy(raw), ["erases", "gc_writes", "flash_time_s"], "PLAIN")
    lru = df[df["buffer"] == "BUF_LRU"].set_index(["flash_mb", "media"])
    df["buffer_hits_vs_lru"] = [
        h / lru.loc[(f, m), "buffer_hits"] if lru.loc[(f, m), "buffer_hits"] else float("nan")
        for f, m, h in zip(df["flash_mb"], df["media"], df["buffer_hits"])
    ]
    save(df, name)
    cols = ["flash_mb", "media", "buffer", "erases", "gc_writes", "erases_norm",
            "gc_writes_norm", "flash_time_s_norm", "switch_merges", "full_merges",
            "buffer_hits"]
    print(df[cols].to_string(index=False))
    for f in sizes(quick):
        part = df[df["flash_mb"] == f]
        for metric, label in [("erases_norm", "erases"), ("gc_writes_norm", "GC page writes")]:
            plot.bars(part, "media", metric, hue="buffer",
                      title=f"{name}: normalized {label}, {f} MB flash, 8 MB buffer",
                      path=HERE / f"{name}_{metric.split('_')[0]}_{f}mb.png")
    if name == "fig6":
        plot.bars(df[df["buffer"] != "PLAIN"], "media", "buffer_hits_vs_lru", hue="buffer",
                  title="Figure 8: buffer hits normalized to BUF_LRU",
                  path=HERE / "fig8_hits.png")
    # The headline: FAB against LRU and PLAIN, per media and flash size.
    rows = []
    for (f, m), g in df.groupby(["flash_mb", "media"]):
        g = g.set_index("buffer")
        for base in ["PLAIN", "BUF_LRU"]:
            rows.append({
                "flash_mb": f, "media": m, "vs": base,
                "erases_pct": 100 * (g.loc["BUF_FAB", "erases"] / g.loc[base, "erases"] - 1),
                "gc_writes_pct": 100 * (g.loc["BUF_FAB", "gc_writes"]
                                        / g.loc[base, "gc_writes"] - 1),
                "flash_time_pct": 100 * (g.loc["BUF_FAB", "flash_time_s"]
                                         / g.loc[base, "flash_time_s"] - 1),
            })
    fab = pd.DataFrame(rows)
    save(fab, f"{name}_fab_vs")
    print(fab.to_string(index=False))


def fig7(jobs: int, quick: bool) -> None:
    """Figure 7: execution-time breakdown, MP3 on 1 GB (512 MB with --quick)."""
    f = 512 if quick else 1024
    raw = run_points(grid(quick, BUFFERS, [BUFFER_MB_DEFAULT], ["mp3"], [f]),
                                jobs=jobs)
    df = tidy(raw)
    save(df, "fig7_breakdown")
    print(df[["buffer", "gc_read_s", "gc_write_s", "erase_s", "data_write_s", "data_read_s",
              "buffer_s", "flash_time_s"]].to_string(index=False))
    long = df.melt(id_vars=["buffer"],
                   value_vars=["gc_read_s", "gc_write_s", "erase_s", "data_write_s"],
                   var_name="part", value_name="seconds")
    plot.bars(long, "buffer", "seconds", hue="part",
              title=f"Figure 7: execution time breakdown, MP3, {f} MB flash",
              path=HERE / "fig7_breakdown.png")


def fig9(jobs: int, quick: bool) -> None:
    """Figure 9: erases against buffer size, camera workload (FAB and LRU)."""
    mbs = [1, 2, 4, 8] if quick else [1, 2, 4, 8, 16, 32]
    raw = run_points(grid(quick, ["fab", "lru"], mbs, ["camera"], sizes(quick)),
                                jobs=jobs)
    df = tidy(raw)
    save(df, "fig9_buffer_size")
    print(df[["flash_mb", "buffer", "buffer_mb", "erases", "gc_writes"]].to_string(index=False))
    fab = df[df["buffer"] == "BUF_FAB"].assign(flash=lambda d: d["flash_mb"].astype(str) + " MB")
    plot.lines(fab, "buffer_mb", "erases", hue="flash",
               title="Figure 9: FAB erases against buffer size (camera)",
               path=HERE / "fig9_buffer_size.png")


def table3(jobs: int, quick: bool) -> None:
    """Table III: FAB's largest number of block nodes and their memory, MP3 on 1 GB."""
    f = 512 if quick else 1024
    raw = run_points(grid(quick, ["fab"], [2, 4, 8, 16], ["mp3"], [f]), jobs=jobs)
    df = tidy(raw)
    df["overhead_pct_of_buffer"] = 100 * df["metadata_bytes_max"] / (df["buffer_mb"] * MIB)
    out = df[["buffer_mb", "block_nodes_max", "metadata_bytes_max", "overhead_pct_of_buffer"]]
    save(out, "table3_block_nodes")
    print(out.to_string(index=False))


def fragmented(jobs: int, quick: bool) -> None:
    """Figure 6's grid with random deletion (`workload.fs.delete_order = "random"`): new files
    fill the holes of deleted ones, so blocks at file boundaries are written in two parts far
    apart in time."""
    fig6(jobs, quick, "fragmented", {"workload.fs.delete_order": "random"})


def camera_playback(jobs: int, quick: bool) -> None:
    """The camera workload with one operation in ten a playback of a random picture (read
    misses allocate in LRU, FAB and CFLRU)."""
    raw = run_points(grid(quick, BUFFERS, [BUFFER_MB_DEFAULT], ["camera"], sizes(quick),
                          {"workload.fs.read_bias": 0.1}), jobs=jobs)
    df = normalize(tidy(raw), ["erases", "gc_writes"], "PLAIN")
    save(df, "camera_playback")
    print(df[["flash_mb", "buffer", "erases", "gc_writes", "erases_norm", "gc_writes_norm",
              "full_merges", "block_nodes_max"]].to_string(index=False))


EXPERIMENTS = {"fig6": fig6, "fragmented": fragmented, "camera_playback": camera_playback,
               "fig7": fig7, "fig9": fig9, "table3": table3}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="*", choices=list(EXPERIMENTS), default=list(EXPERIMENTS))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="512 MB only, shorter runs (smoke test)")
    args = ap.parse_args()
    for name in args.only:
        t0 = time.time()
        EXPERIMENTS[name](args.jobs, args.quick)
        print(f"{name}: {time.time() - t0:.1f} s")


if __name__ == "__main__":
    main()
