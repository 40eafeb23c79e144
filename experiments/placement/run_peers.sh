#!/usr/bin/env bash
# nandlab's data placements side by side with SepBIT's trace simulator (docs/ALGORITHMS.md §11).
#
#   bash experiments/placement/run_peers.sh [OUT.csv]      (from the repository root)
#
# 1. Builds the trace generator ../shared/reference/placement_traces.c (PLACEMENT_TRACES_C to
#    point elsewhere) and writes the three reference traces into $TRACES (default
#    /tmp/nandlab-placement-traces): hc90 (hot/cold 90/10), zipf1 (Zipf 1.0), zdrift1 (drifting
#    Zipf), 524,288 logical 4 KiB pages, fill + 10 × N random writes each.
# 2. Runs target/release/nandlab (NANDLAB to override; build it first) for every placement
#    (none, dac, sepbit, warcip, fadac, midas, lifetime, oracle) × cleaning (greedy;
#    cost-benefit in the form SepBIT's simulator uses, ftl.cost_benefit_form =
#    "sqrt-append-age") × trace, on the geometry matched to the simulator: 2 MiB segments
#    (blocks of 512 pages), 15 % of the flash spare once the reserve is set aside, six classes
#    (none: one; midas: its pool of 16), the whole trace measured from an empty
#    drive in closed loop. device.blocks = N / (0.85 × 512) + (gc_free_blocks_min − 0.5)
#    + 0.5 × regions, gc_free_blocks_min as `nandlab print-config` derives it.
# 3. With SEPBIT_CLASSPATH set (a build of the simulator's trace_replay sources and its jars:
#    commons-math3, commons-lang3, trove4j), runs gcsimulator.Simulator on the same traces
#    (NoSep, DAC, SepBIT, WARCIP, FADaC; Greedy and CostBenefit; 6 open segments; GC at 15 %
#    garbage; one JVM at a time with -XX:ParallelGCThreads=1).
#
# PEER_TRACES, PEER_PLACEMENTS and PEER_CLEANINGS (space-separated) run a subset.
#
# Writes OUT.csv (default experiments/placement/peers.csv): trace, placement, cleaning,
# simulator, write amplification, wall seconds, user CPU seconds, CPU ns per host write (user
# CPU; the least disturbed by other work on a shared machine), FTL table bytes per logical page
# (nandlab's `table_memory_bytes`; a placement's own per-page state is in `nandlab
# print-config`'s estimate), device blocks, commit, and the configuration overrides. Neither the peer
# simulator nor the files under /tmp are needed by anything else in the project.
set -euo pipefail
out=${1:-experiments/placement/peers.csv}
bin=${NANDLAB:-target/release/nandlab}
traces=${TRACES:-/tmp/nandlab-placement-traces}
gen_c=${PLACEMENT_TRACES_C:-../shared/reference/placement_traces.c}
commit=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- crates || echo -dirty)
trace_list=${PEER_TRACES:-hc90 zipf1 zdrift1}
placement_list=${PEER_PLACEMENTS:-none dac sepbit warcip fadac midas lifetime oracle}
cleaning_list=${PEER_CLEANINGS:-greedy cost-benefit}
[ -x "$bin" ] || { echo "no $bin: cargo build --release -p nandlab-cli" >&2; exit 2; }

mkdir -p "$traces"
if [ ! -s "$traces/zdrift1.mqsim" ]; then
  [ -f "$gen_c" ] || { echo "no $gen_c (set PLACEMENT_TRACES_C)" >&2; exit 2; }
  cc -O2 -o "$traces/placement_traces" "$gen_c" -lm
  (cd "$traces" && ./placement_traces hotcold 524288 10 7 0.9 hc90 \
    && ./placement_traces zipf 524288 10 7 1.0 zipf1 \
    && ./placement_traces zipfdrift 524288 10 7 1.0 zdrift1)
fi

echo "trace,placement,cleaning,simulator,wa,wall_seconds,user_seconds,cpu_ns_per_write,table_bytes_per_logical_page,blocks,commit,config" >"$out"
TIMEFORMAT=%U
base=(workload.kind=trace workload.format=mqsim workload.prefill=false workload.trace_timing=closed
  workload.warmup_passes=0 workload.passes=1 device.page_size_bytes=4096 device.pages_per_block=512
  device.logical_bytes=2147483648)
