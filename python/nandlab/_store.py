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

A store is read defensively: a manifest or part that cannot be read, is not what this code
writes, or is larger than the limits below (`MAX_MANIFEST_BYTES`, `MAX_STORE_FILE_BYTES`) is a
`SweepStoreError` naming the file and how to recover, never a Parquet or JSON error from inside.
"""

from __future__ import annotations

import json
import os
import pathlib
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional, Union

from . import _native
from ._errors import check_path as _check_path
from ._errors import file_kind, read_bounded
from ._result import Result, _cell

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Manifest", "SweepStore", "SweepStoreError", "load_sweep", "read_manifest"]

FORMAT = "nandlab-sweep/1"
MANIFEST = "manifest.json"
RESULTS = "results.parquet"

MAX_MANIFEST_BYTES = 256 << 20
"""The largest manifest read or written: a sweep of the most points a sweep takes (1,000,000,
`nandlab._sweep.MAX_POINTS`) with short values needs about 100 MiB."""

MAX_STORE_FILE_BYTES = 4 << 30
"""The largest Parquet file of a store read (a part, ``results.parquet``); the parts are not
compacted into a ``results.parquet`` larger than this (about 2 KB per point: 2 million points)."""

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
    version, not a store at all, a corrupt or unwritable file of it); the message names what
    differs or the file, and what to do."""


SweepStoreError.__module__ = "nandlab"  # as the package re-exports it


