#!/usr/bin/env bash
# Plaintext A/B of two `nandlab` binaries (e.g. before and after a change to the NBD server):
# fio 4 KiB random writes, QD32, latency emulation off, fresh image per run, runs alternating
# A and B so that machine load drifts hit both alike. From the repository root:
#     bash experiments/serve/plain_ab.sh OLD_BIN NEW_BIN [SECONDS] [ROUNDS]
# Build the old one from a commit with e.g.
#     git worktree add /tmp/old COMMIT && (cd /tmp/old && CARGO_TARGET_DIR=/tmp/old-target \
#         cargo build --release -p nandlab-cli)      # binary: /tmp/old-target/release/nandlab
set -euo pipefail
a=$1
b=$2
secs=${3:-10}
rounds=${4:-3}
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$tmp"' EXIT
wait_port() { for _ in $(seq 100); do (echo > /dev/tcp/127.0.0.1/$1) 2>/dev/null && return 0; sleep 0.1; done; return 1; }
run_one() { # BIN PORT
  rm -f "$tmp/img"
  "$1" serve --image "$tmp/img" --listen 127.0.0.1:$2 --set device.logical_bytes=1073741824 \
      --set serve.emulate_latency=false > "$tmp/serve.log" 2>&1 &
  local spid=$!
  wait_port "$2"
  fio --name=ab --ioengine=nbd --uri="nbd://127.0.0.1:$2" --rw=randwrite --bs=4k --iodepth=32 \
      --size=512m --time_based --runtime="$secs" --output-format=json --output="$tmp/fio.json" >/dev/null
  kill -TERM $spid; wait $spid || true
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))["jobs"][0]; assert j["error"]==0; print(round(j["write"]["iops"]))' "$tmp/fio.json"
}
ra=()
rb=()
for r in $(seq "$rounds"); do
  ra+=("$(run_one "$a" 10921)")
  rb+=("$(run_one "$b" 10922)")
  echo "round $r: A ${ra[-1]} IOPS, B ${rb[-1]} IOPS"
done
python3 - "${ra[*]}" "${rb[*]}" <<'PY'
import sys
a = [int(x) for x in sys.argv[1].split()]
b = [int(x) for x in sys.argv[2].split()]
ma, mb = sum(a) / len(a), sum(b) / len(b)
print(f"A {round(ma)} IOPS (runs {a}); B {round(mb)} IOPS (runs {b}); B/A {mb / ma:.2f}")
PY
