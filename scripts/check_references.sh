#!/usr/bin/env bash
# Every reference in the code and docs must lead to a file of this repository:
#   1. no "issue N" / "Issue #N" (project history belongs to git, not to the code);
#   2. no "SPEC §N" (the spec outside the repository is restated in docs/ALGORITHMS.md);
#   3. every "paper 00N" still written somewhere has its entry in docs/PAPERS.md;
#   4. every "ALGORITHMS.md §N" names a section docs/ALGORITHMS.md has.
# Searches crates/, python/, docs/ and README.md (binary files and build output aside). Prints
# each offender as path:line:text and exits 1 if there is any; exits 0 and prints nothing
# otherwise.
#   scripts/check_references.sh
set -euo pipefail
cd "$(dirname "$0")/.."

DIRS=(crates python docs README.md)
GREP=(grep -rnIE --exclude-dir=target --exclude-dir=.git)
status=0

fail() {
  echo "check_references: $1" >&2
  sed 's/^/  /' >&2
  status=1
}

# 1. History references.
if out=$("${GREP[@]}" '[Ii]ssue #?[0-9]+' "${DIRS[@]}"); then
  fail "issue numbers (state the technical content instead; history is in git):" <<<"$out"
fi

# 2. The spec outside the repository.
if out=$("${GREP[@]}" 'SPEC §' "${DIRS[@]}"); then
  fail "SPEC § references (use docs/ALGORITHMS.md §N, same N):" <<<"$out"
fi

# 3. Old paper numbers: each must be listed in docs/PAPERS.md.
missing=""
while IFS= read -r hit; do
  [ -n "$hit" ] || continue
  for n in $(grep -oiE 'paper 00[0-9]' <<<"${hit#*:*:}" | tr 'A-Z' 'a-z' | sort -u | tr ' ' '_'); do
    if ! grep -qi "${n/_/ }" docs/PAPERS.md; then
      missing+="$hit"$'\n'
      break
    fi
  done
done < <("${GREP[@]}" '[Pp]aper 00[0-9]' "${DIRS[@]}" | grep -v '^docs/PAPERS\.md:' || true)
if [ -n "$missing" ]; then
  fail "paper numbers with no entry in docs/PAPERS.md:" <<<"${missing%$'\n'}"
fi

# 4. Sections of docs/ALGORITHMS.md that do not exist.
sections=$(grep -oE '^#{2,3} [0-9]+(\.[0-9]+)?\.? ' docs/ALGORITHMS.md | grep -oE '[0-9]+(\.[0-9]+)?' || true)
dangling=""
while IFS= read -r hit; do
  [ -n "$hit" ] || continue
  for ref in $(grep -oE 'ALGORITHMS\.md\)? §[0-9]+(\.[0-9]+)?' <<<"${hit#*:*:}" | grep -oE '[0-9]+(\.[0-9]+)?$'); do
    if ! grep -qxF "$ref" <<<"$sections"; then
      dangling+="$hit"$'\n'
      break
    fi
  done
done < <("${GREP[@]}" 'ALGORITHMS\.md\)? §[0-9]' "${DIRS[@]}" || true)
if [ -n "$dangling" ]; then
  fail "docs/ALGORITHMS.md sections that do not exist:" <<<"${dangling%$'\n'}"
fi

exit "$status"
