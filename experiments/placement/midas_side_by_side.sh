#!/usr/bin/env bash
# nandlab's `midas` placement beside the MiDAS authors' trace simulator (Oh et al., FAST'24;
# github.com/sungkyun123/MiDAS-Simulation), on the three reference placement traces at the
# simulator's geometry: 2 GB logical (its LOGSIZE = 2·10^9 B = 488,281 pages of 4 KiB) on 2 GiB
# of flash = 512 blocks ("segments") of 4 MiB, greedy, cleaning when fewer than 4 blocks are
# free (its FREENUM), 93.1 % utilization.
#
# The project never depends on the simulator: point MIDAS_SIM at a local build of it
# (`make` in its checkout gives ./ssdsimul; it needs Boost's lambert_w). Without it only the
# nandlab column is printed.
#
# Traces: ../shared/reference/placement_traces.c with N = 488,281 (so the trace's logical
# space is the simulator's), e.g. `placement_traces hotcold 488281 10 7 0.9 hc90`; nandlab
# reads its .mqsim file. The simulator first writes every page once itself, so it is given
# the trace without its sequential fill (the first N records), in its own format
# "timestamp type(1 = write) page bytes"; both then count the same host writes.
#
# Usage, from the repository root:
#   MIDAS_SIM=/path/to/ssdsimul experiments/placement/midas_side_by_side.sh [WORKDIR]
# WORKDIR (default /tmp/midas-side-by-side) holds the traces and logs. Takes about 10 minutes
# on 2 cores (the simulator sleeps 5 s per 2 GB of writes it reports).
set -euo pipefail
work=${1:-/tmp/midas-side-by-side}
ref=${REFERENCE_DIR:-../shared/reference}
n=488281
mkdir -p "$work"
cargo build --release -p nandlab-cli >/dev/null 2>&1 || cargo build --release -p nandlab-cli
nandlab=$PWD/target/release/nandlab
cc -O2 -o "$work/placement_traces" "$ref/placement_traces.c" -lm
declare -A kind=([hc90]="hotcold 0.9" [zipf1]="zipf 1.0" [zdrift1]="zipfdrift 1.0")
printf '%-8s %12s %12s %8s\n' trace nandlab MiDAS-sim diff
for t in hc90 zipf1 zdrift1; do
  set -- ${kind[$t]}
  if [ ! -s "$work/$t.mqsim" ]; then
    (cd "$work" && ./placement_traces "$1" $n 10 7 "$2" "$t" >/dev/null 2>&1
     rm -f "$t.ali.csv" "$t.oracle" "$t.property")
  fi
  ours=$("$nandlab" run --set workload.kind=trace --set workload.path="$work/$t.mqsim" \
    --set workload.format=mqsim --set workload.prefill=false --set workload.trace_timing=closed \
    --set device.blocks=512 --set device.pages_per_block=1024 \
    --set device.logical_bytes=$((n * 4096)) --set ftl.cleaning=greedy \
    --set ftl.gc_free_blocks_min=4 --set ftl.placement=midas \
    | awk '/^write amplification/ {print $3}')
  theirs=-
  diff=-
  if [ -n "${MIDAS_SIM:-}" ]; then
    [ -s "$work/$t.midas" ] ||
      awk -v n=$n 'NR > n { printf "%d 1 %d 4096\n", NR, $3 / 8 }' "$work/$t.mqsim" > "$work/$t.midas"
    "$MIDAS_SIM" "$work/$t.midas" greedy 2 4 > "$work/$t.sim.log" 2>&1
    theirs=$(awk '/^TOTAL WAF/ {print $3}' "$work/$t.sim.log")
    diff=$(awk -v a="$ours" -v b="$theirs" 'BEGIN { printf "%+.1f%%", (a / b - 1) * 100 }')
  fi
  printf '%-8s %12s %12s %8s\n' "$t" "$ours" "$theirs" "$diff"
done
