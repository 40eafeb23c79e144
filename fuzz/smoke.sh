#!/usr/bin/env bash
# CI fuzz smoke run: build every target, replay the committed regressions and seeds, fuzz each
# target for SMOKE_SECONDS (default 15). About 2 minutes with a warm fuzz/target, plus the
# build (about 3 minutes from scratch on 2 cores with ASan). Exit status 1 on any crash, hang,
# out-of-memory or failing regression. The full-length run is `fuzz/run.sh 600`.
set -euo pipefail
cd "$(dirname "$0")"
start=$(date +%s)
TIMEOUT=${TIMEOUT:-10} ./run.sh "${SMOKE_SECONDS:-15}" "$@"
echo "fuzz smoke: $(($(date +%s) - start))s in all"
