#!/usr/bin/env bash
# Issue 15 acceptance: every single-byte flip of a small image's metadata (superblock copies,
# holder record, block headers, OOB records, both checkpoint slots, NVRAM cell headers), each
# mounted twice (full OOB scan and from the checkpoint), every page read back and classified:
# unaffected / repaired / refused / EIO / wrong / panic (wrong and panic must be 0).
# The test is crates/nandlab-store/tests/damage.rs. Run from the repository root:
#   bash experiments/serve/damage_matrix.sh [all|N]     (N: a seeded sample of N bytes per area)
set -euo pipefail
flips=${1:-all}
out=experiments/serve/results
mkdir -p "$out"
NANDLAB_DAMAGE_FLIPS=$flips cargo test --profile ci -p nandlab-store --test damage -- --nocapture \
    2>&1 | grep -E "^(image|area|superblock|holder|block|OOB|checkpoint|NVRAM|total|test )" \
    | tee "$out/damage_matrix.txt"
