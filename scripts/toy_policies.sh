#!/usr/bin/env bash
# The proof that adding a policy is one new file plus one registry line, parameters
# included: in a scratch worktree of HEAD, add the toys of examples/toy_policies — a cleaning
# policy (`age-weighted`, a number parameter), a placement (`round-robin`, a list parameter), a
# buffer (`fifo`, a boolean parameter), a wear leveler (`fixed-delta`, a number parameter) and a
# workload kind (`hotspot`, a number parameter) — print each addition's diff size, then run
# examples/toy_policies/toy_policies.rs against them.
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

# add TOY_FILE DIR REGISTRY_FILE AFTER_LINE NEW_LINE WHAT: copy the toy in, add its registry
# line after AFTER_LINE, show the diff's size, commit.
add() {
  cp "$examples/$1" "$core/$2/$1"
  sed -i "s/^$4\$/&\n$5/" "$core/$3"
  git add -A
  echo "== $6:"
  git diff --cached --stat
  commit "$6"
}

add age_weighted.rs gc gc/mod.rs "    random_d," "    age_weighted," \
  'a cleaning policy with a number parameter (ftl.cleaning = "age-weighted", ftl.age_exponent)'
add round_robin.rs placement placement/mod.rs "    pub deb," "    round_robin," \
  'a placement with a list parameter (ftl.placement = "round-robin", ftl.round_robin_weights)'
add fifo.rs buffer buffer/mod.rs "    cflru," "    fifo," \
  'a buffer with a boolean parameter (buffer.kind = "fifo", buffer.fifo_refresh_on_hit)'
add fixed_delta.rs wear wear/mod.rs "    pub lazy," "    fixed_delta," \
  'a wear leveler with a number parameter (wear.kind = "fixed-delta", wear.fixed_delta)'
add hotspot.rs workload/kinds workload/kinds/mod.rs "    media_player," "    hotspot," \
  'a workload kind with a number parameter (workload.kind = "hotspot", workload.hotspot_fraction)'

cp "$examples/toy_policies.rs" crates/nandlab-core/tests/toy_policies.rs
echo "== their test:"
CARGO_TARGET_DIR="$root/target" cargo test --profile ci -q -p nandlab-core --test toy_policies
