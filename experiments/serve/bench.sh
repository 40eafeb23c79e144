#!/usr/bin/env bash
# nandlab serve benchmarks (its acceptance figures), run from the repository root after
# `make build`:   bash experiments/serve/bench.sh [SECONDS]
# 1. fio, nbd engine, 4 KiB random writes, QD32: nandlab serve (page FTL, file-backed image,
#    latency emulation off) against `nbdkit memory` in the same run.
# 2. Latency emulation on, QD1 4 KiB random writes and reads: achieved vs simulated latency,
#    from the server's stats file.
# 3. Mount time of a 16 GiB image (full OOB scan) after filling it with data.
# Needs fio (with its nbd engine) and nbdkit. Writes results to experiments/serve/results/.
set -euo pipefail
secs=${1:-10}
bin=target/release/nandlab
out=experiments/serve/results
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$tmp"' EXIT

wait_port() { for _ in $(seq 100); do (echo > /dev/tcp/127.0.0.1/$1) 2>/dev/null && return 0; sleep 0.1; done; return 1; }
# The server binds before it mounts: it is ready once it says so.
wait_ready() { for _ in $(seq 600); do grep -q "listening on" "$1" 2>/dev/null && return 0; sleep 0.1; done; return 1; }
fio_iops() { # uri rw iodepth extra...
  local uri=$1 rw=$2 qd=$3; shift 3
  fio --name=bench --ioengine=nbd --uri="$uri" --rw="$rw" --bs=4k --iodepth="$qd" \
      --size=512m --time_based --runtime="$secs" --output-format=json --output="$tmp/fio.json" \
      "$@" > /dev/null
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))["jobs"][0]; print(round(j["write"]["iops"]+j["read"]["iops"]))' "$tmp/fio.json"
}

echo "== fio 4 KiB random write, QD32, ${secs} s each"
$bin serve --image "$tmp/a.img" --listen 127.0.0.1:10901 --set device.logical_bytes=1073741824 \
    --set serve.emulate_latency=false > "$tmp/serve.log" 2>&1 &
spid=$!
wait_port 10901
nandlab_iops=$(fio_iops nbd://127.0.0.1:10901 randwrite 32)
kill -TERM $spid; wait $spid || true
nbdkit --exit-with-parent -f -p 10902 memory 1G &
kpid=$!
wait_port 10902
nbdkit_iops=$(fio_iops nbd://127.0.0.1:10902 randwrite 32)
kill $kpid; wait $kpid 2>/dev/null || true
ratio=$(python3 -c "print(f'{$nandlab_iops/$nbdkit_iops:.2f}')")
echo "nandlab serve: $nandlab_iops IOPS; nbdkit memory: $nbdkit_iops IOPS; ratio $ratio" | tee "$out/fio.txt"

echo "== latency emulation on, QD1 (simulated vs achieved)"
$bin serve --image "$tmp/b.img" --listen 127.0.0.1:10903 --set device.logical_bytes=268435456 \
    --set device.preset=mlc2011 --stats-json "$out/latency-stats.json" > "$tmp/serve2.log" 2>&1 &
spid=$!
wait_port 10903
fio_iops nbd://127.0.0.1:10903 randwrite 1 > /dev/null
fio_iops nbd://127.0.0.1:10903 randread 1 > /dev/null
kill -TERM $spid; wait $spid || true
python3 - "$out/latency-stats.json" <<'PY' | tee "$out/latency.txt"
import json, sys
s = json.load(open(sys.argv[1]))["serve"]["latency"]
r = s["relative_error_bp_ge_200us"]
print(f"requests {s['requests']}; simulated p50 {s['simulated_ns']['p50']/1e3:.0f} us; "
      f"achieved p50 {s['achieved_ns']['p50']/1e3:.0f} us")
print(f"|achieved - simulated| / simulated, simulated >= 200 us ({r['count']} requests): "
      f"p50 {r['p50']/100:.2f} %, p90 {r['p90']/100:.2f} %, p99 {r['p99']/100:.2f} %, "
      f"max {r['max']/100:.2f} %")
print(f"calibrated overhead {s['calibrated_overhead_ns']/1e3:.1f} us; "
      f"|achieved - simulated|: p50 {s['abs_error_ns']['p50']/1e3:.1f} us, "
      f"p99 {s['abs_error_ns']['p99']/1e3:.1f} us")
PY

echo "== mount time, 16 GiB image: full OOB scan vs checkpoint"
$bin serve --image "$tmp/c.img" --listen 127.0.0.1:10904 --set device.logical_bytes=17179869184 \
    --set serve.emulate_latency=false --set serve.recovery=checkpoint > "$tmp/serve3.log" 2>&1 &
spid=$!
wait_port 10904
# Fill a quarter with data so the scan finds programmed pages; a clean stop writes a checkpoint.
fio --name=fill --ioengine=nbd --uri=nbd://127.0.0.1:10904 --rw=write --bs=1m --iodepth=8 \
    --size=4g > /dev/null
kill -TERM $spid; wait $spid || true
: > "$out/mount.txt"
for mode in scan checkpoint; do
  $bin serve --image "$tmp/c.img" --listen 127.0.0.1:10904 --set serve.recovery=$mode \
      > "$tmp/serve-$mode.log" 2>&1 &
  spid=$!
  wait_ready "$tmp/serve-$mode.log"
  kill -TERM $spid; wait $spid || true
  echo "$mode: $(grep -o 'tables rebuilt from [^;]* in [0-9.]* s' "$tmp/serve-$mode.log")" | tee -a "$out/mount.txt"
done
ls -ls "$tmp/c.img" | awk '{print "image apparent size " $6 " B, allocated " $1 " KiB"}' | tee -a "$out/mount.txt"
