#!/usr/bin/env python3
"""Best-of-N comparison of `nandlab bench` outputs, before vs after a change.

    python3 scripts/bench_compare.py --before b1.txt b2.txt b3.txt --after a1.txt a2.txt a3.txt

Every table row of `nandlab bench` whose first cell names a policy or kind is matched between
the two sets; the speed column (host writes/s or ops/s; for the buffer simulations the best
measured seconds) is taken best of N per side, and the ratio after/before is printed (for
seconds, before/after, so > 1 always means faster after).
"""
from __future__ import annotations

import argparse
import re
from pathlib import Path

UNITS = {"K": 1e3, "M": 1e6, "G": 1e9}


def rows(path: Path) -> dict[str, tuple[float, bool]]:
    """(section index, first cell) -> (value, higher_is_better)."""
    out: dict[str, tuple[float, bool]] = {}
    section = 0
    for line in path.read_text().splitlines():
        if line and not line[0].isspace() and ("benchmark" in line or "simulation" in line
                                                or "Hybrid" in line or "Buffer operations" in line):
            section += 1
            continue
        cells = line.split()
        if len(cells) < 3 or cells[0].startswith("-") or cells[0] in ("cleaning", "kind", "policy", "buffer"):
            continue
        if re.fullmatch(r"[\d.]+", cells[1]) and cells[2].endswith("×"):
            out[f"{section}:{cells[0]}"] = (float(cells[1]), False)  # best measured seconds
            continue
        if re.fullmatch(r"[\d.]+", cells[1]) and cells[2] in UNITS:
            out[f"{section}:{cells[0]}"] = (float(cells[1]) * UNITS[cells[2]], True)
    return out


def best(paths: list[Path]) -> dict[str, tuple[float, bool]]:
    merged: dict[str, tuple[float, bool]] = {}
    for p in paths:
        for k, (v, hib) in rows(p).items():
            if k not in merged:
                merged[k] = (v, hib)
            else:
                old = merged[k][0]
                merged[k] = (max(old, v) if hib else min(old, v), hib)
    return merged


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", nargs="+", type=Path, required=True)
    ap.add_argument("--after", nargs="+", type=Path, required=True)
    a = ap.parse_args()
    before, after = best(a.before), best(a.after)
    print(f"{'row':<22} {'before':>12} {'after':>12} {'speed ratio':>12}")
    for key in before:
        if key not in after:
            continue
        b, hib = before[key]
        x, _ = after[key]
        ratio = x / b if hib else b / x
        unit = "/s" if hib else " s"
        print(f"{key:<22} {b:>10.4g}{unit} {x:>10.4g}{unit} {ratio:>11.3f}x")


if __name__ == "__main__":
    main()
