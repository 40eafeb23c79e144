#!/usr/bin/env bash
# Crash acceptance: the kill -9 harness (crates/nandlab-cli/tests/serve_crash.rs) with CYCLES
# (default 200) cycles for every configuration it covers — the page FTL under every placement
# (none, midas, dac, dac with a RAM region, deb with and without its EBR, sepbit with cost-benefit's
# sqrt-append-age form, warcip, fadac, lifetime) in both recovery modes, every
# buffer kind, the hybrid FTLs (bast, sast, fast), parallel hardware, and the four
# configurations of `trims_and_write_zeroes_beside_writes_keep_their_promises` (page + DEB,
# DAC RAM region + LRU, FAST + FAB, 2 x 2 x 2 planes with background cleaning). Each cycle:
# restart the server on the same image, verify the whole disk against the model, then batches
# of up to 16 requests in flight (writes, FUA writes, write-zeroes and trims of 1-8 blocks, and
# flushes beside them), SIGKILL at a random instant.
# With `full` as second argument it runs the whole product instead (13 kinds/placements × 5
# buffers × 2 recovery modes = 130 configurations; about 42 minutes at 200 cycles on 2 cores).
# A third argument filters the tests by name (e.g. `trims_and_write_zeroes`).
# Run from the repository root:   bash experiments/serve/crash_matrix.sh [CYCLES] [full|all] [FILTER]
# Prints one line per configuration ("N kill -9 cycles: L lost flushed writes, I inconsistent
# blocks (requests sent by kind)") and writes them to experiments/serve/results/crash_matrix.txt.
set -euo pipefail
cycles=${1:-200}
out=experiments/serve/results
mkdir -p "$out"
if [ "${2:-}" = full ]; then
  which=(--ignored every_servable_configuration)
  name=crash_matrix_full
  export NANDLAB_CRASH_JOBS=${NANDLAB_CRASH_JOBS:-2}
else
  which=(${3:-})
  name=crash_matrix${3:+_$3}
fi
NANDLAB_CRASH_CYCLES=$cycles cargo test --profile ci -p nandlab-cli --test serve_crash -- \
    --nocapture --test-threads 2 "${which[@]}" 2>&1 | tee "$out/$name.log" \
    | grep -E "kill -9 cycles|test result" | tee "$out/$name.txt"
