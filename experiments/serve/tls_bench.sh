#!/usr/bin/env bash
# TLS cost of `nandlab serve`: fio 4 KiB random writes, QD32, over TLS vs plaintext,
# in the same run, each against a fresh image with latency emulation off. Run from the
# repository root after `make build`:
#     bash experiments/serve/tls_bench.sh [SECONDS] [ROUNDS]
#
# Client: fio's nbd engine (libnbd). It takes an `nbds://` URI, but libnbd refuses the URI's
# local-file parameters (`tls-psk-file`, `tls-certificates`) unless the program opts in, which
# fio does not; so PSK cannot be used from fio. X.509 works: with no `tls-certificates`
# parameter libnbd reads the CA from `$HOME/.pki/libnbd/ca-cert.pem`, so fio runs with HOME
# pointing at a scratch directory holding the test CA. (qemu-img bench would also do TLS, but it
# is a different client with a different I/O path; comparing fio with fio isolates the TLS
# cost.) Certificates come from certtool (gnutls-bin); the server runs `--tls require`.
#
# Rounds alternate plain and TLS servers (fresh images each time) and the figures are the mean
# per mode; the ratio is TLS / plain. For reference, when nbdkit is installed, the same pair
# runs against `nbdkit memory` (a GnuTLS server): it shows how much of the ratio is the client's
# and the machine's TLS cost rather than ours. Results go to experiments/serve/results/tls.txt.
set -euo pipefail
secs=${1:-10}
rounds=${2:-3}
bin=target/release/nandlab
out=experiments/serve/results
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$tmp"' EXIT

for tool in fio certtool python3; do
  command -v $tool >/dev/null || { echo "tls_bench: needs $tool" >&2; exit 1; }
done

# Test PKI: a CA and a server certificate for 127.0.0.1.
certs=$tmp/certs
mkdir -p "$certs" "$tmp/home/.pki/libnbd"
printf 'cn = nandlab bench CA\nca\ncert_signing_key\n' > "$certs/ca.info"
printf 'cn = localhost\nip_address = 127.0.0.1\ntls_www_server\nencryption_key\nsigning_key\n' \
  > "$certs/server.info"
certtool --generate-privkey --outfile "$certs/ca-key.pem" 2>/dev/null
certtool --generate-self-signed --load-privkey "$certs/ca-key.pem" --template "$certs/ca.info" \
  --outfile "$certs/ca-cert.pem" 2>/dev/null
certtool --generate-privkey --outfile "$certs/server-key.pem" 2>/dev/null
certtool --generate-certificate --load-ca-certificate "$certs/ca-cert.pem" \
  --load-ca-privkey "$certs/ca-key.pem" --load-privkey "$certs/server-key.pem" \
  --template "$certs/server.info" --outfile "$certs/server-cert.pem" 2>/dev/null
cp "$certs/ca-cert.pem" "$tmp/home/.pki/libnbd/ca-cert.pem"

wait_port() { for _ in $(seq 100); do (echo > /dev/tcp/127.0.0.1/$1) 2>/dev/null && return 0; sleep 0.1; done; return 1; }

# run_one MODE PORT: fresh image, serve, fio, stop; prints IOPS.
run_one() {
  local mode=$1 port=$2 scheme=nbd
  local tls_args=()
  if [ "$mode" = tls ]; then
    tls_args=(--tls require --tls-certificates "$certs")
    scheme=nbds
  fi
  rm -f "$tmp/img"
  $bin serve --image "$tmp/img" --listen 127.0.0.1:$port --set device.logical_bytes=1073741824 \
      --set serve.emulate_latency=false "${tls_args[@]}" > "$tmp/serve-$mode.log" 2>&1 &
  local spid=$!
  wait_port $port
  HOME=$tmp/home fio --name=bench --ioengine=nbd --uri="$scheme://127.0.0.1:$port" \
      --rw=randwrite --bs=4k --iodepth=32 --size=512m --time_based --runtime="$secs" \
      --output-format=json --output="$tmp/fio.json" > /dev/null
  kill -TERM $spid; wait $spid || true
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))["jobs"][0]; assert j["error"]==0; print(round(j["write"]["iops"]))' "$tmp/fio.json"
}

# nbdkit_one MODE PORT: the same fio job against `nbdkit memory 1G`; prints IOPS.
nbdkit_one() {
  local mode=$1 port=$2 scheme=nbd
  local tls_args=()
  if [ "$mode" = tls ]; then
    tls_args=(--tls=require --tls-certificates="$certs")
    scheme=nbds
  fi
  nbdkit --exit-with-parent -f -p "$port" "${tls_args[@]}" memory 1G 2> "$tmp/nbdkit.log" &
  local kpid=$!
  wait_port $port
  HOME=$tmp/home fio --name=bench --ioengine=nbd --uri="$scheme://127.0.0.1:$port" \
      --rw=randwrite --bs=4k --iodepth=32 --size=512m --time_based --runtime="$secs" \
      --output-format=json --output="$tmp/fio.json" > /dev/null
  kill $kpid; wait $kpid 2>/dev/null || true
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))["jobs"][0]; assert j["error"]==0; print(round(j["write"]["iops"]))' "$tmp/fio.json"
}

plain=()
tls=()
kplain=()
ktls=()
for r in $(seq "$rounds"); do
  plain+=("$(run_one plain 10911)")
  tls+=("$(run_one tls 10912)")
  echo "round $r: nandlab plain ${plain[-1]} IOPS, TLS ${tls[-1]} IOPS"
  if command -v nbdkit >/dev/null; then
    kplain+=("$(nbdkit_one plain 10913)")
    ktls+=("$(nbdkit_one tls 10914)")
    echo "round $r: nbdkit memory plain ${kplain[-1]} IOPS, TLS ${ktls[-1]} IOPS"
  fi
done
python3 - "$secs" "${plain[*]}" "${tls[*]}" "${kplain[*]}" "${ktls[*]}" <<'PY' | tee "$out/tls.txt"
import sys
def ints(s): return [int(x) for x in s.split()]
secs, p, t, kp, kt = sys.argv[1], ints(sys.argv[2]), ints(sys.argv[3]), ints(sys.argv[4]), ints(sys.argv[5])
mean = lambda v: sum(v) / len(v)
print(f"fio randwrite 4 KiB QD32, {secs} s x {len(p)} rounds, latency emulation off, TLS = x509 --tls require")
print(f"nandlab serve plain: {round(mean(p))} IOPS (runs {p})")
print(f"nandlab serve TLS:   {round(mean(t))} IOPS (runs {t})")
print(f"nandlab serve ratio TLS/plain: {mean(t) / mean(p):.2f}")
if kp:
    print(f"reference, nbdkit memory: plain {round(mean(kp))}, TLS {round(mean(kt))} IOPS, "
          f"ratio {mean(kt) / mean(kp):.2f}")
PY
