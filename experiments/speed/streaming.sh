#!/usr/bin/env bash
# A streaming, counts-only replay of generated block traces of 10 M and 100 M 4 KiB writes (the
# scale of today's cloud block-trace studies): requests per second and peak RSS, to show that the
# replay's memory does not grow with the trace's length (the trace is read as a stream by the
# replay, and by the count of its totals on a thread of its own, since the size is given).
#
#   bash experiments/speed/streaming.sh [WORKDIR]       (from the repository root)
#
# The traces come from ../shared/reference/placement_traces.c (hot/cold 90/10 over 2 GiB,
# 524,288 pages: `placement_traces hotcold 524288 MULT 7 0.9`, MULT 18 and 190, i.e. 9.96 M and
# 100.1 M writes; 0.25 and 2.5 GB in MQSim's text format), written into WORKDIR (default
# /tmp/nandlab-streaming; about 2.8 GB), never into the repository. The device is the placement
# experiments' matched one (device.blocks = N / (0.85 x 512) + 1.5 + 0.5 = 1207). NANDLAB picks
# the binary (default target/release/nandlab).
set -euo pipefail
work=${1:-/tmp/nandlab-streaming}
bin=$(realpath "${NANDLAB:-target/release/nandlab}")
ref=${REFERENCE_DIR:-../shared/reference}
[[ -x $bin ]] || { echo "no $bin: cargo build --release -p nandlab-cli" >&2; exit 2; }
mkdir -p "$work"
cc -O2 -o "$work/placement_traces" "$ref/placement_traces.c" -lm
printf 'commit %s\n' "$(git rev-parse --short HEAD 2>/dev/null || echo '?')"
printf '%-8s %12s %10s %8s %14s %12s %8s\n' trace requests "trace GB" "wall s" "requests/s" \
  "peak RSS MiB" WA
for mult in 18 190; do
  t=hc90x$mult
  if [[ ! -s $work/$t.mqsim ]]; then
    (cd "$work" && ./placement_traces hotcold 524288 "$mult" 7 0.9 "$t" > /dev/null 2>&1
     rm -f "$t.ali.csv" "$t.oracle" "$t.property")
  fi
  /usr/bin/time -v -o "$work/$t.time" "$bin" run -q --json "$work/$t.json" \
    --set workload.kind=trace --set "workload.path=$work/$t.mqsim" --set workload.format=mqsim \
    --set workload.prefill=false --set workload.trace_timing=closed \
    --set device.page_size_bytes=4096 --set device.pages_per_block=512 \
    --set device.logical_bytes=2147483648 --set device.blocks=1207 --set run.timing=off \
    > /dev/null
  python3 - "$work/$t.json" "$work/$t.time" "$work/$t.mqsim" "$t" <<'PY'
import json, os, re, sys
m = json.load(open(sys.argv[1]))["metrics"]
time_v = open(sys.argv[2]).read()
wall = time_v.split("Elapsed (wall clock) time (h:mm:ss or m:ss): ")[1].split("\n")[0]
parts = [float(p) for p in wall.split(":")]
seconds = sum(p * 60 ** i for i, p in enumerate(reversed(parts)))
rss_kib = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", time_v).group(1))
requests = m["host_write_requests"] + m["host_read_requests"]
gb = os.path.getsize(sys.argv[3]) / 1e9
print(f"{sys.argv[4]:<8} {requests:>12} {gb:>10.2f} {seconds:>8.2f} {requests / seconds / 1e6:>12.2f} M "
      f"{rss_kib / 1024:>12.1f} {m['write_amplification']:>8.3f}")
PY
done
