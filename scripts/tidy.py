#!/usr/bin/env python3
"""Style as checks: function length and file-level import circles, in every crate.

    python3 scripts/tidy.py            # the checks `make lint` runs; exit 1 on a violation
    python3 scripts/tidy.py --counts   # figures: functions over 70 / 100 lines, `as` casts,
                                       # circles, per crate

1. Function length. No non-test function of `crates/*/src` is longer than 100 lines (from its
   `fn` line to its closing brace), except those listed in `scripts/tidy_allowlist.txt` with their
   current length. The list only shrinks: an entry whose function grew, got shorter than the
   limit or is gone fails the check (update or delete the line). Test code — `tests.rs`,
   `*_tests.rs`, `#[cfg(test)]` items, `crates/*/tests` — is not checked.

2. File-level import circles. Within each crate, file A depends on file B when A names an item
   of B's module through a path (`use crate::x::y`, `crate::x::Y` in code, `super::z`, `self::w`,
   grouped imports included). A circle is a set of files that depend on each other round. A
   module's own submodules and its ancestors are left out of the graph: a `mod.rs` that
   registers its children (a family registry) and children that use the family's shared types
   are one unit by Rust's design; a circle between siblings or cousins is a knot a reader has to
   untie. There must be none.

Comments and string literals are ignored; the parse is lexical (no macro expansion), which is
enough for this code base's style.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CRATES = ROOT / "crates"
ALLOWLIST = ROOT / "scripts" / "tidy_allowlist.txt"
LIMIT = 100
SOFT_LIMIT = 70


# ---- lexing -------------------------------------------------------------------------------------


def strip(text: str) -> str:
    """Blanks comments, string and char literals (keeping newlines, so line numbers hold)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j == -1 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:]):
            hashes = re.match(r"r(#*)\"", text[i:]).group(1)
            end = text.find('"' + hashes, i + 2 + len(hashes))
            end = n if end == -1 else end + 1 + len(hashes)
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(re.sub(r"[^\n]", " ", text[i : j + 1]))
            i = j + 1
        elif c == "'" and re.match(r"'(\\.|[^\\'\n])'", text[i:]):
            m = re.match(r"'(\\.|[^\\'\n])'", text[i:])
            out.append(" " * len(m.group(0)))
            i += len(m.group(0))
        elif c == "'" and re.match(r"'\\u\{[0-9a-fA-F]+\}'", text[i:]):
            m = re.match(r"'\\u\{[0-9a-fA-F]+\}'", text[i:])
            out.append(" " * len(m.group(0)))
            i += len(m.group(0))
        else:
            out.append(c)
            i += 1
    return "".join(out)


def matching_brace(text: str, open_at: int) -> int:
    depth = 0
    for k in range(open_at, len(text)):
        if text[k] == "{":
            depth += 1
        elif text[k] == "}":
            depth -= 1
            if depth == 0:
                return k
    return len(text) - 1


def blank_cfg_test(text: str) -> str:
    """Blanks every item behind `#[cfg(test)]` (a `mod x;` line or a braced item)."""
    pat = re.compile(r"#\[cfg\(test\)\]")
    chars = list(text)
    for m in pat.finditer(text):
        j = m.end()
        semi, brace = text.find(";", j), text.find("{", j)
        end = semi if brace == -1 or (semi != -1 and semi < brace) else matching_brace(text, brace)
        for k in range(m.start(), end + 1):
            if chars[k] != "\n":
                chars[k] = " "
    return "".join(chars)


def is_test_file(path: Path) -> bool:
    return path.name == "tests.rs" or path.name.endswith("_tests.rs") or "tests" in path.parts


def source_files(crate: Path) -> list[Path]:
    return sorted(p for p in (crate / "src").rglob("*.rs") if not is_test_file(p.relative_to(crate)))


# ---- function length ----------------------------------------------------------------------------

FN = re.compile(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)")


def functions(path: Path) -> list[tuple[str, int, int]]:
    """`(name, first line, lines)` of every function with a body in `path` (test code blanked)."""
    text = blank_cfg_test(strip(path.read_text()))
    found = []
    for m in FN.finditer(text):
        # The body starts at the first `{` after the signature, unless a `;` (a declaration
        # without body, e.g. in a trait) comes first.
        brace, semi = text.find("{", m.end()), text.find(";", m.end())
        if brace == -1 or (semi != -1 and semi < brace):
            continue
        end = matching_brace(text, brace)
        first = text.count("\n", 0, m.start()) + 1
        last = text.count("\n", 0, end) + 1
        found.append((m.group(1), first, last - first + 1))
    return found


def long_functions(limit: int) -> dict[str, int]:
    out = {}
    for crate in sorted(CRATES.iterdir()):
        for path in source_files(crate):
            for name, _, lines in functions(path):
                if lines > limit:
                    out[f"{path.relative_to(ROOT)}::{name}"] = lines
    return out


def read_allowlist() -> dict[str, int]:
    allowed = {}
    if not ALLOWLIST.exists():
        return allowed
    for line in ALLOWLIST.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            key, lines = line.rsplit(None, 1)
            allowed[key] = int(lines)
    return allowed


