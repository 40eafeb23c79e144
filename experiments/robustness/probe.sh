#!/usr/bin/env bash
# Re-runs every case of the hostile-input probe against the built binary (and the
# Python package when .venv exists) and says, per case, whether the outcome is clean:
# the expected exit status, the expected words in the message (the key or file:line), no
# panic text, an end within the deadline, and under an address-space limit.
#
#   bash experiments/robustness/probe.sh            # prints a table, ends "N/N clean"
#
# Exit status 0 when every case is clean. Writes experiments/robustness/probe.txt.
set -uo pipefail
cd "$(dirname "$0")/../.."
NANDLAB=$PWD/target/release/nandlab
[ -x "$NANDLAB" ] || cargo build --release -p nandlab-cli >&2
DEADLINE=60            # seconds per case
ULIMIT_KIB=$((4 << 20)) # 4 GiB address space, the probe's "4 GB limit"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
OUT=experiments/robustness/probe.txt
total=0 clean=0

# case NAME EXPECTED_STATUS "NEEDLE|NEEDLE" -- ARGS...   (NEEDLEs are all required, in stderr)
case_() {
  local name=$1 want=$2 needles=$3; shift 4
  total=$((total + 1))
  local start end status verdict=clean
  start=$(date +%s.%N)
  (cd "$WORK" && timeout "$DEADLINE" bash -c "ulimit -v $ULIMIT_KIB; exec \"\$0\" \"\$@\"" \
      "$NANDLAB" "$@" >"$WORK/out" 2>"$WORK/err")
  status=$?
  end=$(date +%s.%N)
  [ "$status" = 124 ] && verdict="HANG (killed after ${DEADLINE}s)"
  [ "$status" != "$want" ] && [ "$verdict" = clean ] && verdict="status $status, wanted $want"
  grep -q panicked "$WORK/err" && verdict="PANIC"
  IFS='|' read -ra ns <<<"$needles"
  for n in "${ns[@]}"; do
    [ -n "$n" ] && ! grep -qF -- "$n" "$WORK/err" && [ "$verdict" = clean ] && verdict="message lacks '$n'"
  done
  [ "$verdict" = clean ] && clean=$((clean + 1))
  printf '%-58s %4s %7.2fs  %s\n' "$name" "$status" "$(echo "$end - $start" | bc)" "$verdict"
  [ "$verdict" = clean ] || sed 's/^/    /' "$WORK/err" | head -5
}

# check NAME COMMAND...: a shell check that prints "ok" when clean.
check() {
  local name=$1; shift
  total=$((total + 1))
  local got
  got=$(cd "$WORK" && timeout "$DEADLINE" bash -c "$*" 2>&1 | tail -1)
  if [ "$got" = ok ]; then clean=$((clean + 1)); printf '%-58s %4s %8s  clean\n' "$name" - -
  else printf '%-58s %4s %8s  %s\n' "$name" - - "$got"; fi
}

# One 4 EiB write per format (the probe's MSR line, and the same request in the others).
printf '128166385295514663,hm,0,Write,9056014336,4611686018427387904,2833\n' >"$WORK/huge-msr.csv"
printf '0,20941264,4611686018427387904,W,0.551706\n' >"$WORK/huge-spc.csv"
printf 'Timestamp,Response,IOType,LUN,Offset,Size\n1456095145.133076000,0.000806000,W,0,899056122368,4611686018427387904\n' >"$WORK/huge-systor.csv"
printf 'version,time,op,size,lbn\n1,5633898,2a,4611686018427387904,42932745\n' >"$WORK/huge-cloudphysics.csv"
# 2 x 10^17 ticks of 100 ns = 2 x 10^19 ns after the first record.
printf '128166385295514878,hm,0,Write,0,4096,10\n328166385295514878,hm,0,Write,0,4096,10\n' >"$WORK/late.csv"
printf '[device]\nblocks = 64\npages_per_block = = 3\n' >"$WORK/bad.toml"
C=262144
{
  printf '128166385295514878,hm,0,Write,%d,4096,10\n' $((3 * C))
  printf '128166385295514888,hm,0,Write,%d,4096,10\n' $C
  printf '128166385295514898,hm,0,Write,%d,8192,10\n' $((3 * C - 4096))
  printf '128166385295514908,hm,0,Read,%d,8192,10\n' $((3 * C - 4096))
} >"$WORK/split.csv"
printf '128166385295514878,hm,0,Read,0,4096,10\n128166385295514888,hm,0,Read,8192,4096,10\n' >"$WORK/reads.csv"

