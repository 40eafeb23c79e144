#!/usr/bin/env bash
# The largest device that fits a memory limit (an acceptance figure of the hostile-input work),
# and the refusal for one that does not.
#
#   bash experiments/robustness/largest_device.sh [LIMIT_BYTES (2147483648)] [--run]
#
# Binary search over device.logical_bytes (in whole erase blocks) using `nandlab print-config`,
# which applies the same memory estimate as `run` and `serve` and exits 2 when a device does
# not fit `run.memory_limit_bytes`. With --run, the largest fitting device then really runs
# (prefill + 0.01 pass of uniform writes) under /usr/bin/time, to compare its peak RSS with
# the limit. Results go to stdout and experiments/robustness/largest_device.txt.
set -euo pipefail
cd "$(dirname "$0")/../.."
LIMIT=${1:-2147483648}
RUN=0
[ "${2:-}" = "--run" ] && RUN=1
NANDLAB=target/release/nandlab
[ -x "$NANDLAB" ] || cargo build --release -p nandlab-cli >&2
BLOCK=$((64 * 4096))   # the generic preset's erase block
fits() {
  "$NANDLAB" print-config --set run.memory_limit_bytes="$LIMIT" \
    --set device.logical_bytes="$(($1 * BLOCK))" >/dev/null 2>&1
}
lo=64 hi=64
fits "$lo" || { echo "even $lo blocks do not fit $LIMIT bytes" >&2; exit 1; }
while fits "$hi"; do lo=$hi; hi=$((hi * 2)); done
while [ $((hi - lo)) -gt 1 ]; do
  mid=$(((lo + hi) / 2))
  if fits "$mid"; then lo=$mid; else hi=$mid; fi
done
OUT=experiments/robustness/largest_device.txt
{
  echo "# nandlab $("$NANDLAB" --version | cut -d' ' -f2-) · generic preset (4 KiB pages, 64 pages/block) · page FTL, defaults"
  echo "memory limit: $LIMIT bytes"
  echo "largest device that fits: $((lo * BLOCK)) bytes logical ($lo blocks of $BLOCK B, $(awk "BEGIN{printf \"%.1f\", $lo*$BLOCK/2^30}") GiB)"
  "$NANDLAB" print-config --set run.memory_limit_bytes="$LIMIT" \
    --set device.logical_bytes="$((lo * BLOCK))" | grep '^# estimated memory' || true
  echo "one block more ($((hi * BLOCK)) bytes) is refused:"
  "$NANDLAB" print-config --set run.memory_limit_bytes="$LIMIT" \
    --set device.logical_bytes="$((hi * BLOCK))" 2>&1 >/dev/null | sed 's/^/  /' || true
  if [ "$RUN" = 1 ]; then
    echo "running the largest fitting device (prefill + 0.01 pass, uniform writes):"
    /usr/bin/time -f "  peak RSS %M KiB, wall %e s, exit %x" "$NANDLAB" run --quiet \
      --set run.memory_limit_bytes="$LIMIT" --set device.logical_bytes="$((lo * BLOCK))" \
      --set workload.passes=0.01 --set workload.warmup_passes=0 2>&1 | grep -E 'peak RSS|error' || true
  fi
} | tee "$OUT"