def _corrupt(file: pathlib.Path, reason: str) -> SweepStoreError:
    """The error for a store file that is not what this code writes."""
    if file.name == MANIFEST:
        return SweepStoreError(
            f"{file}: a corrupt sweep manifest ({reason}). Without it the stored points "
            f"cannot be matched to the sweep: remove the directory {file.parent} (or use "
            "another --out directory) to start afresh"
        )
    return SweepStoreError(
        f"{file}: a corrupt file of the sweep store {file.parent} ({reason}). Remove it and "
        "run the sweep again to run the points it held again, or use another --out directory"
    )


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
        """The manifest of its `to_dict` form. Raises ValueError saying what is wrong with
        data of another shape (a damaged or foreign file)."""
        if not isinstance(data, Mapping):
            raise ValueError(f"a JSON object expected, not {type(data).__name__}")
        if data.get("format") != FORMAT:
            raise ValueError(f"format {data.get('format')!r}, not {FORMAT!r}")
        for name, kind in (("base", dict), ("keys", list), ("points", list), ("version", str)):
            if not isinstance(data.get(name), kind):
                raise ValueError(f"{name!r} must be a JSON {kind.__name__}")
        points, keys = data["points"], data["keys"]
        if not all(isinstance(k, str) for k in keys):
            raise ValueError("'keys' must be strings")
        if not all(isinstance(p, dict) for p in points):
            raise ValueError("'points' must be JSON objects")
        if data.get("total", len(points)) != len(points):
            raise ValueError(f"'total' is {data.get('total')!r}, but it lists {len(points)} points")
        grid, seeds = data.get("grid"), data.get("seeds")
        if grid is not None and not (
            isinstance(grid, dict) and all(isinstance(v, list) for v in grid.values())
        ):
            raise ValueError("'grid' must map keys to lists")
        if seeds is not None and not (
            isinstance(seeds, list)
            and all(isinstance(s, int) and not isinstance(s, bool) for s in seeds)
        ):
            raise ValueError("'seeds' must be a list of integers")
        return cls(
            base=dict(data["base"]),
            keys=list(keys),
            points=[dict(p) for p in points],
            grid=dict(grid) if grid is not None else None,
            seeds=list(seeds) if seeds is not None else None,
            version=data["version"],
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
        # The parts this process wrote, as the Arrow tables it wrote (file name -> (size,
        # table)): `stored` takes them from here instead of reading them back.
        self._written: dict[str, tuple[int, Any]] = {}

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
        try:
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
                    f"{root} exists and is not a nandlab sweep store (no {MANIFEST}): name a "
                    "new or empty directory"
                )
        except OSError as e:  # e.g. a directory that cannot be listed
            raise SweepStoreError(f"{root}: cannot open the sweep store: {_reason(e)}") from None
        data = json.dumps(manifest.to_dict(), indent=1).encode()
        if len(data) > MAX_MANIFEST_BYTES:
            # It could not be read back to resume the sweep.
            raise SweepStoreError(
                f"the sweep's manifest would take {len(data) >> 20} MiB, more than the "
                f"{MAX_MANIFEST_BYTES >> 20} MiB a sweep store holds: split the sweep, or "
                "shorten its values"
            )
        try:
            root.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise SweepStoreError(
                f"{root}: cannot create the sweep store directory: {_reason(e)}"
            ) from None
        _write_atomically(file, data)
        return cls(root, manifest)

    def row(self, index: int, outcome: Sequence[Any]) -> dict[str, Any]:
        """The row storing point ``index``'s ``outcome`` (see `stored_row`)."""
        return stored_row(index, self.manifest.points[index], outcome)

    def _files(self) -> list[pathlib.Path]:
        compacted = self.path / RESULTS
        try:
            parts = sorted(self.path.glob("part-*.parquet"))
            has_compacted = os.path.lexists(compacted)
        except OSError as e:
            raise SweepStoreError(
                f"{self.path}: cannot list the sweep store: {_reason(e)}"
            ) from None
        return ([compacted] if has_compacted else []) + parts

    def _read(self, file: pathlib.Path, columns: Optional[list[str]] = None) -> pd.DataFrame:
        """One Parquet file of the store, checked: a regular file of at most
        `MAX_STORE_FILE_BYTES` whose rows are points of this sweep. Anything else raises
        SweepStoreError naming the file and how to recover."""
        import pandas as pd
        import pyarrow  # type: ignore[import-untyped,unused-ignore]

        _check_file(file)
        try:
            frame = pd.read_parquet(file, columns=columns)
        except (pyarrow.ArrowException, OSError, ValueError, TypeError, KeyError) as e:
            # A file truncated or overwritten by something else, or not Parquet at all.
            raise _corrupt(file, f"not a readable Parquet file: {_first_line(e)}") from None
        self._check_rows(file, frame, whole=columns is None)
        return frame

    def _own_table(self, file: pathlib.Path) -> Any:
        """The table of a part this process wrote, if the file is still that part (a regular
        file of the size written); None otherwise (then it is read and checked)."""
        mine = self._written.get(file.name)
        if mine is None or file.parent != self.path:
            return None
        try:
            info = file.stat()
        except OSError:
            return None
        if not stat.S_ISREG(info.st_mode) or info.st_size != mine[0]:
            return None
        return mine[1]

    def _read_table(self, file: pathlib.Path) -> Any:
        """`_read` of a whole file as an Arrow table (checked the same way): `stored` joins
        the tables before making one frame, which costs far less than joining a frame per
        part."""
        import pyarrow  # type: ignore[import-untyped,unused-ignore]
        import pyarrow.parquet  # type: ignore[import-untyped,unused-ignore]

        _check_file(file)
        try:
            table = pyarrow.parquet.read_table(file)
        except (pyarrow.ArrowException, OSError, ValueError, TypeError, KeyError) as e:
            raise _corrupt(file, f"not a readable Parquet file: {_first_line(e)}") from None
        checked = [c for c in (POINT, STATUS, RESULT_JSON) if c in table.column_names]
        self._check_rows(file, table.select(checked).to_pandas(), whole=True)
        return table

    def _check_rows(self, file: pathlib.Path, frame: pd.DataFrame, whole: bool) -> None:
        """The rows of ``file`` are points of this sweep, each ``ok`` (with its result, when
        the ``whole`` file was read) or ``failed``: what `finished`, `stored` and
        `load_records` rely on."""
        import pandas as pd

        missing = [c for c in (POINT, STATUS) if c not in frame.columns]
        if missing:
            raise _corrupt(file, f"no {' or '.join(missing)} column")
        if not len(frame):
            return
        last = len(self.manifest.points) - 1
        points = frame[POINT]
        if not pd.api.types.is_integer_dtype(points.dtype) or not points.between(0, last).all():
            raise _corrupt(file, f"its {POINT} column holds other values than points 0 to {last}")
        odd = set(frame[STATUS].tolist()) - {"ok", "failed"}
        if odd:
            shown = ", ".join(sorted(map(repr, odd))[:3])
            raise _corrupt(file, f"its {STATUS} column holds {shown}")
        if whole:
            ok = frame[frame[STATUS] == "ok"]
            if len(ok) and (
                RESULT_JSON not in ok.columns
                or not ok[RESULT_JSON].map(lambda v: isinstance(v, str)).all()
            ):
                raise _corrupt(file, f"a point stored as ok has no {RESULT_JSON}")

    def stored(self) -> pd.DataFrame:
        """Every stored row (all columns), one per point, in grid order."""
        import pandas as pd
        import pyarrow  # type: ignore[import-untyped,unused-ignore]

        tables = [self._own_table(f) or self._read_table(f) for f in self._files()]
        tables = [t for t in tables if t.num_rows]
        if not tables:
            return pd.DataFrame(columns=[POINT, STATUS])
        frame: pd.DataFrame
        try:
            frame = pyarrow.concat_tables(tables, promote_options="default").to_pandas()
        except (pyarrow.ArrowException, ValueError, TypeError):
            # Parts whose columns Arrow cannot join (a column of another type in an older
            # part): pandas joins them as it always did.
            frame = pd.concat([t.to_pandas() for t in tables], ignore_index=True)
        # A point written twice (a compaction interrupted before its parts were removed)
        # keeps one row: they are the same deterministic run.
        frame = frame.drop_duplicates(subset=[POINT], keep="first")
        return frame.sort_values(POINT, kind="stable").reset_index(drop=True)

    def finished(self) -> dict[int, str]:
        """Point index -> status of every point stored."""

        statuses: dict[int, str] = {}
        for f in self._files():
            part = self._read(f, columns=[POINT, STATUS])
            for index, status in zip(part[POINT], part[STATUS]):
                statuses.setdefault(int(index), str(status))
        return statuses

    def forget(self, indexes: Sequence[int]) -> None:
        """Drops the stored rows of ``indexes`` (failed points to be run again): every file
        holding one is rewritten without it."""

        drop = set(indexes)
        for f in self._files():
            part = self._read(f)
            keep = part[~part[POINT].isin(drop)]
            if len(keep) == len(part):
                continue
            self._written.pop(f.name, None)
            if len(keep):
                _write_frame(f, keep)
            else:
                _unlink(f)

    def write(self, rows: Sequence[Mapping[str, Any]]) -> None:
        """Stores a batch of finished points (one Parquet file, renamed into place)."""
        if not rows:
            return
        self._seq += 1
        name = f"part-{os.getpid()}-{_now_ns():020d}-{self._seq:06d}.parquet"
        table = _write_rows(self.path / name, rows)
        if table is not None:
            self._written[name] = ((self.path / name).stat().st_size, table)

    def compact(self, stored: Optional[pd.DataFrame] = None) -> bool:
        """Folds every part into ``results.parquet`` (grid order). Returns False when the rows
        cannot share one file (a grid column holding values of different types): the parts
        then stay as they are, which `load` reads the same. ``stored``: what `stored` just
        returned, when the caller has it (the parts are then not read twice)."""
        import pyarrow  # type: ignore[import-untyped,unused-ignore]

        files = self._files()
        parts = [f for f in files if f.name != RESULTS]
        if not parts:
            return True
        # A results.parquet the store would refuse to read back stays in parts.
        if sum(f.stat().st_size for f in files) > MAX_STORE_FILE_BYTES:
            return False
        frame = self.stored() if stored is None else stored
        try:
            _write_frame(self.path / RESULTS, frame)
        except (pyarrow.ArrowException, ValueError, TypeError):
            return False
        for p in parts:
            self._written.pop(p.name, None)
            _unlink(p)
        return True

    def file_of(self, index: int) -> pathlib.Path:
        """The file holding point ``index`` (the store's directory when none does): for
        naming the file of a damaged row."""
        import pandas as pd

        for f in self._files():
            try:
                if index in set(pd.read_parquet(f, columns=[POINT])[POINT].tolist()):
                    return f
            except Exception:  # only looking: the file's own error is reported elsewhere
                continue
        return self.path


