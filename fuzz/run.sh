#!/usr/bin/env bash
# Coverage-guided fuzzing of nandlab (cargo-fuzz / libFuzzer), one target at a time.
#
#   fuzz/run.sh [SECONDS] [TARGET...]     default: 60 s each, every target
#
# Builds every target once, then for each target: replays its committed regressions
# (fuzz/regressions/<target>/) and seeds (fuzz/corpus/<target>/), and fuzzes it for SECONDS with
# `-timeout=$TIMEOUT -rss_limit_mb=2048` and its dictionary. The growing corpus lives in
# fuzz/work/<target>/ (not committed); crashes, hangs and out-of-memory inputs go to
# fuzz/artifacts/<target>/. Prints one summary line per target and appends them to
# fuzz/results/<date>-summary.txt. Exit status 1 when any target crashed, hung or ran out of
# memory.
#
# Environment: TIMEOUT (per input, seconds; default 10), SANITIZER (address (default) or none),
# JOBS (build jobs; default 2), RSS_LIMIT_MB (default 2048), NANDLAB_FUZZ_STRICT=1 (reproduce
# known findings instead of stepping around them; see README.md).
# Stable Rust is enough: RUSTC_BOOTSTRAP=1 lets it take libFuzzer's -Z flags.
set -euo pipefail

cd "$(dirname "$0")"
SECONDS_EACH=${1:-60}
shift || true
ALL_TARGETS=(trace_readers config run_small nbd_stream image_recovery)
TARGETS=("$@")
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=("${ALL_TARGETS[@]}")
TIMEOUT=${TIMEOUT:-10}
SANITIZER=${SANITIZER:-address}
RSS_LIMIT_MB=${RSS_LIMIT_MB:-2048}
export RUSTC_BOOTSTRAP=1
export CARGO_BUILD_JOBS=${JOBS:-2}

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "installing cargo-fuzz" >&2
    cargo install cargo-fuzz --locked
fi

dict_of() {
    case "$1" in
        trace_readers) echo dict/trace.dict ;;
        config | run_small) echo dict/config.dict ;;
        nbd_stream) echo dict/nbd.dict ;;
        *) echo "" ;;
    esac
}

# Scratch directories of fuzz processes that have ended.
cleanup_scratch() {
    for d in /dev/shm/nandlab-fuzz-* "${TMPDIR:-/tmp}"/nandlab-fuzz-*; do
        [ -d "$d" ] || continue
        pid=${d##*-}
        kill -0 "$pid" 2>/dev/null || rm -rf "$d"
    done
}

build_start=$(date +%s)
cargo fuzz build -s "$SANITIZER"
build_seconds=$(($(date +%s) - build_start))
echo "build: ${build_seconds}s (sanitizer $SANITIZER)"

mkdir -p results work artifacts
summary="results/$(date +%Y-%m-%d)-summary.txt"
status=0
for t in "${TARGETS[@]}"; do
    mkdir -p "work/$t" "artifacts/$t" "corpus/$t"
    dict=$(dict_of "$t")
    flags=(-timeout="$TIMEOUT" -rss_limit_mb="$RSS_LIMIT_MB" -artifact_prefix="artifacts/$t/"
           -print_final_stats=1)
    [ -n "$dict" ] && flags+=(-dict="$dict")
    log="work/$t.log"
    # Replay the regressions and seeds first (a regression that crashes stops here).
    replay=("corpus/$t")
    [ -d "regressions/$t" ] && replay+=("regressions/$t")
    if ! cargo fuzz run -s "$SANITIZER" "$t" "${replay[@]}" -- -runs=0 "${flags[@]}" >"$log.replay" 2>&1; then
        echo "$t: a committed regression or seed fails (see fuzz/$log.replay)" >&2
        status=1
    fi
    set +e
    cargo fuzz run -s "$SANITIZER" "$t" "work/$t" "corpus/$t" -- \
        -max_total_time="$SECONDS_EACH" "${flags[@]}" >"$log" 2>&1
    rc=$?
    set -e
    cleanup_scratch
    execs=$(grep -o 'stat::number_of_executed_units:[[:space:]]*[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || echo 0)
    rate=$(grep -o 'stat::average_exec_per_sec:[[:space:]]*[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || echo 0)
    rss=$(grep -o 'stat::peak_rss_mb:[[:space:]]*[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || echo 0)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || echo 0)
    ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || echo 0)
    corp=$(grep -o 'corp: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || echo 0)
    crashes=$(find "artifacts/$t" -type f -name 'crash-*' -newer "$log.replay" | wc -l)
    timeouts=$(find "artifacts/$t" -type f -name 'timeout-*' -newer "$log.replay" | wc -l)
    ooms=$(find "artifacts/$t" -type f -name 'oom-*' -newer "$log.replay" | wc -l)
    line="$(date -u +%FT%TZ) $t seconds=$SECONDS_EACH execs=$execs exec/s=$rate cov=$cov ft=$ft corpus=$corp crashes=$crashes timeouts=$timeouts ooms=$ooms peak_rss_mb=$rss sanitizer=$SANITIZER rc=$rc"
    echo "$line"
    echo "$line" >>"$summary"
    if [ "$rc" -ne 0 ] || [ $((crashes + timeouts + ooms)) -gt 0 ]; then
        status=1
        echo "  $t: see fuzz/$log and fuzz/artifacts/$t/ (fuzz/README.md: from a crash to a regression test)" >&2
    fi
done
echo "summary appended to fuzz/$summary"
exit $status