{
echo "# nandlab $("$NANDLAB" --version | cut -d' ' -f2-) · robustness probe · $(date -u +%F)"
printf '%-58s %4s %8s  %s\n' case exit time verdict
echo "## hangs"
case_ "read_fraction=1 on 64 blocks" 2 "workload.read_fraction" -- \
  run --set workload.read_fraction=1 --set device.blocks=64
for f in msr spc systor cloudphysics; do
  case_ "4 EiB request, compact fit ($f reader)" 2 "huge-$f.csv:" -- \
    run --set workload.kind=trace --set workload.path="huge-$f.csv" --set workload.format=$f \
    --set workload.fit=compact
done
echo "## unbounded memory"
case_ "/dev/zero as a trace (detected)" 2 "/dev/zero:1:|longer than" -- \
  run --set workload.kind=trace --set workload.path=/dev/zero
case_ "/dev/zero as a trace (msr)" 2 "/dev/zero:1:|longer than" -- \
  run --set workload.kind=trace --set workload.path=/dev/zero --set workload.format=msr
case_ "12 TiB device (run)" 2 "device.logical_bytes|12.0 TiB logical" -- \
  run --set device.logical_bytes=13194139533312
case_ "12 TiB device (serve), leaves no image" 2 "device.logical_bytes" -- \
  serve --set device.logical_bytes=13194139533312 --image big.img --listen 127.0.0.1:0
check "  ... and no image file is left behind" '[ ! -e big.img ] && echo ok || echo "big.img left behind"'
case_ "1 TiB device under a 4 GiB limit" 2 "device.logical_bytes|1.0 TiB logical" -- \
  run --set device.logical_bytes=1099511627776
case_ "device.page_size_bytes = 2^40" 2 "device.page_size_bytes" -- \
  run --set device.page_size_bytes=1099511627776
if [ -x .venv/bin/python ]; then
  check "Python: page_size_bytes = 2^40 raises ConfigError" \
    "'$PWD/.venv/bin/python' -c 'import nandlab
try:
    nandlab.run(set={\"device.page_size_bytes\": 2**40})
except nandlab.ConfigError as e:
    print(\"ok\" if e.key == \"device.page_size_bytes\" else e)'"
  check "Python: 1 TiB under run.memory_limit_bytes=4 GiB raises ConfigError" \
    "'$PWD/.venv/bin/python' -c 'import nandlab
try:
    nandlab.run(set={\"device.logical_bytes\": 2**40, \"run.memory_limit_bytes\": 2**32})
except nandlab.ConfigError as e:
    print(\"ok\" if e.key == \"device.logical_bytes\" else e)'"
fi
echo "## silent overflow"
for k in read_page_ns program_page_ns erase_block_ns transfer_page_ns; do
  case_ "timing.$k = 2^63-1" 2 "timing.$k" -- run --set "timing.$k=9223372036854775807"
done
case_ "Poisson rate 1e-12/s" 2 "workload.arrival_rate_per_s" -- \
  run --set workload.arrival=poisson --set workload.arrival_rate_per_s=1e-12
case_ "duration_s = 1e300" 2 "workload.duration_s" -- \
  run --set workload.arrival=poisson --set workload.duration_s=1e300
case_ "trace timestamp 2e19 ns after the first" 2 "late.csv:2:|timestamp" -- \
  run --set workload.kind=trace --set workload.path=late.csv
echo "## output errors"
check "run --json - | head -c 10: status 141, quiet" \
  "'$NANDLAB' run --json - --quiet --set run.sample_every_bytes=4096 --set device.blocks=64 2>err | head -c 10 >/dev/null; s=\${PIPESTATUS[0]}; [ \$s = 141 ] && [ ! -s err ] && echo ok || echo \"status \$s: \$(cat err)\""
check "run > /dev/full: status 2, 'No space left on device'" \
  "'$NANDLAB' run --quiet >/dev/full 2>err; s=\$?; [ \$s = 2 ] && grep -q 'No space left' err && ! grep -q panicked err && echo ok || echo \"status \$s: \$(cat err)\""
echo "## quietly accepted nonsense"
case_ "workload.format = bogus (synthetic)" 2 "workload.format" -- run --set workload.format=bogus
case_ "workload.fs.delete_order = bogus (uniform)" 2 "workload.fs" -- run --set workload.fs.delete_order=bogus
case_ "workload.fs.delete_order = bogus (postmark)" 2 "workload.fs.delete_order" -- \
  run --set workload.kind=postmark --set workload.fs.delete_order=bogus
case_ "arrival rate with closed arrivals" 2 "workload.arrival_rate_per_s" -- \
  run --set workload.arrival_rate_per_s=5
case_ "workload.path for a synthetic kind" 2 "workload.path" -- run --set workload.path=x.csv
case_ "TOML syntax error names the line" 2 "bad.toml|line 3" -- run bad.toml
echo "## fuzz findings"
for b in lru fab bplru cflru; do
  case_ "oracle placement behind a $b buffer" 2 "buffer.kind|oracle" -- \
    run --set ftl.placement=oracle --set buffer.kind=$b
done
echo "## accounting"
check "compact split request counts once (3 writes, 1 read)" \
  "'$NANDLAB' run --json - --quiet --set workload.kind=trace --set workload.path=split.csv --set workload.fit=compact --set workload.prefill=false | python3 -c 'import json,sys; m=json.load(sys.stdin)[\"metrics\"]; print(\"ok\" if (m[\"host_write_requests\"], m[\"host_read_requests\"]) == (3, 1) else (m[\"host_write_requests\"], m[\"host_read_requests\"]))'"
for b in lru fab bplru cflru; do
  check "prefill in a $b buffer not written back in the window" \
    "'$NANDLAB' run --json - --quiet --set workload.kind=trace --set workload.path=reads.csv --set workload.fit=fold --set device.blocks=64 --set buffer.kind=$b --set buffer.size_bytes=1048576 | python3 -c 'import json,sys; m=json.load(sys.stdin)[\"metrics\"]; print(\"ok\" if m[\"flash_program_pages\"] == 0 else m[\"flash_program_pages\"])'"
done
echo "$clean/$total clean"
} | tee "$OUT"
grep -q "^$total/$total clean" "$OUT" 2>/dev/null || tail -1 "$OUT" | grep -qE '^([0-9]+)/\1 clean$'