def check_lengths() -> list[str]:
    errors = []
    found = long_functions(LIMIT)
    allowed = read_allowlist()
    for key, lines in sorted(found.items()):
        if key not in allowed:
            errors.append(f"{key}: {lines} lines (limit {LIMIT}): split it")
        elif lines > allowed[key]:
            errors.append(f"{key}: {lines} lines, allowlisted at {allowed[key]}: it may only shrink")
        elif lines < allowed[key]:
            errors.append(
                f"{key}: {lines} lines, allowlisted at {allowed[key]}: lower the entry in "
                f"{ALLOWLIST.relative_to(ROOT)} (the list only shrinks)"
            )
    for key in sorted(set(allowed) - set(found)):
        errors.append(
            f"{key}: allowlisted but no longer over {LIMIT} lines (or gone): delete its line in "
            f"{ALLOWLIST.relative_to(ROOT)}"
        )
    return errors


# ---- import circles -----------------------------------------------------------------------------


def module_of(crate: Path, path: Path) -> tuple[str, ...]:
    rel = path.relative_to(crate / "src").with_suffix("")
    parts = list(rel.parts)
    if parts in (["lib"], ["main"]):
        return ()
    if parts[-1] == "mod":
        parts.pop()
    return tuple(parts)


PATH_RE = re.compile(r"\b(crate|super|self)((?:\s*::\s*(?:\{[^;]*?\}|[A-Za-z_][A-Za-z0-9_]*))+)")


def expand(prefix: list[str], rest: str) -> list[list[str]]:
    """The paths a `::`-chain (possibly with `{...}` groups) names, each as a list of segments."""
    rest = rest.strip()
    if not rest.startswith("::"):
        return [prefix]
    rest = rest[2:].strip()
    if rest.startswith("{"):
        body = rest[1 : matching_brace(rest, 0)]
        items, depth, cur = [], 0, ""
        for c in body:
            if c == "," and depth == 0:
                items.append(cur)
                cur = ""
                continue
            depth += c == "{"
            depth -= c == "}"
            cur += c
        items.append(cur)
        paths = []
        for item in items:
            item = item.strip()
            if not item:
                continue
            m = re.match(r"([A-Za-z_][A-Za-z0-9_]*|\*)", item)
            if not m:
                continue
            if m.group(1) in ("self", "*"):
                paths.append(prefix)
                continue
            paths += expand(prefix + [m.group(1)], item[m.end() :])
        return paths
    m = re.match(r"([A-Za-z_][A-Za-z0-9_]*)", rest)
    if not m:
        return [prefix]
    return expand(prefix + [m.group(1)], rest[m.end() :])


def dependencies(crate: Path) -> dict[tuple[str, ...], set[tuple[str, ...]]]:
    files = {module_of(crate, p): p for p in source_files(crate)}
    graph: dict[tuple[str, ...], set[tuple[str, ...]]] = {m: set() for m in files}
    for module, path in files.items():
        text = blank_cfg_test(strip(path.read_text()))
        for m in PATH_RE.finditer(text):
            head = m.group(1)
            base = {"crate": [], "self": list(module), "super": list(module[:-1])}[head]
            for rel in expand([], m.group(2)):
                # `super::super::x`: each further `super` climbs one more level.
                up = base
                while rel and rel[0] == "super":
                    up, rel = up[:-1], rel[1:]
                segments = up + rel
                target = None
                for k in range(len(segments), -1, -1):
                    if tuple(segments[:k]) in files:
                        target = tuple(segments[:k])
                        break
                if target is None or target == module:
                    continue
                related = target[: len(module)] == module or module[: len(target)] == target
                if not related:
                    graph[module].add(target)
    return graph


def circles(graph: dict[tuple[str, ...], set[tuple[str, ...]]]) -> list[list[tuple[str, ...]]]:
    """Strongly connected components with more than one file (Tarjan)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v: tuple[str, ...]) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
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

    sys.setrecursionlimit(10000)
    for v in graph:
        if v not in index:
            visit(v)
    return out


def check_circles() -> list[str]:
    errors = []
    for crate in sorted(CRATES.iterdir()):
        if not (crate / "src").is_dir():
            continue
        for comp in circles(dependencies(crate)):
            names = ", ".join("::".join(m) or "(crate root)" for m in comp)
            errors.append(f"{crate.name}: files depend on each other round: {names}")
    return errors


# ---- counts -------------------------------------------------------------------------------------

CAST = re.compile(r"\bas\s+(?:u8|u16|u32|u64|u128|usize|i8|i16|i32|i64|i128|isize|f32|f64)\b")


def counts() -> None:
    print(f"{'crate':<18} {'fns>70':>7} {'fns>100':>8} {'as casts':>9} {'circles':>8}")
    for crate in sorted(CRATES.iterdir()):
        if not (crate / "src").is_dir():
            continue
        fns = [f for p in source_files(crate) for f in functions(p)]
        casts = sum(
            len(CAST.findall(blank_cfg_test(strip(p.read_text())))) for p in source_files(crate)
        )
        over70 = sum(1 for f in fns if f[2] > SOFT_LIMIT)
        over100 = sum(1 for f in fns if f[2] > LIMIT)
        n = len(circles(dependencies(crate)))
        print(f"{crate.name:<18} {over70:>7} {over100:>8} {casts:>9} {n:>8}")


def main() -> int:
    if "--counts" in sys.argv:
        counts()
        return 0
    if "--list" in sys.argv:
        for key, lines in sorted(long_functions(LIMIT).items()):
            print(f"{key} {lines}")
        return 0
    errors = check_lengths() + check_circles()
    for e in errors:
        print(f"tidy: {e}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
