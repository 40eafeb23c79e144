#!/usr/bin/env bash
# The placement bounds of README.md: builds the reference traces and the bounds explorer in a
# scratch directory (default /tmp/nandlab-bounds; nothing is written to the repository) and
# prints every figure. Needs a C compiler and ../shared/reference beside the checkout.
#   experiments/placement/bounds/run.sh [WORKDIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ref=${NANDLAB_REFERENCE:-$here/../../../../shared/reference}
work=${1:-/tmp/nandlab-bounds}
mkdir -p "$work"
cd "$work"
cc -O2 -o placement_traces "$ref/placement_traces.c" -lm
cc -O2 -Wall -o bounds "$here/bounds.c" -lm
cc -O2 -Wall -o truth "$here/truth.c" -lm
for spec in "hotcold 0.9 hc90" "zipf 1.0 zipf1" "zipfdrift 1.0 zdrift1"; do
  set -- $spec
  [[ -f $3.bin ]] || { ./placement_traces "$1" 524288 10 7 "$2" "$3" && python3 "$here/tobin.py" "$3.mqsim" "$3.bin"; }
done
./truth hotcold 524288 7 0.9 > hc90.truth
./truth zipf 524288 7 1.0 > zipf1.truth
for t in hc90 zipf1 zdrift1; do
  for p in none dac oracle; do echo "$t $(./bounds $t.bin $p)"; done
done
echo "hc90, true hot/cold class (6 classes, geometric bands):"
echo "  seen at the first write: $(./bounds hc90.bin rate hc90.truth)"
echo "  first write blind:       $(BLIND=1 ./bounds hc90.bin rate hc90.truth)"
tuned=0.0017013888888888886,0.007291666666666666,0.04375,0.75,4.5
echo "zipf1, true Zipf interval (6 classes):"
echo "  geometric bands x4:      $(./bounds zipf1.bin rate zipf1.truth)"
echo "  tuned bands:             $(BANDS=$tuned ./bounds zipf1.bin rate zipf1.truth)"
echo "  tuned bands, blind:      $(BLIND=1 BANDS=$tuned ./bounds zipf1.bin rate zipf1.truth)"
