"""A sweep's resumable result store: a directory with ``manifest.json`` and Parquet parts.

Layout (``nandlab sweep --out DIR``, ``nandlab.sweep(..., out=DIR)``)::

    DIR/manifest.json          what the sweep is: base config, grid keys, every point, version
    DIR/part-*.parquet         points as they finished, one file per batch (written atomically)
    DIR/results.parquet        all points in grid order, once the sweep is complete (compacted)

Each row is one point: ``point`` (its index in grid order), ``status`` (``ok`` or ``failed``),
``error_type``/``error``/``error_attributes`` for a failed point, the grid keys, the result's
scalar columns (config, metrics, seed, version: as `Result.to_frame`) and ``result_json`` (the
whole result, so `load` rebuilds exactly the rows an in-memory sweep returns).

A batch is written to a temporary name and renamed into place, so a sweep killed at any
moment (Ctrl-C, ``kill -9``) leaves only whole parts: it loses at most the points that were
running. Rerunning the same sweep skips every point already stored (failed points too: their
error is deterministic; ``retry_failed`` runs them again). A store remembers what it holds: a
different base config, grid or version is refused, naming what differs.
"""

from __future__ import annotations

import json
import os
import pathlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional, Union

from . import _native
from ._result import Result, _cell

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Manifest", "SweepStore", "SweepStoreError", "load_sweep", "read_manifest"]

FORMAT = "nandlab-sweep/1"
MANIFEST = "manifest.json"
RESULTS = "results.parquet"

# Columns of a stored row besides the grid keys and the result's scalars.
POINT, STATUS, ERROR_TYPE, ERROR, ERROR_ATTRIBUTES, RESULT_JSON = (
    "point",
    "status",
    "error_type",
    "error",
    "error_attributes",
    "result_json",
)


class SweepStoreError(_native.NandlabError):
    """A result store that cannot be used for this sweep (another grid, base config or
    version, or not a store at all); the message names what differs and what to do."""


def _json(value: Any) -> Any:
    """``value`` as JSON data (tuples as lists, paths as strings), for the manifest."""
    return json.loads(json.dumps(value, default=str))


@dataclass(frozen=True)
class Manifest:
    """What a store holds: the sweep's base config (``{"config": ...}`` for a mapping, or
    ``{"config_path": ..., "config_text": ...}`` for a TOML file), its keys, every point (the
    overrides of each, in grid order), the grid and seeds when it is a grid, and the version
    of the code that ran it."""

    base: dict[str, Any]
    keys: list[str]
    points: list[dict[str, Any]]
    grid: Optional[dict[str, list[Any]]]
    seeds: Optional[list[int]]
    version: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": self.version,
            "base": self.base,
            "keys": self.keys,
            "grid": self.grid,
            "seeds": self.seeds,
            "total": len(self.points),
            "points": self.points,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Manifest:
        return cls(
            base=dict(data["base"]),
            keys=list(data["keys"]),
            points=[dict(p) for p in data["points"]],
            grid=dict(data["grid"]) if data.get("grid") is not None else None,
            seeds=list(data["seeds"]) if data.get("seeds") is not None else None,
            version=str(data["version"]),
        )

    @classmethod
    def make(
        cls,
        base: dict[str, Any],
        keys: Sequence[str],
        points: Sequence[Mapping[str, Any]],
        grid: Optional[Mapping[str, Sequence[Any]]],
        seeds: Optional[Sequence[int]],
    ) -> Manifest:
        return cls(
            base=_json(base),
            keys=list(keys),
            points=[_json(dict(p)) for p in points],
            grid=_json({k: list(v) for k, v in grid.items()}) if grid is not None else None,
            seeds=[int(s) for s in seeds] if seeds is not None else None,
            version=_native.BUILD_VERSION,
        )

    def differences(self, other: Manifest) -> list[str]:
        """What differs between the sweep this store holds (``self``) and ``other``, in
        words; empty when they are the same sweep."""
        out: list[str] = []
        if self.version != other.version:
            out.append(
                f"it was run by {self.version!r}, this is {other.version!r} (results of "
                "different code are not mixed)"
            )
        if self.base != other.base:
            out.append(f"its base config differs: {_diff(self.base, other.base)}")
        if self.grid is not None and other.grid is not None:
            for key in dict.fromkeys([*self.grid, *other.grid]):
                if key not in other.grid:
                    out.append(f"its grid sweeps {key!r}, this one does not")
                elif key not in self.grid:
                    out.append(f"this grid sweeps {key!r}, the stored one does not")
                elif self.grid[key] != other.grid[key]:
                    out.append(f"grid {key!r} was {self.grid[key]!r}, now {other.grid[key]!r}")
            if list(self.grid) != list(other.grid) and set(self.grid) == set(other.grid):
                out.append(f"grid key order was {list(self.grid)}, now {list(other.grid)}")
            if self.seeds != other.seeds:
                out.append(f"seeds were {self.seeds}, now {other.seeds}")
        elif self.points != other.points:
            if len(self.points) != len(other.points):
                out.append(f"it holds {len(self.points)} points, this sweep has "
                           f"{len(other.points)}")
            else:
                i = next(i for i, (a, b) in enumerate(zip(self.points, other.points)) if a != b)
                out.append(f"point #{i} was {self.points[i]}, now {other.points[i]}")
        return out


