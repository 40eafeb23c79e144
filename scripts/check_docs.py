#!/usr/bin/env python3
"""Docs checked against the code: the README's key table against `nandlab print-config --keys`,
and docs/ARCHITECTURE.md's file tree against the tree. Exit 1 listing every mismatch.

    python3 scripts/check_docs.py [NANDLAB_BINARY]

1. Every key a configuration may hold (`nandlab print-config --keys`: each section's fields and
   every policy's parameters) is in the first column of the README's "Configuration keys" table,
   and every key there is one of them (a key under a structured one, `workload.fs.files` under
   `workload.fs`, counts as that one's).
2. Every crate under crates/ has its entry in ARCHITECTURE's tree and every crate entry there is
   a crate; every `src/...` path named under nandlab-core exists, and every top-level module of
   nandlab-core's src/ is named; every `name.rs` or `dir/` path written in the tree exists in the
   crate it is written under; every top-level directory the tree names exists.

The binary defaults to target/ci/nandlab, then target/release/nandlab; without one, the script
builds it (`cargo build --profile ci -p nandlab-cli`).
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def binary() -> str:
    if len(sys.argv) > 1:
        return sys.argv[1]
    for p in ("target/ci/nandlab", "target/release/nandlab"):
        if (ROOT / p).exists():
            return str(ROOT / p)
    subprocess.run(["cargo", "build", "--profile", "ci", "-p", "nandlab-cli"], cwd=ROOT, check=True)
    return str(ROOT / "target/ci/nandlab")


def readme_keys() -> set[str]:
    text = (ROOT / "README.md").read_text()
    section = text.split("## Configuration keys", 1)[1].split("\n## ", 1)[0]
    keys = set()
    for line in section.splitlines():
        if not line.startswith("| `"):
            continue
        first = line.split("|")[1]
        keys.update(k for k in re.findall(r"`([a-z_]+\.[a-z_.]+)`", first))
    return keys


def check_keys() -> list[str]:
    out = subprocess.run([binary(), "print-config", "--keys"], capture_output=True, text=True)
    if out.returncode != 0:
        return [f"nandlab print-config --keys failed: {out.stderr.strip()}"]
    code = set(out.stdout.split())
    doc = readme_keys()

    def known(k: str) -> bool:
        return k in code or any(k.startswith(c + ".") for c in code)

    errors = [f"README: key `{k}` is no configuration key" for k in sorted(doc) if not known(k)]
    covered = {c for c in code if c in doc or any(d.startswith(c + ".") for d in doc)}
    errors += [
        f"README: the key table lacks `{k}` (nandlab print-config --keys lists it)"
        for k in sorted(code - covered)
    ]
    return errors


def tree_block() -> str:
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text()
    return text.split("```", 2)[1]


def check_tree() -> list[str]:
    errors = []
    block = tree_block()
    crates = {p.name for p in (ROOT / "crates").iterdir() if (p / "Cargo.toml").exists()}
    listed: dict[str, list[str]] = {}
    current = None
    for line in block.splitlines():
        m = re.match(r"^  (nandlab-[a-z]+)/", line)
        if m:
            current = m.group(1)
            listed[current] = []
        elif re.match(r"^[a-z]", line):
            current = None
            top = line.split()[0]
            if top.endswith("/") and not (ROOT / top).is_dir():
                errors.append(f"ARCHITECTURE: directory {top} does not exist")
        if current:
            listed[current].append(line)
    for c in sorted(crates - set(listed)):
        errors.append(f"ARCHITECTURE: crate {c} is missing from the tree")
    for c in sorted(set(listed) - crates):
        errors.append(f"ARCHITECTURE: {c} is in the tree but is no crate")
    for crate, lines in listed.items():
        if crate not in crates:
            continue
        text = "\n".join(lines)
        base = ROOT / "crates" / crate
        for path in re.findall(r"\b(src/[a-z_/]+(?:\.rs)?)", text):
            if not (base / path.rstrip("/")).exists():
                errors.append(f"ARCHITECTURE: {crate}/{path} does not exist")
        files = {str(p.relative_to(base)) for p in base.rglob("*.rs")}
        dirs = {str(p.relative_to(base)) + "/" for p in base.rglob("*") if p.is_dir()}
        for name in re.findall(r"(?<![\w./-])([a-z_]+(?:/[a-z_]+)*(?:\.rs|/))(?![\w])", text):
            if name.startswith("src/") or name in ("python/", "tests/"):
                continue
            if not any(f == name or f.endswith("/" + name) for f in files | dirs):
                errors.append(f"ARCHITECTURE: {crate}: `{name}` names no file or directory")
        if crate == "nandlab-core":
            for item in sorted((base / "src").iterdir()):
                if item.name in ("lib.rs",) or item.name.endswith("_tests.rs"):
                    continue
                name = f"src/{item.name}" + ("/" if item.is_dir() else "")
                if name not in text:
                    errors.append(f"ARCHITECTURE: nandlab-core's {name} is not in the tree")
    return errors


def main() -> int:
    errors = check_keys() + check_tree()
    for e in errors:
        print(f"check_docs: {e}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
