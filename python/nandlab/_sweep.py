"""`sweep`: the cartesian product of a grid of config values (× seeds), one run per point.

Points run in worker processes (``jobs`` of them) or in this process when ``jobs == 1``. Rows
come back in grid order whatever the completion order: the first grid key varies slowest and
seeds fastest, as in ``itertools.product``. Workers return plain data (the report as JSON, or
an error's class name, message and attributes), so nothing unpicklable crosses processes.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import multiprocessing
import os
import sys
from collections.abc import Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import TYPE_CHECKING, Any, Optional, Union

from . import _native
from ._config import ConfigLike, native_args, overrides_list
from ._result import Result, _cell

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["sweep", "write_csv", "write_parquet"]

SEED_KEY = "run.seed"

# What a worker returns: ("ok", report JSON) or ("error", class name, message, attributes).
_Outcome = Union[tuple[str, str], tuple[str, str, str, dict[str, Any]]]

_ERROR_TYPES: dict[str, type[_native.NandlabError]] = {
    "ConfigError": _native.ConfigError,
    "TraceError": _native.TraceError,
    "RequestError": _native.RequestError,
    "NandlabError": _native.NandlabError,
}
_ERROR_ATTRIBUTES = ("key", "path", "line", "index", "kind", "io_kind")


def _run_point(base: dict[str, Any], overrides: list[str]) -> _Outcome:
    """Runs one point (in a worker process or in this one) and returns plain data. ``base``
    holds the native module's config arguments (``config_json`` or ``config_path``)."""
    try:
        return ("ok", _native.run(overrides=overrides, **base))
    except _native.NandlabError as e:
        attributes = {a: getattr(e, a) for a in _ERROR_ATTRIBUTES if hasattr(e, a)}
        return ("error", type(e).__name__, str(e), attributes)
    except BaseException as e:  # a bug (PanicException) must not kill the pool
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        return ("error", "NandlabError", f"{type(e).__name__}: {e}", {})


def _points(
    grid: Mapping[str, Sequence[Any]], seeds: Optional[Sequence[int]]
) -> tuple[list[str], list[dict[str, Any]]]:
    keys = [str(k) for k in grid]
    axes: list[list[Any]] = []
    for key in keys:
        values = grid[key]
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
            raise TypeError(f"grid[{key!r}] must be a sequence of values, not {values!r}")
        axes.append(list(values))
    if seeds is not None:
        if SEED_KEY in keys:
            raise ValueError(f"give the seeds either as seeds= or as grid[{SEED_KEY!r}]")
        keys.append(SEED_KEY)
        axes.append([int(s) for s in seeds])
    return keys, [dict(zip(keys, combo)) for combo in itertools.product(*axes)]


def _describe(point: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in point.items()) or "the base config"


def _raise_for(index: int, point: Mapping[str, Any], outcome: _Outcome) -> None:
    _, name, message, attributes = outcome  # type: ignore[misc]
    error = _ERROR_TYPES.get(name, _native.NandlabError)(
        f"sweep point #{index} ({_describe(point)}): {message}"
    )
    for attribute, value in attributes.items():
        setattr(error, attribute, value)
    raise error


class _Counter:
    def __init__(self, total: int, show: bool) -> None:
        self.total, self.done, self.show = total, 0, show

    def tick(self) -> None:
        self.done += 1
        if self.show:
            sys.stderr.write(f"\rnandlab sweep: {self.done}/{self.total} points")
            if self.done == self.total:
                sys.stderr.write("\n")
            sys.stderr.flush()


def sweep(
    base: ConfigLike,
    grid: Mapping[str, Sequence[Any]],
    *,
    jobs: int = 1,
    seeds: Optional[Sequence[int]] = None,
    progress: bool = False,
) -> pd.DataFrame:
    """Runs every combination of ``grid`` values (× ``seeds``) on top of ``base``.

    Args:
        base: the config every point starts from (as for `nandlab.run`).
        grid: dotted config keys → the values to try, e.g.
            ``{"ftl.cleaning": ["greedy", "cat"], "ftl.regions": [1, 2, 4]}``.
        jobs: worker processes; 1 runs the points in this process, one after the other.
            Workers are started with the ``spawn`` method, so scripts that call `sweep` with
            ``jobs > 1`` need the usual ``if __name__ == "__main__":`` guard.
        seeds: if given, every grid point runs once per seed (``run.seed``).
        progress: show a ``points done`` line on stderr.

    Returns:
        One row per point in grid order (first key slowest, seeds fastest). Columns: the grid
        keys (then ``run.seed`` when ``seeds`` is given) holding the values as given, then the
        columns of `Result.to_frame` (config, metrics, seed, version). Save with
        ``df.to_parquet(path)`` or `write_parquet`.

    Raises:
        The error of the first point that failed (`ConfigError`, `TraceError`, ...) with the
        point named in the message; the other points are cancelled.
    """
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a positive integer, not {jobs!r}")
    keys, points = _points(grid, seeds)
    return _sweep(base, keys, points, jobs, progress)


