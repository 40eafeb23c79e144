"""The benchmarks paper's suites and Per-Byte-Response views (docs/PAPERS.md; sections 2-3 of
RESULTS.md).

Section 2: each suite generator (`nandlab.suite`) with its defaults (the paper's Table 3 rows),
analysed from the written trace: targets against measured figures.
Section 3: PBR replays (`nandlab.pbr`) on simulated devices built to show the paper's three
symptoms (its Figures 1-3) and on a healthy one: the 3-D view with both projections per
configuration, and the diagnosis with its evidence.

Usage: .venv/bin/python experiments/benchmarks/suites_pbr.py
Writes suites.csv, suites.md, pbr.csv, pbr.md and pbr/<configuration>.png next to this file
(the traces go to a temporary directory).
"""

from __future__ import annotations

import pathlib
import tempfile

import pandas as pd

import nandlab

HERE = pathlib.Path(__file__).resolve().parent

MIB = 1 << 20

# (name, suite, suite parameters, device overrides, what the configuration is built to show)
CONFIGS = [
    (
        "buffer: 256 KiB FAB",
        "buffer",
        {
            "write_bytes": 32 * MIB,
            "area_bytes": 256 * MIB,
            "alignment_ratio": 1,
            "partition_offset_bytes": 0,
        },
        {
            "device.logical_bytes": 256 * MIB,
            "device.utilization": 0.5,
            "buffer.kind": "fab",
            "buffer.size_bytes": 256 * 1024,
        },
        "buffer",
    ),
    (
        "mapping: BAST, 4 log blocks",
        "mapping",
        {"write_bytes": 64 * MIB},
        {"ftl.kind": "bast", "ftl.log_blocks": 4, "device.logical_bytes": 2048 * MIB},
        "mapping",
    ),
    (
        "gc: greedy at 90 %",
        "gc",
        {"write_bytes": 64 * MIB, "area_bytes": 256 * MIB},
        {"device.logical_bytes": 256 * MIB, "device.utilization": 0.9},
        "gc",
    ),
    (
        "healthy: greedy at 50 %",
        "gc",
        {"write_bytes": 64 * MIB, "area_bytes": 256 * MIB},
        {"device.logical_bytes": 256 * MIB, "device.utilization": 0.5},
        "none",
    ),
]


def markdown(frame: pd.DataFrame) -> str:
    """A Markdown table without the optional tabulate dependency."""
    cells = [[str(c) for c in frame.columns]] + [[str(v) for v in row] for row in frame.values]
    lines = ["| " + " | ".join(r) + " |" for r in cells]
    lines.insert(1, "| " + " | ".join("---" for _ in frame.columns) + " |")
    return "\n".join(lines) + "\n"


def slug(name: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in name.split(":")[0]).strip("-")


def main() -> None:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in nandlab.SUITES:
            a = nandlab.suite(name, pathlib.Path(tmp) / f"{name}.csv")
            t = a.data["targets"]
            rows.append(
                {
                    "suite": name,
                    "written MiB": a.data["write_bytes"] / MIB,
                    "writes": a.data["write_requests"],
                    "rewrite target": t["rewrite_ratio"],
                    "rewrite": round(a.rewrite_ratio, 4),
                    "sequential target": t["sequential_ratio"],
                    "sequential": round(a.sequential_ratio, 4),
                    "alignment target": t["alignment_ratio"],
                    "alignment": round(a.alignment_ratio, 4),
                    "typical bytes": a.data["request_bytes_typical"],
                    "analyser's suite": a.suite,
                }
            )
        suites = pd.DataFrame(rows)
        nandlab.write_csv(suites, HERE / "suites.csv")
        (HERE / "suites.md").write_text(markdown(suites))
        print(suites.to_string(index=False))

        (HERE / "pbr").mkdir(exist_ok=True)
        rows = []
        for name, suite, params, device, expected in CONFIGS:
            trace = pathlib.Path(tmp) / f"{slug(name)}.csv"
            nandlab.suite(suite, trace, **params)
            r = nandlab.pbr("sim:", trace, set=device)
            r.plot(HERE / "pbr" / f"{slug(name)}.png", title=f"{name} ({suite} suite): {r.symptom}")
            e = r.diagnosis["evidence"]
            q = r.summary["pbr_ns_per_byte"]
            rows.append(
                {
                    "configuration": name,
                    "trace": suite,
                    "writes": r.summary["writes"],
                    "PBR p50 ns/B": round(q["p50"], 2),
                    "PBR p99 ns/B": round(q["p99"], 2),
                    "floor ns/B": round(e["floor_ns_per_byte"], 3),
                    "high share": round(e["high_share"], 4),
                    "low share": round(e["low_share"], 4),
                    "gap": round(e["gap"], 1),
                    "high LBA spread": round(e["high_lba_spread"], 3),
                    "scores b/m/g": f"{e['buffer_score']:.2f}/{e['mapping_score']:.2f}/"
                    f"{e['gc_score']:.2f}",
                    "diagnosis": r.symptom,
                    "built to show": expected,
                }
            )
            print(f"{name}: {r.symptom}\n  {r.diagnosis['explanation']}")
        pbr = pd.DataFrame(rows)
        nandlab.write_csv(pbr, HERE / "pbr.csv")
        (HERE / "pbr.md").write_text(markdown(pbr))
        print(pbr.to_string(index=False))


if __name__ == "__main__":
    main()
