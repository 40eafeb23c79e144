#!/usr/bin/env bash
# Run MQSim on the nandlab side-by-side benchmark and print one line per figure.
#
#   run.sh MQSIM_BINARY [OUTDIR]
#
# MQSIM_BINARY: an MQSim executable built from CMU-SAFARI/MQSim (see README.md; nandlab does not
# build, ship or need it). OUTDIR (default ${TMPDIR:-/tmp}/nandlab-mqsim) receives the cached
# trace, the filled-in configuration, MQSim's results XML and logs. Environment overrides:
# REQUESTS (1000000), PAGES (48000), INTERVAL_NS (600000), SEED (1).
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 || $1 == -h || $1 == --help ]]; then
    sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mqsim=$1
outdir=${2:-${TMPDIR:-/tmp}/nandlab-mqsim}
requests=${REQUESTS:-1000000}
pages=${PAGES:-48000}
interval_ns=${INTERVAL_NS:-600000}
seed=${SEED:-1}

[[ -x $mqsim && -f $mqsim ]] || { echo "run.sh: $mqsim is not an executable file" >&2; exit 1; }
[[ -x /usr/bin/time ]] || { echo "run.sh: /usr/bin/time (GNU time, for -v) is required" >&2; exit 1; }
mqsim=$(cd "$(dirname "$mqsim")" && pwd)/$(basename "$mqsim")
mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)
case $outdir in *'|'* | *'&'* | *'<'* | *'>'*)
    echo "run.sh: OUTDIR must not contain | & < or >" >&2; exit 1 ;;
esac

# The trace depends only on the generator's arguments, so it is kept and reused.
trace=$outdir/bench-r${requests}-p${pages}-i${interval_ns}-s${seed}.trace
if [[ ! -s $trace ]]; then
    echo "generating $trace" >&2
    python3 "$here/gen_trace.py" --requests "$requests" --pages "$pages" \
        --interval-ns "$interval_ns" --seed "$seed" -o "$trace.tmp"
    mv "$trace.tmp" "$trace"
fi

cp "$here/ssdconfig.xml" "$outdir/ssdconfig.xml"
sed "s|@TRACE@|$trace|" "$here/workload.xml" > "$outdir/workload.xml"
# MQSim names its results file after the workload file: workload.xml -> workload_scenario_1.xml.
rm -f "$outdir/workload_scenario_1.xml"

echo "running $mqsim on $requests requests (logs in $outdir)" >&2
# stdin from /dev/null: MQSim waits for a key press when it finishes (and on errors).
if ! (cd "$outdir" && /usr/bin/time -v -o time.txt "$mqsim" -i ssdconfig.xml -w workload.xml \
        < /dev/null > mqsim.stdout 2> mqsim.stderr); then
    echo "run.sh: MQSim failed; see $outdir/mqsim.stdout and $outdir/mqsim.stderr" >&2
    tail -n 5 "$outdir/mqsim.stdout" "$outdir/mqsim.stderr" >&2 || true
    exit 1
fi
[[ -s $outdir/workload_scenario_1.xml ]] || { echo "run.sh: MQSim wrote no results XML" >&2; exit 1; }

python3 "$here/parse_results.py" --results "$outdir/workload_scenario_1.xml" \
    --stdout "$outdir/mqsim.stdout" --time "$outdir/time.txt" \
    --config "$outdir/ssdconfig.xml" --trace "$trace"
