#!/usr/bin/env bash
# Instruction counts of `nandlab bench` sections for two builds, under valgrind's callgrind.
#
#   scripts/bench_instructions.sh BEFORE_BINARY AFTER_BINARY [SECTION...] > counts.txt
#
# Wall-clock speed on a shared 2-core machine varies by ±15 % between identical runs; the number of
# instructions a run executes does not vary at all, so it shows small differences in the work per
# request that `make bench` cannot. It does not show stalls (cache misses, mispredicted branches): a
# change can add few instructions and still cost wall time, so compare both
# (experiments/bench/parallel-engine/README.md). SECTIONs default to `page hybrid`; each runs on a
# 4,096-block device to keep valgrind's 50x slowdown to about a minute and a half.
set -euo pipefail
if [[ $# -lt 2 ]]; then
    echo "usage: $0 BEFORE_BINARY AFTER_BINARY [page|hybrid|parallel ...]" >&2
    exit 2
fi
command -v valgrind >/dev/null || { echo "valgrind is not installed (Debian: apt-get install valgrind)" >&2; exit 2; }
before=$1 after=$2
shift 2
sections=("$@")
[[ ${#sections[@]} -gt 0 ]] || sections=(page hybrid)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
count() { # binary section -> instruction count
    local args=(bench --only "$2")
    [[ $2 == parallel ]] || args+=(--blocks 4096)
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" "$1" "${args[@]}" \
        >"$tmp/out" 2>"$tmp/err"
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$tmp/err"
}
printf '%-10s %16s %16s %8s\n' section before after ratio
for s in "${sections[@]}"; do
    b=$(count "$before" "$s")
    a=$(count "$after" "$s")
    printf '%-10s %16s %16s %8s\n' "$s" "$b" "$a" "$(python3 -c "print(f'{$a/$b:.3f}')")"
done