def _now_ns() -> int:
    # Part names only need to sort by write order within one process and differ between
    # processes; the wall clock does both (it names files, it never enters a result).
    import time

    return time.time_ns()


def _reason(error: OSError) -> str:
    return str(error.strerror or error)


def _first_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__


def _unwritable(path: pathlib.Path, error: OSError) -> SweepStoreError:
    return SweepStoreError(
        f"{path}: cannot write to the sweep store: {_reason(error)} (a full disk, or a "
        "directory this user cannot write: free space or use another --out directory)"
    )


def _unlink(path: pathlib.Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    except OSError as e:
        raise _unwritable(path, e) from None


def _write_atomically(path: pathlib.Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise _unwritable(path, e) from None


def _check_file(file: pathlib.Path) -> None:
    """A store file is a regular file of at most `MAX_STORE_FILE_BYTES`."""
    try:
        info = file.stat()
    except OSError as e:
        raise _corrupt(file, f"cannot read it: {_reason(e)}") from None
    if not stat.S_ISREG(info.st_mode):
        raise _corrupt(file, f"{file_kind(info.st_mode)}, not a regular file")
    if info.st_size > MAX_STORE_FILE_BYTES:
        raise _corrupt(file, f"{info.st_size:,} bytes, more than the {MAX_STORE_FILE_BYTES:,} read")


def _write_rows(path: pathlib.Path, rows: Sequence[Mapping[str, Any]]) -> Any:
    """A batch of rows as one Parquet file, atomically. Written by pyarrow from the rows
    themselves: a point's part is on the sweep's path once per point, and going through a
    pandas frame costs about 3x as much (`experiments/speed/README.md`). Rows whose values
    Arrow cannot put in one column (a column of mixed types) go through pandas, as before.
    Returns the Arrow table written (None when pandas wrote the file)."""
    import pandas as pd
    import pyarrow  # type: ignore[import-untyped,unused-ignore]
    import pyarrow.parquet  # type: ignore[import-untyped,unused-ignore]

    # Columns from every row, not the first one's alone (which is what `from_pylist` takes):
    # a failed point's row has no result, and one written first in a batch would drop the
    # results of the ok points after it.
    keys = list(dict.fromkeys(k for row in rows for k in row))
    try:
        table = pyarrow.Table.from_pydict({k: [row.get(k) for row in rows] for k in keys})
    except (pyarrow.ArrowException, ValueError, TypeError):
        _write_frame(path, pd.DataFrame(list(rows)))
        return None
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        pyarrow.parquet.write_table(table, tmp)
        os.replace(tmp, path)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise _unwritable(path, e) from None
    return table


def _write_frame(path: pathlib.Path, frame: pd.DataFrame) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        frame.to_parquet(tmp, index=False)
        os.replace(tmp, path)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise _unwritable(path, e) from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


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
    store: Optional[SweepStore] = None,
) -> pd.DataFrame:
    """The frame a sweep returns: per point with a record, in grid order, the point's values
    as given, then `Result.scalars` of its result. In-memory and stored sweeps build their
    rows here alike. ``with_status`` adds ``status`` and ``error`` columns (a failed point has
    only those and its point values). ``store``: where the records were read, to name the
    file of a damaged result."""
    import pandas as pd

    rows: list[dict[str, Any]] = []
    for index, point in enumerate(points):
        record = records.get(index)
        if record is None:
            continue
        status, result_json, error = record
        row = {key: _cell(value) for key, value in point.items()}
        if result_json is not None:
            try:
                result = Result.from_dict(json.loads(result_json))
            except (ValueError, KeyError, TypeError) as e:
                if store is None:
                    raise
                raise _corrupt(
                    store.file_of(index), f"point #{index}'s result is damaged: {e}"
                ) from None
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
    root = pathlib.Path(_check_path(path, "path"))
    manifest = read_manifest(root)
    store = SweepStore(root, manifest)
    return frame_of(manifest.keys, manifest.points, load_records(store.stored()), True, store)


def read_manifest(path: Union[str, os.PathLike[str]]) -> Manifest:
    """The manifest of the store at ``path``: a JSON file of at most `MAX_MANIFEST_BYTES`
    in this code's format, else SweepStoreError naming the file and what to do."""
    root = pathlib.Path(path)
    file = root / MANIFEST
    if not root.is_dir():
        what = "does not exist" if not os.path.lexists(root) else "is not a directory"
        raise SweepStoreError(f"{path}: not a nandlab sweep store ({what})")
    if not os.path.lexists(file):
        raise SweepStoreError(f"{path}: not a nandlab sweep store (no {MANIFEST})")
    data = read_bounded(
        file,
        MAX_MANIFEST_BYTES,
        "a sweep manifest",
        lambda message: _corrupt(file, message.removeprefix(f"{file}: ")),
    )
    try:
        return Manifest.from_dict(json.loads(data))
    except (ValueError, KeyError, TypeError) as e:  # JSON or shape; UnicodeDecodeError too
        raise _corrupt(file, f"not a nandlab sweep manifest: {e}") from None
