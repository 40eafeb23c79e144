#!/usr/bin/env bash
# The placement frontier beyond the three reference traces (RESULTS.md): every placement under
# greedy cleaning and under cost-benefit (SepBIT's simulator's form, `sqrt-append-age`) on
#   zipf.csv  the `zipf` workload kind, exponents 0.6, 0.8, 1.0, 1.2, without drift and with the
#             reference drift (top 20 % of ranks reshuffled every N/100 writes): 524,288 logical
#             4 KiB pages, blocks of 512 pages, prefill then 10 measured passes, the device
#             sized as the reference traces' (utilization 0.85 of what the reserve leaves);
#   real.csv  the block traces in ../shared/traces, replayed 40 times in closed loop on blocks of
#             64 pages at utilization 0.9, in two fittings of the trace's addresses: `chunk`
#             (touched erase-block-sized chunks packed together, the default) and `page` (touched
#             4 KiB pages packed together: the footprint is the written data, so the cleaner
#             works on every replay);
#   midas.csv the three reference kinds of trace at MiDAS's simulator's geometry (see
#             midas_side_by_side.sh: 488,281 logical pages, 512 blocks of 1,024 pages, 93.1 %
#             utilization, at least 4 free blocks, or the placement's own minimum if larger),
#             every placement; the traces are generated into $MIDAS_WORK (default
#             /tmp/midas-side-by-side, shared with that script) by ../shared/reference.
#
#   cargo build --release -p nandlab-cli
#   bash experiments/placement/frontier.sh [zipf|real|midas]...      (from the repository root)
#
# FRONTIER_PLACEMENTS (space-separated) picks placements, FRONTIER_TRACES (space-separated file
# names) the real traces, FRONTIER_OUT the CSV's directory (several runs in parallel write to
# different ones; the rows are the same); NANDLAB the binary. Each row names the
# commit and the overrides; the seed is the default (1). The traces are read where they are,
# never copied.
set -euo pipefail
here=${FRONTIER_OUT:-experiments/placement}
bin=${NANDLAB:-target/release/nandlab}
traces=${SHARED_TRACES:-../shared/traces}
placements=${FRONTIER_PLACEMENTS:-none dac sepbit warcip fadac midas lifetime oracle}
commit=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- crates || echo -dirty)
[ -x "$bin" ] || { echo "no $bin: cargo build --release -p nandlab-cli" >&2; exit 2; }
parts=${*:-zipf real midas}

# run KEY=VALUE...: one run; prints "wa,host_write_pages".
run() {
  local args=()
  for k in "$@"; do args+=(-s "$k"); done
  "$bin" run -q --json - "${args[@]}" | python3 -c '
import json, sys
m = json.load(sys.stdin)["metrics"]
print("%.6f,%d" % (m["write_amplification"], m["host_write_pages"]))'
}

regions_of() { case $1 in none) echo 1 ;; midas) echo 16 ;; *) echo 6 ;; esac; }

if [[ " $parts " == *" zipf "* ]]; then
  out=$here/zipf.csv
  echo "exponent,drift_fraction,cleaning,placement,wa,host_write_pages,blocks,commit,config" >"$out"
  for s in 0.6 0.8 1.0 1.2; do
    for drift in 0 0.2; do
      for cleaning in greedy cost-benefit; do
      for p in $placements; do
        r=$(regions_of "$p")
        kv=(workload.kind=zipf "workload.zipf_exponent=$s" "workload.zipf_drift_fraction=$drift"
          workload.warmup_passes=0 workload.passes=10 device.page_size_bytes=4096
          device.pages_per_block=512 device.logical_bytes=2147483648 "ftl.placement=$p"
          "ftl.regions=$r" "ftl.cleaning=$cleaning")
        [ "$cleaning" = cost-benefit ] && kv+=(ftl.cost_benefit_form=sqrt-append-age)
        args=()
        for k in "${kv[@]}"; do args+=(-s "$k"); done
        g=$("$bin" print-config "${args[@]}" | sed -n 's/^# derived:.*gc_free_blocks_min \([0-9][0-9]*\).*/\1/p')
        blocks=$(python3 -c "print(round(524288 / (0.85 * 512) + ($g - 0.5) + 0.5 * $r))")
        row=$(run "${kv[@]}" "device.blocks=$blocks")
        echo "$s,$drift,$cleaning,$p,$row,$blocks,$commit,\"${kv[*]} device.blocks=$blocks\"" | tee -a "$out"
      done
      done
    done
  done
