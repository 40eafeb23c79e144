#!/usr/bin/env bash
# The served drive on the parallel sim-engine (acceptance figures), run from the repository
# root after `make build`:   bash experiments/serve/parallel_bench.sh [SECONDS]
#
# A device of 8 parallel units (2 gangs x 4 chips) with a slow array read (300 us, so that the
# device, not this 2-core machine's NBD round trips, bounds the IOPS), latency emulation on:
# 1. fio (nbd engine) 4 KiB random reads at QD 32 against `nandlab serve`, and the IOPS
#    `nandlab run` computes for the same device, workload and queue depth: their ratio.
# 2. fio 4 KiB random reads at QD 1: the served drive's median achieved latency against its
#    median simulated latency (from the stats file), and fio's client-side median, with the
#    client's own round trip (fio, libnbd, loopback TCP) measured against `nbdkit memory` when
#    nbdkit is installed: that part no server can remove.
# Needs fio with its nbd engine. Writes experiments/serve/results/parallel.txt.
set -euo pipefail
secs=${1:-20}
bin=target/release/nandlab
out=experiments/serve/results
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$tmp"' EXIT

device=(
  --set device.gangs=2 --set device.chips_per_channel=4
  --set device.logical_bytes=536870912 --set device.utilization=0.8
  --set timing.read_page_ns=300000
)
port=10911
wait_ready() { for _ in $(seq 600); do grep -q "listening on" "$1" 2>/dev/null && return 0; sleep 0.1; done; return 1; }
fio_run() { # rw iodepth bs json extra...
  local rw=$1 qd=$2 bs=$3 json=$4; shift 4
  fio --name=bench --ioengine=nbd --uri="nbd://127.0.0.1:$port" --rw="$rw" --bs="$bs" \
      --iodepth="$qd" --size=512m --output-format=json --output="$json" "$@" > /dev/null
}

serve() { # stats-file: starts the server on the image
  $bin serve --image "$tmp/p.img" --listen "127.0.0.1:$port" "${device[@]}" \
      --set serve.stats_interval_s=0.5 --stats-json "$1" > "$tmp/serve.log" 2>&1 &
  spid=$!
  wait_ready "$tmp/serve.log"
}
# Session 1: write every page once (reads of never-written pages do not touch the flash),
# then QD 32 random reads.
serve "$tmp/stats1.json"
fio_run write 32 1m "$tmp/fill.json"
fio_run randread 32 4k "$tmp/qd32.json" --time_based --runtime="$secs"
kill -TERM $spid; wait $spid || true
# Session 2, on the same image: QD 1 random reads alone, so that the stats file's achieved
# and simulated latency distributions cover them only.
serve "$tmp/stats2.json"
fio_run randread 1 4k "$tmp/qd1.json" --time_based --runtime="$secs"
kill -TERM $spid; wait $spid || true

# The client's round trip alone: the same QD 1 reads against an in-memory NBD server.
if command -v nbdkit >/dev/null; then
  nbdkit --exit-with-parent -f -p $port memory 512M > "$tmp/nbdkit.log" 2>&1 &
  kpid=$!
  for _ in $(seq 100); do fio_run randread 1 4k "$tmp/rt.json" --runtime=0.1 --time_based 2>/dev/null && break; sleep 0.1; done
  fio_run randread 1 4k "$tmp/rt.json" --time_based --runtime="$secs"
  kill $kpid; wait $kpid 2>/dev/null || true
fi

# The simulator's own figure: the same device, prefilled, random 4 KiB reads at QD 32.
$bin run "${device[@]}" --set workload.kind=uniform --set workload.read_fraction=0.999 \
    --set workload.passes=0.002 --set workload.warmup_passes=0 --set workload.queue_depth=32 \
    --json "$tmp/run.json" --quiet

python3 - "$tmp" "$secs" <<'PY' | tee "$out/parallel.txt"
import json, sys
tmp, secs = sys.argv[1], sys.argv[2]
qd32 = json.load(open(f"{tmp}/qd32.json"))["jobs"][0]["read"]
qd1 = json.load(open(f"{tmp}/qd1.json"))["jobs"][0]["read"]
run = json.load(open(f"{tmp}/run.json"))
sim_iops = run["metrics"]["iops"]
print(f"device: 2 gangs x 4 chips (8 units), 300 us array read, 10.24 us transfer; "
      f"{run['version']}")
print(f"QD32 random 4 KiB reads, {secs} s: fio on nandlab serve {qd32['iops']:.0f} IOPS; "
      f"nandlab run {sim_iops:.0f} IOPS; ratio {qd32['iops'] / sim_iops:.3f}")
p50 = qd1["clat_ns"]["percentile"]["50.000000"]
lat = json.load(open(f"{tmp}/stats2.json"))["serve"]["latency"]
sim, ach = lat["simulated_ns"]["p50"], lat["achieved_ns"]["p50"]
print(f"QD1 random 4 KiB reads, {secs} s ({lat['requests']} requests): server stats simulated "
      f"p50 {sim / 1e3:.1f} us, achieved p50 {ach / 1e3:.1f} us, ratio {ach / sim:.3f}; fio "
      f"median completion latency {p50 / 1e3:.1f} us (client side, ratio {p50 / sim:.3f})")
try:
    rt = json.load(open(f"{tmp}/rt.json"))["jobs"][0]["read"]["clat_ns"]["percentile"]["50.000000"]
except FileNotFoundError:
    rt = None
if rt is not None:
    print(f"QD1 client round trip alone (fio on nbdkit memory): median {rt / 1e3:.1f} us; fio on "
          f"nandlab serve minus it: {(p50 - rt) / 1e3:.1f} us, ratio to simulated "
          f"{(p50 - rt) / sim:.3f}")
PY
