#!/usr/bin/env python3
"""No mechanism compares a policy's name: a registered name appears in a comparison only in
the file that registers it (its `ENTRY`) or in its family's registry (`mod.rs`).

Collects every registered name (`name: "x"` or a `&str` constant in the files of the family
directories below), then scans the non-test Rust of every crate (comments and test code
stripped) for comparisons with a string literal — `== "x"`, `!= "x"`, `"x" =>`, `| "x"`,
`"x" |` — and reports those whose literal is a registered name, outside the owner's files.
Exits 1 on any.

    python3 scripts/check_policy_names.py
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "crates" / "nandlab-core" / "src"
# Each family's directory: its files register policies, its mod.rs holds the registry.
FAMILIES = [
    "allocation", "buffer", "engine/scheduler", "ftl/hybrid/recycling", "ftl_kinds", "gc",
    "placement", "wear", "workload/kinds",
]
NAME = re.compile(r'\bname:\s*"([a-z0-9-]+)"|const [A-Z_]+: &str = "([a-z0-9-]+)"')
# Files that compare a registered name as a value of their own parameter, with the reason.
OWN_VALUES = {
    "crates/nandlab-core/src/workload/kinds/phases.rs":
        "a phase's kind (uniform or hotcold) is a value of the phases kind's own parameter",
}
COMPARE = re.compile(
    r'(?:[=!]=\s*"([a-z0-9-]+)")|(?:"([a-z0-9-]+)"\s*(?:=>|\||[=!]=))|(?:\|\s*"([a-z0-9-]+)")'
)


def strip(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    # Test modules at the end of a file.
    m = re.search(r"#\[cfg\(test\)\]\s*mod\s+\w+\s*\{", text)
    return text[: m.start()] if m else text


def main() -> int:
    owners: dict[str, set[Path]] = {}
    for fam in FAMILIES:
        d = CORE / fam
        for f in d.glob("*.rs"):
            for m in NAME.finditer(f.read_text()):
                name = m.group(1) or m.group(2)
                owners.setdefault(name, set()).update({f, d / "mod.rs"})
    bad = []
    for f in sorted(ROOT.glob("crates/*/src/**/*.rs")):
        if f.name == "tests.rs" or f.name.endswith("_tests.rs"):
            continue
        if str(f.relative_to(ROOT)) in OWN_VALUES:
            continue
        text = strip(f.read_text())
        for m in COMPARE.finditer(text):
            name = next(g for g in m.groups() if g)
            if name in owners and f not in owners[name]:
                line = text.count("\n", 0, m.start()) + 1
                bad.append(f"{f.relative_to(ROOT)}:{line}: compares {name!r}")
    for b in bad:
        print(b)
    print(f"check_policy_names: {len(owners)} registered names, {len(bad)} comparisons outside "
          "their owners", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