def _diff(a: Any, b: Any, prefix: str = "") -> str:
    """The first place where two JSON values differ, as ``key: old -> new``."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in dict.fromkeys([*a, *b]):
            if a.get(key, _MISSING) != b.get(key, _MISSING):
                return _diff(a.get(key, _MISSING), b.get(key, _MISSING), f"{prefix}{key}.")
    shown = [("(unset)" if v is _MISSING else repr(v)) for v in (a, b)]
    return f"{prefix.rstrip('.') or 'the config'}: {shown[0]} -> {shown[1]}"


_MISSING = object()


def stored_row(index: int, point: Mapping[str, Any], outcome: Sequence[Any]) -> dict[str, Any]:
    """The stored row of a finished point: ``outcome`` is a worker's ``("ok", report JSON)``
    or ``("error", class name, message, attributes)`` (`nandlab._worker`)."""
    row: dict[str, Any] = {POINT: index, STATUS: "ok" if outcome[0] == "ok" else "failed"}
    row.update({key: _cell(value) for key, value in point.items()})
    if outcome[0] == "ok":
        result = Result.from_dict(json.loads(outcome[1]))
        row.update({k: v for k, v in result.scalars().items() if k not in row})
        row[RESULT_JSON] = outcome[1]
    else:
        _, error_type, message, attributes = outcome
        row.update(
            {
                ERROR_TYPE: error_type,
                ERROR: message,
                ERROR_ATTRIBUTES: json.dumps(dict(attributes), default=str),
            }
        )
    return row


class SweepStore:
    """An open store (see the module doc). `open` creates or checks it."""

    def __init__(self, path: pathlib.Path, manifest: Manifest) -> None:
        self.path = path
        self.manifest = manifest
        self._seq = 0

    @classmethod
    def open(cls, path: Union[str, os.PathLike[str]], manifest: Manifest) -> SweepStore:
        """The store at ``path`` for the sweep ``manifest`` describes: created when ``path``
        does not exist or is an empty directory; otherwise it must hold the same sweep.

        Raises:
            SweepStoreError: ``path`` holds another sweep (the message names each
                difference), or is a non-empty directory that is not a store.
        """
        root = pathlib.Path(path)
        file = root / MANIFEST
        if file.exists():
            stored = read_manifest(root)
            differences = stored.differences(manifest)
            if differences:
                raise SweepStoreError(
                    f"{root} holds another sweep: "
                    + "; ".join(differences)
                    + ". Use another --out directory (or delete this one) to start afresh."
                )
            return cls(root, stored)
        if root.exists() and (not root.is_dir() or any(root.iterdir())):
            raise SweepStoreError(
                f"{root} exists and is not a nandlab sweep store (no {MANIFEST}): name a new "
                "or empty directory"
            )
        root.mkdir(parents=True, exist_ok=True)
        _write_atomically(file, json.dumps(manifest.to_dict(), indent=1).encode())
        return cls(root, manifest)

    def row(self, index: int, outcome: Sequence[Any]) -> dict[str, Any]:
        """The row storing point ``index``'s ``outcome`` (see `stored_row`)."""
        return stored_row(index, self.manifest.points[index], outcome)

    def _files(self) -> list[pathlib.Path]:
        compacted = self.path / RESULTS
        parts = sorted(self.path.glob("part-*.parquet"))
        return ([compacted] if compacted.exists() else []) + parts

    def stored(self) -> pd.DataFrame:
        """Every stored row (all columns), one per point, in grid order."""
        import pandas as pd

        frames = [pd.read_parquet(f) for f in self._files()]
        frames = [f for f in frames if len(f)]
        if not frames:
            return pd.DataFrame(columns=[POINT, STATUS])
        frame = pd.concat(frames, ignore_index=True)
        # A point written twice (a compaction interrupted before its parts were removed)
        # keeps one row: they are the same deterministic run.
        frame = frame.drop_duplicates(subset=[POINT], keep="first")
        return frame.sort_values(POINT, kind="stable").reset_index(drop=True)

    def finished(self) -> dict[int, str]:
        """Point index -> status of every point stored."""
        import pandas as pd

        statuses: dict[int, str] = {}
        for f in self._files():
            part = pd.read_parquet(f, columns=[POINT, STATUS])
            for index, status in zip(part[POINT], part[STATUS]):
                statuses.setdefault(int(index), str(status))
        return statuses

    def forget(self, indexes: Sequence[int]) -> None:
        """Drops the stored rows of ``indexes`` (failed points to be run again): every file
        holding one is rewritten without it."""
        import pandas as pd

        drop = set(indexes)
        for f in self._files():
            part = pd.read_parquet(f)
            keep = part[~part[POINT].isin(drop)]
            if len(keep) == len(part):
                continue
            if len(keep):
                _write_frame(f, keep)
            else:
                f.unlink()

    def write(self, rows: Sequence[Mapping[str, Any]]) -> None:
        """Stores a batch of finished points (one Parquet file, renamed into place)."""
        import pandas as pd

        if not rows:
            return
        self._seq += 1
        name = f"part-{os.getpid()}-{_now_ns():020d}-{self._seq:06d}.parquet"
        _write_frame(self.path / name, pd.DataFrame(list(rows)))

    def compact(self) -> bool:
        """Folds every part into ``results.parquet`` (grid order). Returns False when the rows
        cannot share one file (a grid column holding values of different types): the parts
        then stay as they are, which `load` reads the same."""
        import pyarrow  # type: ignore[import-untyped,unused-ignore]

        parts = sorted(self.path.glob("part-*.parquet"))
        if not parts:
            return True
        frame = self.stored()
        try:
            _write_frame(self.path / RESULTS, frame)
        except (pyarrow.ArrowException, ValueError, TypeError):
            return False
        for p in parts:
            p.unlink()
        return True