def sweep_points(
    base: ConfigLike,
    points: Sequence[Mapping[str, Any]],
    *,
    jobs: int = 1,
    progress: bool = False,
) -> pd.DataFrame:
    """Runs each of ``points`` (dotted key → value overrides) on top of ``base``: for
    experiments whose points are not a grid (e.g. a run length that depends on the device
    size).

    Returns one row per point, in order: the point's keys (all keys any point sets, missing
    values as NaN), then the columns of `Result.to_frame`. Errors and ``jobs`` as in `sweep`.
    """
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a positive integer, not {jobs!r}")
    keys: list[str] = []
    for point in points:
        if not isinstance(point, Mapping):
            raise TypeError(f"each point must be a mapping of config keys, not {point!r}")
        keys.extend(str(k) for k in point if str(k) not in keys)
    return _sweep(base, keys, [dict(p) for p in points], jobs, progress)


def _sweep(
    base: ConfigLike,
    keys: list[str],
    points: list[dict[str, Any]],
    jobs: int,
    progress: bool,
) -> pd.DataFrame:
    import pandas as pd

    config = native_args(base, None)
    del config["overrides"]
    overrides = [overrides_list(point) for point in points]
    counter = _Counter(len(points), progress)
    outcomes: list[_Outcome] = []
    if jobs == 1 or len(points) <= 1:
        for index, (point, point_overrides) in enumerate(zip(points, overrides)):
            outcome = _run_point(config, point_overrides)
            if outcome[0] != "ok":
                _raise_for(index, point, outcome)
            outcomes.append(outcome)
            counter.tick()
    else:
        outcomes = _run_pool(config, points, overrides, jobs, counter)

    rows = []
    for point, outcome in zip(points, outcomes):
        row = {key: _cell(value) for key, value in point.items()}
        result = Result.from_dict(json.loads(outcome[1]))
        row.update({k: v for k, v in result.scalars().items() if k not in row})
        rows.append(row)
    if not rows:
        return pd.DataFrame(columns=keys)
    return pd.DataFrame(rows)


def _run_pool(
    config: dict[str, Any],
    points: list[dict[str, Any]],
    overrides: list[list[str]],
    jobs: int,
    counter: _Counter,
) -> list[_Outcome]:
    context = multiprocessing.get_context("spawn")
    workers = min(jobs, len(points))
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        futures: list[Future[_Outcome]] = [
            pool.submit(_run_point, config, point_overrides) for point_overrides in overrides
        ]
        pending = set(futures)
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                outcome = future.result()  # a crashed worker raises BrokenProcessPool here
                if outcome[0] != "ok":
                    for other in pending:
                        other.cancel()
                    index = futures.index(future)
                    _raise_for(index, points[index], outcome)
                counter.tick()
        return [f.result() for f in futures]


def with_version(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with a ``version`` column naming the code that made it (`build_version`, e.g.
    ``nandlab 0.1.0 (1a2b3c4d5e6f)``), added as the last column unless it is already there.

    Sweep and `Result.to_frame` rows carry their result's version already; tables derived from
    them (means, pivots, ratios) lose it, and a saved table without it cannot be traced back to
    the code, so every writer here adds it.
    """
    if "version" in frame.columns:
        return frame
    return frame.assign(version=_native.BUILD_VERSION)


def write_csv(frame: pd.DataFrame, path: Union[str, os.PathLike[str]]) -> None:
    """Writes a table to a CSV file, without the index, with a ``version`` column (see
    `with_version`). The experiments under ``experiments/`` save every table this way."""
    with_version(frame).to_csv(path, index=False)


def write_parquet(frame: pd.DataFrame, path: Union[str, os.PathLike[str]]) -> None:
    """Writes a sweep's (or `Result.to_frame`'s) table to a Parquet file, without the index,
    with a ``version`` column (see `with_version`). Needs pyarrow
    (``pip install nandlab[parquet]``)."""
    if importlib.util.find_spec("pyarrow") is None:
        raise ImportError("write_parquet needs pyarrow: pip install 'nandlab[parquet]'")
    with_version(frame).to_parquet(path, index=False)
