#!/usr/bin/env python3
"""The module graph of nandlab-core: which top-level module refers to which.

Counts `crate::<module>` references (also inside grouped imports such as
`use crate::{flash::Media, gc}`) between the top-level modules of crates/nandlab-core/src, with
test code excluded (files named tests.rs or *_tests.rs, and `#[cfg(test)]` items). Prints the
edges with their counts and any cycle; exits 1 when the graph has a cycle.

    python3 scripts/module_graph.py [--dot]
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "crates" / "nandlab-core" / "src"


def top_modules() -> list[str]:
    mods = []
    for line in (SRC / "lib.rs").read_text().splitlines():
        m = re.match(r"\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", line)
        if m:
            mods.append(m.group(1))
    return mods


def strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def strip_cfg_test(text: str) -> str:
    """Remove every item preceded by #[cfg(test)] (a `mod x;` line or a braced block)."""
    out = []
    i = 0
    pat = re.compile(r"#\[cfg\(test\)\]")
    while True:
        m = pat.search(text, i)
        if not m:
            out.append(text[i:])
            break
        out.append(text[i : m.start()])
        j = m.end()
        # the item ends at the first ';' before any '{', or at the matching '}'
        semi = text.find(";", j)
        brace = text.find("{", j)
        if brace == -1 or (semi != -1 and semi < brace):
            i = semi + 1
            continue
        depth = 0
        k = brace
        while k < len(text):
            if text[k] == "{":
                depth += 1
            elif text[k] == "}":
                depth -= 1
                if depth == 0:
                    break
            k += 1
        i = k + 1
    return "".join(out)


def first_segments(group: str) -> list[str]:
    """The first path segment of every item of a `{...}` use group (top level only)."""
    segs = []
    depth = 0
    cur = ""
    for ch in group:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if depth == 0 and ch == ",":
            segs.append(cur)
            cur = ""
        elif depth >= 0:
            cur += ch
    segs.append(cur)
    names = []
    for s in segs:
        m = re.match(r"\s*(\w+)", s)
        if m:
            names.append(m.group(1))
    return names


def references(text: str, mods: set[str]) -> list[str]:
    refs = []
    for m in re.finditer(r"crate::(\{|\w+)", text):
        if m.group(1) == "{":
            depth = 1
            k = m.end()
            while depth and k < len(text):
                depth += {"{": 1, "}": -1}.get(text[k], 0)
                k += 1
            refs += [n for n in first_segments(text[m.end() : k - 1]) if n in mods]
        elif m.group(1) in mods:
            refs.append(m.group(1))
    return refs


def module_of(path: Path) -> str | None:
    rel = path.relative_to(SRC)
    if rel.parts[0] == "lib.rs":
        return None
    return rel.parts[0].removesuffix(".rs")


def is_test_file(path: Path) -> bool:
    return path.name == "tests.rs" or path.name.endswith("_tests.rs")


def graph() -> dict[tuple[str, str], int]:
    mods = set(top_modules())
    edges: dict[tuple[str, str], int] = {}
    for path in sorted(SRC.rglob("*.rs")):
        src_mod = module_of(path)
        if src_mod is None or is_test_file(path):
            continue
        text = strip_cfg_test(strip_comments(path.read_text()))
        for dst in references(text, mods):
            if dst != src_mod:
                edges[(src_mod, dst)] = edges.get((src_mod, dst), 0) + 1
    return edges


def cycles(edges: dict[tuple[str, str], int]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    adj: dict[str, list[str]] = {}
    for a, b in edges:
        adj.setdefault(a, []).append(b)
        adj.setdefault(b, [])
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in adj[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(adj):
        if v not in index:
            visit(v)
    return out


def main() -> int:
    edges = graph()
    if "--dot" in sys.argv:
        print("digraph nandlab_core {")
        for (a, b), n in sorted(edges.items()):
            print(f'  "{a}" -> "{b}" [label={n}];')
        print("}")
    else:
        for (a, b), n in sorted(edges.items()):
            print(f"{a:>10} -> {b:<10} {n:>4}")
    found = cycles(edges)
    if found:
        for comp in found:
            print("cycle among: " + ", ".join(comp), file=sys.stderr)
        return 1
    print(f"{len(edges)} edges between {len(top_modules())} modules; no cycle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