for trace in $trace_list; do
  for cleaning in $cleaning_list; do
    for placement in $placement_list; do
      regions=6
      [ "$placement" = none ] && regions=1
      [ "$placement" = midas ] && regions=16  # its pool of group regions (it picks its victims)
      kv=("${base[@]}" "workload.path=$traces/$trace.mqsim" "ftl.placement=$placement"
        "ftl.regions=$regions" "ftl.cleaning=$cleaning")
      [ "$cleaning" = cost-benefit ] && kv+=(ftl.cost_benefit_form=sqrt-append-age)
      args=()
      for k in "${kv[@]}"; do args+=(-s "$k"); done
      g=$("$bin" print-config "${args[@]}" | sed -n 's/^# derived:.*gc_free_blocks_min \([0-9][0-9]*\).*/\1/p')
      blocks=$(python3 -c "print(round(524288 / (0.85 * 512) + ($g - 0.5) + 0.5 * $regions))")
      json=$(mktemp)
      user=$( { time "$bin" run -q --json "$json" "${args[@]}" -s device.blocks="$blocks" >/dev/null 2>"$json.err"; } 2>&1 ) || { cat "$json.err" >&2; exit 1; }
      python3 - "$json" "$trace" "$placement" "$cleaning" "$blocks" "$commit" "${kv[*]:1} device.blocks=$blocks" "$user" >>"$out" <<'EOF'
import json, sys
path, trace, placement, cleaning, blocks, commit, config, user = sys.argv[1:]
m = json.load(open(path))["metrics"]
writes = m["host_write_pages"]
print(f'{trace},{placement},{cleaning},nandlab,{m["write_amplification"]:.6f},'
      f'{m["wall_seconds"]:.3f},{float(user):.3f},{1e9 * float(user) / writes:.1f},'
      f'{m["table_memory_bytes"] / 524288:.2f},{blocks},{commit},"{config}"')
EOF
      rm -f "$json" "$json.err"
      tail -1 "$out"
    done
  done
done

[ -n "${SEPBIT_CLASSPATH:-}" ] || { echo "SEPBIT_CLASSPATH unset: nandlab only" >&2; exit 0; }
declare -A scheme=([none]=NoSep [dac]=DAC [sepbit]=SepBIT [warcip]=WARCIP [fadac]=FADaC)
declare -A selection=([greedy]=Greedy [cost-benefit]=CostBenefit)
work=${SEPBIT_WORK:-/tmp/nandlab-sepbit-work}
for trace in $trace_list; do
  for cleaning in $cleaning_list; do
    for placement in $placement_list; do
      [[ -v "scheme[$placement]" ]] || continue  # no counterpart in the simulator
      w=$work/$trace-$placement-$cleaning
      rm -rf "$w"
      mkdir -p "$w/segments" "$w/indexmap" "$w/ondiskfifo" "$w/oracles"
      ln -s "$traces/$trace.oracle" "$w/oracles/0.oracle"
      echo "$traces/$trace.ali.csv" >"$w/list"
      opts=(--path "$w/list" --outputPrefix "$w/" --propertyPath "$traces/$trace.property"
        --oraclePath "$w/oracles" --selectionAlgorithm "${selection[$cleaning]}"
        --setSeparateMethod "${scheme[$placement]}" --setNumOpenSegments 6
        --setSystemGarbageProportionThreshold 0.15 --setSegmentSize 2097152 --setPickSegAmount 1
        --printGCInfo 0 --printSegmentInSummary 0 --indexMapType PureInMem --indexMapCache Null)
      start=$(date +%s.%N)
      user=$( { time (cd "$w" && java -Xmx4g -XX:ParallelGCThreads=1 -cp "$SEPBIT_CLASSPATH" gcsimulator.Simulator "${opts[@]}" >"$w/out.txt" 2>"$w/err.txt"); } 2>&1 )
      end=$(date +%s.%N)
      wa=$(sed -n 's/.*segment WA = \([0-9.]*\).*/\1/p' "$w/out.txt" | tail -1)
      python3 -c "s=$end-$start; u=float('$user'); print(f'$trace,$placement,$cleaning,sepbit-sim,$wa,{s:.3f},{u:.3f},{1e9*u/5767168:.1f},,,,\"${opts[*]}\"')" >>"$out"
      tail -1 "$out"
      rm -rf "$w"
    done
  done
done
