#!/usr/bin/env bash
# Issue 15 acceptance: the kill -9 harness (crates/nandlab-cli/tests/serve_crash.rs) with
# CYCLES (default 200) cycles for every configuration it covers — the page FTL under every
# placement (none, dac, dac with a RAM region, deb with and without its EBR) in both recovery
# modes, every buffer kind, and the hybrid FTLs (bast, sast, fast). Each cycle: restart the
# server on the same image, verify the whole disk against the model, random writes / FUA /
# write-zeroes / trims / flushes, SIGKILL at a random instant.
# With `full` as second argument it runs the whole product instead (8 kinds/placements × 5
# buffers × 2 recovery modes = 80 configurations; about 25 minutes at 200 cycles on 2 cores).
# Run from the repository root:   bash experiments/serve/crash_matrix.sh [CYCLES] [full]
# Prints one line per configuration ("N kill -9 cycles: L lost flushed writes, I inconsistent
# blocks") and writes them to experiments/serve/results/crash_matrix.txt.
set -euo pipefail
cycles=${1:-200}
out=experiments/serve/results
mkdir -p "$out"
if [ "${2:-}" = full ]; then
  which=(--ignored every_servable_configuration)
  name=crash_matrix_full
  export NANDLAB_CRASH_JOBS=${NANDLAB_CRASH_JOBS:-2}
else
  which=()
  name=crash_matrix
fi
NANDLAB_CRASH_CYCLES=$cycles cargo test --profile ci -p nandlab-cli --test serve_crash -- \
    --nocapture --test-threads 2 "${which[@]}" 2>&1 | tee "$out/$name.log" \
    | grep -E "kill -9 cycles|test result" | tee "$out/$name.txt"
