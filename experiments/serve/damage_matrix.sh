#!/usr/bin/env bash
# Damage acceptance (crates/nandlab-store/tests/damage.rs): small images (DEB with its NVRAM,
# FAST, DAC with a RAM region on 160 blocks), left by a crash and by a clean stop.
#  - byte flips: every byte (or a seeded sample of N per area) of the metadata areas (superblock
#    pages A and B with the stop records and the holder, block headers A/B, OOB records A/B, both
#    checkpoint slots, NVRAM cell headers A/B);
#  - lost pages: every 4 KiB page of every area (metadata and payload) zeroed, and separately
#    filled with random bytes.
# Each damaged image is mounted twice (full OOB scan and from the checkpoint), every page read
# back and classified: unaffected / repaired / refused / EIO / wrong / panic. wrong and panic
# must be 0; a lost metadata page must be repaired (refused and EIO 0).
# Run from the repository root:
#   bash experiments/serve/damage_matrix.sh [all|N]     (N: a seeded sample of N bytes per area)
set -euo pipefail
flips=${1:-all}
out=experiments/serve/results
mkdir -p "$out"
NANDLAB_DAMAGE_FLIPS=$flips NANDLAB_DAMAGE_PAGES=all \
    cargo test --profile ci -p nandlab-store --test damage -- --nocapture --test-threads 1 \
    2>&1 | grep -E "^(image|area|superblock|holder|block|OOB|page|checkpoint|NVRAM|total|test )" \
    | tee "$out/damage_matrix.txt"
