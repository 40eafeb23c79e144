#!/usr/bin/env bash
# The geometry probes on the seeded random device matrix (crates/nandlab-probe/src/matrix.rs
# states the ranges): every device probed on the simulator, each targeted value compared with
# its configuration. Writes matrix.csv (one row per device and probe) and matrix.md (the table).
#   bash experiments/geometry/matrix.sh [DEVICES] [SEED] [JOBS]     (repository root)
set -euo pipefail
devices=${1:-100}
seed=${2:-1}
jobs=${3:-2}
here=experiments/geometry
cargo build --release -q -p nandlab-probe --example matrix
target/release/examples/matrix "$devices" "$seed" "$jobs" > "$here/matrix.csv"
python3 "$here/matrix_summary.py" "$here/matrix.csv" \
  "$(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD -- crates 2>/dev/null || echo '+changes')" \
  > "$here/matrix.md"
head -20 "$here/matrix.md"
