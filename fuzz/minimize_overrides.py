#!/usr/bin/env python3
"""Shrinks a failing `nandlab run --set ...` command line (as printed by the run_small target
with NANDLAB_FUZZ_PRINT=1) to a minimal set of overrides that still shows PATTERN in the output.

Usage: python3 fuzz/minimize_overrides.py NANDLAB_BINARY PATTERN KEY=VALUE...
Use a debug build of the CLI (`cargo build -p nandlab-cli`: overflow checks on), as the fuzz
targets have. Each try has a 20 s limit (a hang counts as failing when PATTERN is "TIMEOUT").
"""
import subprocess
import sys


def fails(binary, pattern, sets):
    args = [binary, "run"]
    for s in sets:
        args += ["--set", s]
    try:
        p = subprocess.run(args, capture_output=True, text=True, timeout=20)
    except subprocess.TimeoutExpired:
        return pattern == "TIMEOUT"
    return pattern in p.stdout + p.stderr


def main():
    binary, pattern, sets = sys.argv[1], sys.argv[2], sys.argv[3:]
    assert fails(binary, pattern, sets), "the full list does not fail"
    changed = True
    while changed:
        changed = False
        for i in range(len(sets)):
            trial = sets[:i] + sets[i + 1:]
            if fails(binary, pattern, trial):
                sets = trial
                changed = True
                break
    print("nandlab run " + " ".join(f"--set '{s}'" for s in sets))


if __name__ == "__main__":
    main()
