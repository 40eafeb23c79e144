"""The benchmarks paper's Table 3 (docs/PAPERS.md) for every trace beside the repository:
`nandlab.analyze` on each file under ../shared/traces (referenced, never copied: see each
SOURCE.md), its macroscopic figures as one table, its microscopic views (LBA over write index, life
cycle of rewritten data, seek distance: the paper's Figures 4-6) as one PNG per trace.

Usage: .venv/bin/python experiments/benchmarks/analyze_traces.py
Writes traces.csv, traces.md (the table as Markdown) and views/<trace>.png next to this file.
"""

from __future__ import annotations

import pathlib
import time

import pandas as pd

import nandlab

HERE = pathlib.Path(__file__).resolve().parent
TRACES = HERE.parents[2] / "shared" / "traces"
# System-call traces (see their SOURCE.md): no block addresses, nothing to analyse.
NOT_BLOCK_TRACES = {"android-mobigen"}


def human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError


def main() -> None:
    if not TRACES.is_dir():
        raise SystemExit(f"{TRACES} not found: the traces live beside the repository")
    (HERE / "views").mkdir(exist_ok=True)
    rows = []
    for source in sorted(TRACES.iterdir()):
        if source.name in NOT_BLOCK_TRACES:
            continue
        for f in sorted(source.iterdir()):
            if f.name == "SOURCE.md" or f.is_dir():
                continue
            started = time.monotonic()
            a = nandlab.analyze(f)
            seconds = time.monotonic() - started
            d = a.data
            name = f"{source.name}/{f.name}"
            print(f"{name}: {a.suite} ({seconds:.2f} s)")
            a.plot(HERE / "views" / f"{source.name}--{f.name.split('.')[0]}.png")
            rows.append(
                {
                    "trace": name,
                    "format": d["format"],
                    "requests": d["requests"],
                    "write_requests": d["write_requests"],
                    "data_transferred_bytes": d["data_transferred_bytes"],
                    "write_bytes": d["write_bytes"],
                    "read_bytes": d["read_bytes"],
                    "rewrite_ratio": d["rewrite_ratio"],
                    "sequential_ratio": d["sequential_ratio"],
                    "request_bytes_typical": d["request_bytes_typical"],
                    "alignment_ratio": d["alignment_ratio"],
                    "footprint_bytes": d["footprint_bytes"],
                    "short_rewrite_share": d["short_rewrite_share"],
                    "suite": d["suite"],
                    "suite_reason": d["suite_reason"],
                    "version": d["version"],
                }
            )
    df = pd.DataFrame(rows)
    nandlab.write_csv(df, HERE / "traces.csv")
    lines = [
        "| trace | data transferred | written | rewrite | sequential | typical write | aligned "
        "(4 KiB) | written as rewrites < 1 s | suite |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in rows:
        lines.append(
            f"| {r['trace']} | {human(r['data_transferred_bytes'])} | {human(r['write_bytes'])} "
            f"| {100 * r['rewrite_ratio']:.1f} % | {100 * r['sequential_ratio']:.1f} % "
            f"| {human(r['request_bytes_typical'])} | {100 * r['alignment_ratio']:.1f} % "
            f"| {100 * r['short_rewrite_share']:.1f} % | {r['suite']} |"
        )
    (HERE / "traces.md").write_text("\n".join(lines) + "\n")
    print((HERE / "traces.md").read_text())


if __name__ == "__main__":
    main()
