#!/usr/bin/env bash
# The proof that adding a policy is one new file plus one registry line, parameters
# included: in a scratch worktree of HEAD, add the toy cleaning policy `age-weighted` (one
# parameter, `ftl.age_exponent`) and the toy placement `round-robin` from examples/toy_policies,
# print each addition's diff size, then run examples/toy_policies/toy_policies.rs against them.
# The repository itself is not changed.
#
#   scripts/toy_policies.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
scratch=$(mktemp -d)
cleanup() {
  git -C "$root" worktree remove --force "$scratch/tree" >/dev/null 2>&1 || true
  rm -rf "$scratch"
}
trap cleanup EXIT
git -C "$root" worktree add --detach -q "$scratch/tree" HEAD
cd "$scratch/tree"
core=crates/nandlab-core/src
examples="$root/examples/toy_policies"
commit() { git -c user.name=toy -c user.email=toy@localhost commit -qm "$1"; }

cp "$examples/age_weighted.rs" "$core/gc/age_weighted.rs"
sed -i 's/^    random_d,$/&\n    age_weighted,/' "$core/gc/mod.rs"
git add -A
echo "== a cleaning policy with one parameter (ftl.cleaning = \"age-weighted\", ftl.age_exponent):"
git diff --cached --stat
commit "toy cleaning policy"

cp "$examples/round_robin.rs" "$core/placement/round_robin.rs"
sed -i 's/^    pub deb,$/&\n    round_robin,/' "$core/placement/mod.rs"
git add -A
echo "== a placement (ftl.placement = \"round-robin\"):"
git diff --cached --stat
commit "toy placement"

cp "$examples/toy_policies.rs" crates/nandlab-core/tests/toy_policies.rs
echo "== their test:"
CARGO_TARGET_DIR="$root/target" cargo test --profile ci -q -p nandlab-core --test toy_policies
