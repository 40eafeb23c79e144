"""``nandlab sweep``: a sweep from the command line into a resumable result store.

    nandlab sweep [CONFIG.toml] [--set key=value]... --grid KEY=V1,V2,... [--grid ...]
                  [--seeds A-B] [--backend local|ray] [--address ADDR] [--jobs N] --out DIR
                  [--retry-failed] [--quiet]

Grid values are TOML scalars (``4``, ``0.85``, ``true``; anything else is a string), split at
commas; ``KEY=[...]`` gives them as a TOML array instead (for strings holding commas). Seeds are
``A-B`` (inclusive), or a comma list, each in 0 ..= 2**63 - 1, at most 1,000,000 points in all
(`nandlab._sweep.MAX_POINTS`). The store is ``DIR`` (see `nandlab._store`): rerunning the same
command runs only the points not stored yet. Exit status: 0 when every point ran, 1 when some
failed (their errors are stored and listed), 2 for a bad command line, configuration or store
(one line ``nandlab sweep: error: ...`` on stderr), 130 when interrupted.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys
import warnings
from collections.abc import Sequence
from typing import Any

from . import _native
from ._config import toml_loads
from ._store import SweepStoreError

__all__ = ["main", "parse_grid", "parse_seeds"]

USAGE = (
    "nandlab sweep [CONFIG.toml] [--set key=value]... --grid KEY=V1,V2,... [--grid ...]\n"
    "              [--seeds A-B] [--backend local|ray] [--address ADDR] [--jobs N] --out DIR\n"
    "              [--retry-failed] [--quiet]"
)


class _UsageError(Exception):
    pass


def _scalar(text: str) -> Any:
    """A grid value: a TOML scalar where it is one (integer, float, boolean), else a string."""
    t = text.strip()
    if t in ("true", "false"):
        return t == "true"
    for kind in (int, float):
        try:
            return kind(t.replace("_", ""))
        except ValueError:
            pass
    if len(t) >= 2 and t[0] == t[-1] and t[0] in "'\"":
        return t[1:-1]
    return t


def parse_grid(items: Sequence[str]) -> dict[str, list[Any]]:
    """``KEY=V1,V2,...`` (or ``KEY=[TOML array]``) items -> grid."""
    grid: dict[str, list[Any]] = {}
    for item in items:
        key, sep, values = item.partition("=")
        key = key.strip()
        if not sep or not key or not values.strip():
            raise _UsageError(f"--grid {item!r}: expected KEY=V1,V2,...")
        if key in grid:
            raise _UsageError(f"--grid names {key!r} twice")
        text = values.strip()
        if text.startswith("["):
            grid[key] = _toml_array(key, text)
        else:
            grid[key] = [_scalar(v) for v in text.split(",") if v.strip()]
        if not grid[key]:
            raise _UsageError(f"--grid {key}: no values")
    return grid


def _toml_array(key: str, text: str) -> list[Any]:
    loads = toml_loads()
    if loads is None:
        raise _UsageError(
            f"--grid {key}=[...] needs Python >= 3.11 or tomli; give V1,V2,... instead"
        )
    try:
        value = loads(f"v = {text}")["v"]
    except ValueError as e:  # the TOML decode error
        raise _UsageError(f"--grid {key}: {text!r} is not a TOML array ({e})") from None
    if not isinstance(value, list):
        raise _UsageError(f"--grid {key}: {text!r} is not a TOML array")
    return value


def parse_seeds(text: str) -> list[int]:
    """``A-B`` (inclusive) or ``S1,S2,...`` -> seeds, each in 0 ..= `MAX_SEED`, at most
    `MAX_POINTS` of them: checked before the list is built (``1-100000000000`` would not fit
    in memory)."""
    from ._sweep import MAX_POINTS, MAX_SEED

    is_range = "-" in text.strip().lstrip("-") and "," not in text
    try:
        if is_range:
            first, _, last = text.partition("-")
            seeds = [int(first), int(last)]
        else:
            seeds = [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise _UsageError(f"--seeds {text!r}: expected A-B or S1,S2,... (integers)") from None
    if not seeds:
        raise _UsageError(f"--seeds {text!r}: no seeds")
    for seed in seeds:
        if not 0 <= seed <= MAX_SEED:
            raise _UsageError(
                f"--seeds {text}: {seed} is out of range: seeds are 0 ..= {MAX_SEED} (2**63 - 1; "
                "config integers are TOML's signed 64-bit ones)"
            )
    if not is_range:
        return seeds
    a, b = seeds
    if b < a:
        raise _UsageError(f"--seeds {text}: {b} < {a}")
    if b - a + 1 > MAX_POINTS:
        raise _UsageError(
            f"--seeds {text}: {b - a + 1:,} seeds, more than the {MAX_POINTS:,} points a sweep "
            "runs (split the sweep)"
        )
    return list(range(a, b + 1))


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="nandlab sweep", usage=USAGE, add_help=True)
    p.add_argument("config", nargs="?", help="base config (TOML); defaults otherwise")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="base config override (repeatable)")
    p.add_argument("--grid", action="append", default=[], metavar="KEY=V1,V2,...",
                   help="a swept key and its values (repeatable; the first varies slowest)")
    p.add_argument("--seeds", help="run every grid point once per seed: A-B or S1,S2,...")
    p.add_argument("--backend", choices=["local", "ray"], default="local")
    p.add_argument("--address", help="Ray cluster: auto, ray://HOST:PORT (default: start one)")
    p.add_argument("--jobs", type=int, default=None,
                   help="points at once (default: the machine's CPUs)")
    p.add_argument("--out", required=True, help="result store directory (resumable)")
    p.add_argument("--retry-failed", action="store_true", help="run stored failed points again")
    p.add_argument("--shared-paths", action="store_true",
                   help="ray: every node sees the trace paths (do not ship traces)")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    return p


class _Exit(Exception):
    def __init__(self, status: int) -> None:
        self.status = status


def _parse(argv: Sequence[str]) -> argparse.Namespace:
    parser = _parser()
    # argparse exits on its own errors (status 2, usage on stderr) and on --help (status 0).
    try:
        return parser.parse_args(list(argv))
    except SystemExit as e:
        raise _Exit(int(e.code or 0)) from None


def main(argv: Sequence[str]) -> int:
    """Runs ``nandlab sweep`` with ``argv`` (the arguments after ``sweep``); returns the exit
    status."""
    from ._sweep import MAX_JOBS

    try:
        args = _parse(argv)
    except _Exit as e:
        return e.status
    try:
        grid = parse_grid(args.grid)
        if not grid:
            raise _UsageError("give at least one --grid KEY=V1,V2,...")
        seeds = parse_seeds(args.seeds) if args.seeds is not None else None
        jobs = args.jobs if args.jobs is not None else min(MAX_JOBS, os.cpu_count() or 1)
        if not 1 <= jobs <= MAX_JOBS:
            raise _UsageError(f"--jobs {jobs}: must be in 1 ..= {MAX_JOBS}")
        if args.address is not None and args.backend != "ray":
            raise _UsageError("--address names a Ray cluster: add --backend ray")
    except _UsageError as e:
        # As argparse reports its own usage errors: the usage, then the error line.
        sys.stderr.write(f"usage: {USAGE}\nnandlab sweep: error: {e}\n")
        return 2

    from ._store import MANIFEST, SweepStore, read_manifest
    from ._sweep import SweepWarning, sweep

    before = 0
    # (An empty --out is refused by `sweep` below, not read as the current directory here.)
    if args.out and os.path.exists(os.path.join(args.out, MANIFEST)):
        try:
            stored = SweepStore(pathlib.Path(args.out), read_manifest(args.out)).finished()
            before = sum(s == "ok" or not args.retry_failed for s in stored.values())
        except SweepStoreError as e:
            sys.stderr.write(f"nandlab sweep: error: {e}\n")
            return 2

    total = 1
    for values in grid.values():
        total *= len(values)
    total *= len(seeds) if seeds is not None else 1
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SweepWarning)
            frame = sweep(
                args.config,
                grid,
                jobs=jobs,
                seeds=seeds,
                progress=None if not args.quiet else False,
                set=list(args.set),
                backend=args.backend,
                address=args.address,
                out=args.out,
                retry_failed=args.retry_failed,
                ship_traces=not args.shared_paths,
            )
    except KeyboardInterrupt:
        return 130
    except (SweepStoreError, _native.NandlabError, ImportError, ValueError, RuntimeError) as e:
        sys.stderr.write(f"nandlab sweep: error: {e}\n")
        return 2
    except OSError as e:  # what the store and config checks do not name themselves
        where = f"{e.filename}: " if e.filename else ""
        sys.stderr.write(f"nandlab sweep: error: {where}{e.strerror or e}\n")
        return 2
    failed = frame[frame["status"] == "failed"] if len(frame) else frame
    print(
        f"{len(frame)} of {total} points in {args.out} ({len(frame) - before} run now, "
        f"{before} stored before; {len(failed)} failed); {_native.BUILD_VERSION}"
    )
    for _, row in failed.head(10).iterrows():
        point = ", ".join(f"{k}={row[k]!r}" for k in [*grid, *(['run.seed'] if seeds else [])])
        print(f"  failed: {point}: {row['error']}")
    if len(failed) > 10:
        print(f"  ... and {len(failed) - 10} more (the 'error' column of the store)")
    return 1 if len(failed) else 0

