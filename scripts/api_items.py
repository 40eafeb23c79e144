#!/usr/bin/env python3
"""Counts nandlab-core's public API: the items a dependent crate can name.

Builds rustdoc's JSON for the core (needs a nightly toolchain: `rustup toolchain install
nightly`) and walks it from the crate root through public modules and re-exports. Prints the
items by kind (modules, types, traits, functions, constants, aliases), the public inherent
methods of the reachable types, and their public fields; `--list` also prints each path.

    python3 scripts/api_items.py [--list] [--root REPO_CHECKOUT]

`--root` counts another checkout (e.g. an older commit in a `git worktree`), so a before and
after are two runs of this one script.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def rustdoc_json(root: Path, target: Path) -> dict:
    env = dict(os.environ, CARGO_TARGET_DIR=str(target))
    cmd = ["cargo", "+nightly", "rustdoc", "-q", "-p", "nandlab-core", "--lib", "--",
           "-Z", "unstable-options", "--output-format", "json"]
    subprocess.run(cmd, cwd=root, env=env, check=True)
    return json.loads((target / "doc" / "nandlab_core.json").read_text())


def kind_of(item: dict) -> str:
    inner = item["inner"]
    return next(iter(inner)) if isinstance(inner, dict) else inner


def count(doc: dict) -> tuple[collections.Counter, list[tuple[str, str]]]:
    index = doc["index"]
    seen: set[str] = set()
    kinds: collections.Counter = collections.Counter()
    paths: list[tuple[str, str]] = []

    def visit(item_id: object, path: str) -> None:
        key = str(item_id)
        if key in seen or key not in index:
            return
        seen.add(key)
        item = index[key]
        if item.get("crate_id", 0) != 0:
            return
        kind = kind_of(item)
        inner = item["inner"][kind]
        if kind == "module":
            if path:
                kinds["module"] += 1
                paths.append(("module", path))
            for child in inner["items"]:
                c = index.get(str(child))
                if c is not None and c["visibility"] == "public":
                    name = c.get("name") or (c["inner"].get("use", {}) or {}).get("name", "")
                    visit(child, f"{path}::{name}")
            return
        if kind == "use":
            target = inner.get("id")
            if target is not None:
                t = index.get(str(target))
                if t is not None and kind_of(t) == "module" and inner.get("is_glob"):
                    for child in t["inner"]["module"]["items"]:
                        visit(child, path)
                else:
                    visit(target, path)
            return
        kinds[kind] += 1
        paths.append((kind, path))
        if kind in ("struct", "enum", "union"):
            for impl_id in inner.get("impls", []):
                impl = index.get(str(impl_id))
                if impl is None:
                    continue
                body = impl["inner"]["impl"]
                if body.get("trait") is not None or body.get("is_synthetic") or body.get("blanket_impl"):
                    continue
                for a in body["items"]:
                    m = index.get(str(a))
                    if m is not None and m["visibility"] == "public":
                        kinds["inherent method or associated item"] += 1
                        paths.append(("method", f"{path}::{m['name']}"))
            fields = inner.get("kind", {})
            if isinstance(fields, dict) and "plain" in fields:
                for f in fields["plain"].get("fields", []):
                    fi = index.get(str(f))
                    if fi is not None and fi["visibility"] == "public":
                        kinds["public field"] += 1

    visit(doc["root"], "")
    return kinds, paths


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--list", action="store_true", help="print every path")
    ap.add_argument("--root", type=Path, default=REPO, help="the checkout to count")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        doc = rustdoc_json(args.root.resolve(), Path(tmp))
    kinds, paths = count(doc)
    extra = ("inherent method or associated item", "public field")
    items = sum(v for k, v in kinds.items() if k not in extra)
    print(f"items (modules, types, traits, functions, constants, aliases): {items}")
    for k in sorted(kinds):
        print(f"  {k}: {kinds[k]}")
    if args.list:
        for kind, path in sorted(paths, key=lambda p: p[1]):
            print(f"{kind} nandlab_core{path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