def _now_ns() -> int:
    # Part names only need to sort by write order within one process and differ between
    # processes; the wall clock does both (it names files, it never enters a result).
    import time

    return time.time_ns()


def _write_atomically(path: pathlib.Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _write_frame(path: pathlib.Path, frame: pd.DataFrame) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        frame.to_parquet(tmp, index=False)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    os.replace(tmp, path)


# A point's record: (status, result JSON of an ok point, error message of a failed one).
Record = tuple[str, Optional[str], Optional[str]]


def load_records(stored: pd.DataFrame) -> dict[int, Record]:
    """Point index -> `Record` of every stored row."""
    records: dict[int, Record] = {}
    columns = stored.to_dict("list")
    errors = columns.get(ERROR, [None] * len(stored))
    results = columns.get(RESULT_JSON, [None] * len(stored))
    for index, status, result, error in zip(columns[POINT], columns[STATUS], results, errors):
        ok = status == "ok"
        records[int(index)] = (
            str(status),
            str(result) if ok else None,
            None if ok or not isinstance(error, str) else error,
        )
    return records


def frame_of(
    keys: Sequence[str],
    points: Sequence[Mapping[str, Any]],
    records: Mapping[int, Record],
    with_status: bool,
) -> pd.DataFrame:
    """The frame a sweep returns: per point with a record, in grid order, the point's values
    as given, then `Result.scalars` of its result. In-memory and stored sweeps build their
    rows here alike. ``with_status`` adds ``status`` and ``error`` columns (a failed point has
    only those and its point values)."""
    import pandas as pd

    rows: list[dict[str, Any]] = []
    for index, point in enumerate(points):
        record = records.get(index)
        if record is None:
            continue
        status, result_json, error = record
        row = {key: _cell(value) for key, value in point.items()}
        if result_json is not None:
            result = Result.from_dict(json.loads(result_json))
            row.update({k: v for k, v in result.scalars().items() if k not in row})
        if with_status:
            row[STATUS] = status
            row[ERROR] = error
        rows.append(row)
    if not rows:
        return pd.DataFrame(columns=list(keys))
    return pd.DataFrame(rows)


def load_sweep(path: Union[str, os.PathLike[str]]) -> pd.DataFrame:
    """The rows of the sweep stored at ``path`` (``nandlab sweep --out``), in grid order, with
    ``status`` and ``error`` columns; points not run yet are absent. The same rows
    ``nandlab.sweep(..., out=path)`` returns.

    Raises:
        SweepStoreError: ``path`` is not a sweep store.
    """
    root = pathlib.Path(path)
    manifest = read_manifest(root)
    store = SweepStore(root, manifest)
    return frame_of(manifest.keys, manifest.points, load_records(store.stored()), True)


def read_manifest(path: Union[str, os.PathLike[str]]) -> Manifest:
    """The manifest of the store at ``path``."""
    file = pathlib.Path(path) / MANIFEST
    try:
        return Manifest.from_dict(json.loads(file.read_text()))
    except FileNotFoundError:
        raise SweepStoreError(f"{path}: not a nandlab sweep store (no {MANIFEST})") from None
    except (ValueError, KeyError, TypeError) as e:
        raise SweepStoreError(f"{file}: not a nandlab sweep manifest ({e})") from None
