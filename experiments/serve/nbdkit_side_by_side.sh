#!/usr/bin/env bash
# The served drive beside `nbdkit memory`: fio's nbd engine, 4 KiB random writes and reads at
# QD1 and QD32, latency emulation off (nandlab answers as soon as its work is done), 1 GiB
# exports, interleaved (the machine is shared), best of ROUNDS. Before the read runs, each
# export is written through once (512 MiB sequential), so reads hit data on both.
#
#   bash experiments/serve/nbdkit_side_by_side.sh [SECONDS] [ROUNDS]   (repository root, after
#                                                                       `make build`)
# NANDLAB_SERVE_ARGS adds `nandlab serve` options (e.g. `--busy-poll-us 0` to see the drive
# without busy polling).
# Needs fio (with its nbd engine) and nbdkit (Debian packages). Prints one row per test and the
# ratio nandlab ÷ nbdkit; the commit heads the output.
set -euo pipefail
secs=${1:-5}
rounds=${2:-3}
bin=$(realpath "${NANDLAB:-target/release/nandlab}")
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$tmp"' EXIT
wait_port() { for _ in $(seq 200); do (echo > /dev/tcp/127.0.0.1/$1) 2>/dev/null && return 0; sleep 0.05; done; return 1; }
fio_iops() { # uri rw iodepth
  fio --name=b --ioengine=nbd --uri="$1" --rw="$2" --bs=4k --iodepth="$3" --size=512m \
      --time_based --runtime="$secs" --output-format=json --output="$tmp/fio.json" > /dev/null
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))["jobs"][0]; print(round(j["write"]["iops"]+j["read"]["iops"]))' "$tmp/fio.json"
}
fill() { fio --name=f --ioengine=nbd --uri="$1" --rw=write --bs=1m --iodepth=4 --size=512m > /dev/null; }
start_nandlab() {
  rm -f "$tmp/a.img"
  "$bin" serve --image "$tmp/a.img" --listen 127.0.0.1:10911 --set device.logical_bytes=1073741824 \
      --set serve.emulate_latency=false ${NANDLAB_SERVE_ARGS:-} > "$tmp/serve.log" 2>&1 &
  spid=$!
  wait_port 10911
}
start_nbdkit() {
  nbdkit --exit-with-parent -f -p 10912 memory 1G &
  kpid=$!
  wait_port 10912
}
declare -A best
for ((r = 0; r < rounds; r++)); do
  for server in nandlab nbdkit; do
    if [[ $server == nandlab ]]; then start_nandlab; uri=nbd://127.0.0.1:10911; else start_nbdkit; uri=nbd://127.0.0.1:10912; fi
    fill "$uri"
    for test in randwrite:1 randwrite:32 randread:1 randread:32; do
      iops=$(fio_iops "$uri" "${test%%:*}" "${test##*:}")
      k=$server/$test
      [[ -z ${best[$k]:-} || $iops -gt ${best[$k]} ]] && best[$k]=$iops
    done
    if [[ $server == nandlab ]]; then kill -TERM "$spid"; wait "$spid" || true; else kill "$kpid"; wait "$kpid" 2>/dev/null || true; fi
  done
done
printf 'commit %s, %s s per test, best of %s interleaved rounds, serve options: %s\n' \
  "$(git rev-parse --short HEAD 2>/dev/null || echo '?')" "$secs" "$rounds" "${NANDLAB_SERVE_ARGS:-default}"
printf '%-14s %12s %12s %8s\n' test nandlab nbdkit ratio
for test in randwrite:1 randwrite:32 randread:1 randread:32; do
  n=${best[nandlab/$test]} k=${best[nbdkit/$test]}
  printf '%-14s %12s %12s %8s\n' "${test/:/ QD}" "$n" "$k" "$(python3 -c "print(f'{$n/$k:.3f}')")"
done