fi

if [[ " $parts " == *" real "* ]]; then
  out=$here/real.csv
  echo "trace,fit,cleaning,placement,wa,host_write_pages,commit,config" >"$out"
  files=(msr-cambridge-hm0-excerpt/msr-cambridge1-sample.csv
    postmark-disksim-ssd/ssd-postmark-aligned2.trace.gz
    iozone-disksim-ssd/ssd-iozone-aligned2-100K.trace.gz tpcc-mqsim/tpcc-small.trace.gz
    umass-websearch-mqsim/wsrch-small.trace.gz tencent-cbs-excerpt/cloud_storage-sample.csv.gz
    systor17-excerpt/systor17-traces-sample.csv.gz
    systor17-excerpt/systor17-additional-sample.csv.gz
    cloudphysics-vscsi-excerpt/cloudPhysicsIO.csv.gz)
  for f in "${files[@]}"; do
    [ -f "$traces/$f" ] || { echo "skipped: no $traces/$f" >&2; continue; }
    if [ -n "${FRONTIER_TRACES:-}" ] && [[ " $FRONTIER_TRACES " != *" $(basename "$f") "* ]]; then
      continue
    fi
    for fit in chunk page; do
      for cleaning in greedy cost-benefit; do
        for p in $placements; do
          kv=(workload.kind=trace "workload.path=$traces/$f" workload.passes=40
            workload.trace_timing=closed device.utilization=0.9 device.pages_per_block=64
            "ftl.placement=$p" "ftl.regions=$(regions_of "$p")" "ftl.cleaning=$cleaning")
          [ "$cleaning" = cost-benefit ] && kv+=(ftl.cost_benefit_form=sqrt-append-age)
          [ "$fit" = page ] && kv+=(workload.compact_chunk_bytes=4096)
          row=$(run "${kv[@]}")
          echo "$(basename "$f"),$fit,$cleaning,$p,$row,$commit,\"${kv[*]}\"" | tee -a "$out"
        done
      done
    done
  done
fi

if [[ " $parts " == *" midas "* ]]; then
  out=$here/midas.csv
  work=${MIDAS_WORK:-/tmp/midas-side-by-side}
  n=488281
  mkdir -p "$work"
  cc -O2 -o "$work/placement_traces" "${REFERENCE_DIR:-../shared/reference}/placement_traces.c" -lm
  declare -A kind=([hc90]="hotcold 0.9" [zipf1]="zipf 1.0" [zdrift1]="zipfdrift 1.0")
  echo "trace,cleaning,placement,wa,host_write_pages,gc_free_blocks_min,commit,config" >"$out"
  for t in hc90 zipf1 zdrift1; do
    # The same generator arguments as midas_side_by_side.sh, so the two scripts share traces.
    set -- ${kind[$t]}
    if [ ! -s "$work/$t.mqsim" ]; then
      (cd "$work" && ./placement_traces "$1" $n 10 7 "$2" "$t" >/dev/null 2>&1
       rm -f "$t.ali.csv" "$t.oracle" "$t.property")
    fi
    for cleaning in greedy cost-benefit; do
      for p in $placements; do
        kv=(workload.kind=trace "workload.path=$work/$t.mqsim" workload.format=mqsim
          workload.prefill=false workload.trace_timing=closed device.blocks=512
          device.pages_per_block=1024 "device.logical_bytes=$((n * 4096))" "ftl.placement=$p"
          "ftl.regions=$(regions_of "$p")" "ftl.cleaning=$cleaning")
        [ "$cleaning" = cost-benefit ] && kv+=(ftl.cost_benefit_form=sqrt-append-age)
        args=()
        for k in "${kv[@]}"; do args+=(-s "$k"); done
        g=$("$bin" print-config "${args[@]}" | sed -n 's/^# derived:.*gc_free_blocks_min \([0-9][0-9]*\).*/\1/p')
        g=$((g > 4 ? g : 4))
        row=$(run "${kv[@]}" "ftl.gc_free_blocks_min=$g")
        echo "$t,$cleaning,$p,$row,$g,$commit,\"${kv[*]} ftl.gc_free_blocks_min=$g\"" | tee -a "$out"
      done
    done
  done
fi
