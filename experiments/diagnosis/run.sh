#!/bin/sh
# The PBR diagnosis calibration matrix: every constructed case of
# crates/nandlab-probe/tests/diagnose.rs plus its boundary cases, replayed on the simulator
# (generated suite traces: no trace files needed), written to RESULTS.md beside this script.
set -eu
cd "$(dirname "$0")/../.."
cargo test --profile ci -p nandlab-probe --test diagnose -- --ignored --nocapture matrix_table
