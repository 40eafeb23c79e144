"""Summarizes matrix.csv (experiments/geometry/matrix.sh) as a Markdown table.

    python3 matrix_summary.py matrix.csv COMMIT > matrix.md
"""
import csv
import sys
from collections import Counter

with open(sys.argv[1]) as f:
    rows = list(csv.DictReader(f))
commit = sys.argv[2] if len(sys.argv) > 2 else "?"
devices = sorted({int(r["device"]) for r in rows})
seed = rows[0]["seed"] if rows else "?"
n, exact = Counter(), Counter()
for r in rows:
    n[r["probe"]] += 1
    exact[r["probe"]] += r["exact"] == "true"
total = sum(n[p] for p in ("page", "block", "zone", "parallel"))
hits = sum(exact[p] for p in ("page", "block", "zone", "parallel"))
print(
    f"# Geometry probes on the random device matrix "
    f"(seed {seed}, {len(devices)} devices, commit {commit})"
)
print()
print("`bash experiments/geometry/matrix.sh` — ranges in `crates/nandlab-probe/src/matrix.rs`.")
print("A zone counts as exact when none is configured and none is found.")
print()
print("| probe | exact | devices | share |")
print("|---|---|---|---|")
for p in ("page", "block", "zone", "parallel"):
    print(f"| {p} | {exact[p]} | {n[p]} | {100 * exact[p] / max(n[p], 1):.0f} % |")
print(f"| all targeted values | {hits} | {total} | {100 * hits / max(total, 1):.0f} % |")
if n["error"]:
    print(f"\n{n['error']} devices could not be built (config errors), listed below.")
print()
print("## Misses, with the confidence each came with")
print()
print("| device | configuration | probe | configured | detected | confidence | how |")
print("|---|---|---|---|---|---|---|")
for r in rows:
    if r["exact"] != "true":
        how = r["how"].replace("|", "/")
        print(f"| {r['device']} | {r['summary']} | {r['probe']} | {r['want'] or '—'} | "
              f"{r['got'] or '—'} | {r['confidence']} | {how} |")
