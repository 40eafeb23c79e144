#!/usr/bin/env bash
# Issue 15 acceptance: the kill -9 harness (crates/nandlab-cli/tests/serve_crash.rs) with
# CYCLES (default 200) cycles for every configuration it covers — the page FTL under every
# placement (none, dac, dac with a RAM region, deb with and without its EBR) in both recovery
# modes, every buffer kind, and the hybrid FTLs (bast, sast, fast). Each cycle: restart the
# server on the same image, verify the whole disk against the model, random writes / FUA /
# write-zeroes / trims / flushes, SIGKILL at a random instant.
# Run from the repository root:   bash experiments/serve/crash_matrix.sh [CYCLES]
# Prints one line per configuration ("N kill -9 cycles: L lost flushed writes, I inconsistent
# blocks") and writes them to experiments/serve/results/crash_matrix.txt.
set -euo pipefail
cycles=${1:-200}
out=experiments/serve/results
mkdir -p "$out"
NANDLAB_CRASH_CYCLES=$cycles cargo test --release -p nandlab-cli --test serve_crash -- \
    --nocapture --test-threads 2 2>&1 | tee "$out/crash_matrix.log" | grep -E "kill -9 cycles|test result" \
    | tee "$out/crash_matrix.txt"
