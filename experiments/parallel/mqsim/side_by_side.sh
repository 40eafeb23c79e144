#!/usr/bin/env bash
# MQSim and nandlab, whole processes, on the same trace and geometry, interleaved (the machine
# is shared and noisy), best of N each: the timed-replay speed figure.
#
#   side_by_side.sh MQSIM_BINARY [OUTDIR] [N]
#
# The trace is run.sh's (gen_trace.py: 1,000,000 random 4 KiB writes over 48,000 pages, one per
# 600 us); MQSim gets run.sh's configuration (2 channels x 2 chips x 1 die x 2 planes x 128
# blocks x 64 pages, SLC 25/200/1500 us); nandlab gets the same device as `nandlab bench --only
# parallel` and replays the trace file itself (`workload.kind = "trace"`, its arrival times,
# timed: run.timing on). NANDLAB (default target/release/nandlab) picks the binary; N defaults
# to 3. nandlab never depends on MQSim; see README.md for building it.
set -euo pipefail
if [[ $# -lt 1 || $# -gt 3 || $1 == -h || $1 == --help ]]; then
    sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mqsim=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
outdir=${2:-${TMPDIR:-/tmp}/nandlab-mqsim}
rounds=${3:-3}
nandlab=$(realpath "${NANDLAB:-target/release/nandlab}")
[[ -x $nandlab ]] || { echo "no $nandlab: cargo build --release -p nandlab-cli" >&2; exit 1; }
# One MQSim run through run.sh generates the trace and the filled-in configuration.
"$here/run.sh" "$mqsim" "$outdir" > "$outdir.first.txt"
trace=$(ls "$outdir"/bench-r1000000-p48000-i600000-s1.trace)
sets=(device.page_size_bytes=4096 device.pages_per_block=64 device.gangs=2
  device.channels_per_gang=1 device.chips_per_channel=2 device.dies_per_chip=1
  device.planes_per_die=2 device.blocks=1024 device.logical_bytes=196608000
  timing.read_page_ns=25000 timing.program_page_ns=200000 timing.erase_block_ns=1500000
  timing.transfer_page_ns=10240 ftl.cleaning=greedy workload.kind=trace
  "workload.path=$trace" workload.format=mqsim workload.prefill=false)
args=()
for kv in "${sets[@]}"; do args+=(--set "$kv"); done
best() { sort -n | head -1; }
: > "$outdir/mqsim.walls"
: > "$outdir/nandlab.walls"
for ((i = 0; i < rounds; i++)); do
    s=$(date +%s%N)
    (cd "$outdir" && "$mqsim" -i ssdconfig.xml -w workload.xml < /dev/null > mqsim.stdout 2>&1)
    echo $(($(date +%s%N) - s)) >> "$outdir/mqsim.walls"
    s=$(date +%s%N)
    "$nandlab" run -q --json "$outdir/nandlab.json" "${args[@]}" > /dev/null
    echo $(($(date +%s%N) - s)) >> "$outdir/nandlab.walls"
done
printf 'commit %s, %s rounds, best wall time of each whole process\n' \
    "$(git rev-parse --short HEAD 2>/dev/null || echo '?')" "$rounds"
python3 - "$(best < "$outdir/mqsim.walls")" "$(best < "$outdir/nandlab.walls")" \
    "$outdir/nandlab.json" <<'PY'
import json, sys
m, n = int(sys.argv[1]) / 1e9, int(sys.argv[2]) / 1e9
r = json.load(open(sys.argv[3]))["metrics"]
requests = r["host_write_requests"] + r["host_read_requests"]
print(f"MQSim    {m:8.3f} s")
print(f"nandlab  {n:8.3f} s  ({requests} requests, WA {r['write_amplification']:.3f}, "
      f"{requests / n / 1e6:.2f} M requests/s)")
print(f"nandlab is {m / n:.1f}x MQSim")
PY
