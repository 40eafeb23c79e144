"""`sweep`: the cartesian product of a grid of config values (× seeds), one run per point.

Points run on a backend — ``local`` (this process when ``jobs == 1``, else ``jobs`` worker
processes) or ``ray`` (one Ray task per point, `nandlab._ray`) — and come back as they finish.
Rows are returned in grid order whatever the completion order: the first grid key varies
slowest and seeds fastest, as in ``itertools.product``. A run is a pure function of its config,
seed and version, so both backends give the same rows (wall-clock metrics aside,
`WALL_CLOCK_METRICS`).

With ``out=DIR`` every finished point is stored at once (`nandlab._store`): a sweep that dies
loses at most the points that were running, and running it again runs only the points not
stored yet. A point whose run fails (a config or trace error: deterministic) is stored as
failed with its error instead of ending the sweep. A worker process that dies (killed, or a
crash) is replaced and its points run again, up to ``retries`` times each.
"""

from __future__ import annotations

import ast
import importlib.util
import itertools
import json
import math
import multiprocessing
import os
import pathlib
import sys
import time
import warnings
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING, Any, Optional, Protocol, Union

from . import _native
from ._config import (
    MAX_CONFIG_INT,
    ConfigLike,
    Overrides,
    config_error,
    native_args,
    overrides_list,
    read_config_text,
)
from ._errors import argument_error, check_int, check_path, write_error
from ._store import Manifest, SweepStore, frame_of, load_records
from ._worker import Outcome, run_point

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "BACKENDS",
    "SweepWarning",
    "sweep",
    "sweep_points",
    "with_version",
    "write_csv",
    "write_parquet",
]

SEED_KEY = "run.seed"
BACKENDS = ("local", "ray")

MAX_POINTS = 1_000_000
"""The most points (grid combinations × seeds) one sweep runs. Checked before anything is
built: a typo such as ``--seeds 1-100000000000`` is an error naming the count, not an
exhausted memory. A study past it is several sweeps (each with its own store)."""

MAX_JOBS = 1024
"""The most points run at once (``jobs``): each local job is a Python process of its own, and
a typo such as ``jobs=100000`` would start that many."""

MAX_SEED = MAX_CONFIG_INT
"""The largest seed: ``run.seed`` is unsigned, but config integers are TOML's signed 64-bit
ones, so it takes 0 ..= 2**63 - 1."""

_SEED_NOTE = (
    " (run.seed is unsigned, but config integers are TOML's signed 64-bit ones, so seeds "
    f"stop at 2**63 - 1 = {MAX_SEED})"
)

_ERROR_TYPES: dict[str, type[_native.NandlabError]] = {
    "ConfigError": _native.ConfigError,
    "TraceError": _native.TraceError,
    "RequestError": _native.RequestError,
    "NandlabError": _native.NandlabError,
}

# A task: (point index, overrides).
_Task = tuple[int, list[str]]


class SweepWarning(UserWarning):
    """Some points of a stored sweep failed (their errors are in the ``error`` column)."""


def _check_key(key: Any) -> str:
    """A swept key: a dotted config key (checked here, before any point runs, since every
    point would fail alike)."""
    if not isinstance(key, str):
        raise config_error(None, f"swept keys must be dotted config keys (strings), not {key!r}")
    if not key or any(not part.strip() for part in key.split(".")):
        raise config_error(key or None, "empty key or key segment")
    if "=" in key:
        raise config_error(key, "a config key cannot hold '='")
    return key


def _count(values: Any, argument: str) -> int:
    """``len(values)`` of a sequence, refusing one longer than a sweep takes before it is
    copied (``range(10**12)`` has a length but no room in memory)."""
    try:
        count = len(values)
    except OverflowError:  # longer than sys.maxsize
        count = MAX_POINTS + 1
    if count > MAX_POINTS:
        raise argument_error(
            argument, f"{count:,} values, more than the {MAX_POINTS:,} points a sweep runs"
        )
    return count


def check_seeds(seeds: Any) -> list[int]:
    """``seeds`` as a list of ints in 0 ..= `MAX_SEED`, at most `MAX_POINTS` of them."""
    if isinstance(seeds, (str, bytes)) or not isinstance(seeds, Iterable):
        raise argument_error(
            "seeds",
            f"expected a sequence of integers such as range(1, 6) or [1, 2, 3], not {seeds!r}",
            wrong_type=True,
        )
    if isinstance(seeds, Sequence):
        _count(seeds, "seeds")
    out = [
        check_int(s, f"seeds[{i}]", minimum=0, maximum=MAX_SEED, note=_SEED_NOTE)
        for i, s in enumerate(itertools.islice(seeds, MAX_POINTS + 1))
    ]
    if len(out) > MAX_POINTS:
        raise argument_error("seeds", f"more than the {MAX_POINTS:,} points a sweep runs")
    return out


def _points(
    grid: Mapping[str, Sequence[Any]], seeds: Optional[Iterable[int]]
) -> tuple[list[str], list[dict[str, Any]], Optional[list[int]]]:
    """The keys, every point in grid order and the seeds (checked) of a grid sweep."""
    if not isinstance(grid, Mapping):
        raise argument_error(
            "grid",
            "expected a mapping of dotted config keys to lists of values, e.g. "
            f"{{'ftl.cleaning': ['greedy', 'cat']}}, not {grid!r}",
            wrong_type=True,
        )
    keys: list[str] = []
    counts: list[int] = []
    for raw_key, values in grid.items():
        key = _check_key(raw_key)
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
            raise argument_error(
                f"grid[{key!r}]", f"must be a sequence of values, not {values!r}", wrong_type=True
            )
        keys.append(key)
        counts.append(_count(values, f"grid[{key!r}]"))
    seed_list = None
    if seeds is not None:
        if SEED_KEY in keys:
            raise argument_error(
                "seeds", f"give the seeds either as seeds= or as grid[{SEED_KEY!r}]"
            )
        seed_list = check_seeds(seeds)
        counts.append(len(seed_list))
    total = math.prod(counts)
    if total > MAX_POINTS:
        shape = " × ".join(f"{c:,}" for c in counts)
        raise argument_error(
            "grid",
            f"{total:,} points ({shape}), more than the {MAX_POINTS:,} a sweep runs: split it "
            "into several sweeps",
        )
    axes = [list(values) for values in grid.values()]
    if seed_list is not None:
        keys.append(SEED_KEY)
        axes.append(seed_list)
    return keys, [dict(zip(keys, combo)) for combo in itertools.product(*axes)], seed_list


def _describe(point: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in point.items()) or "the base config"


def _error_for(index: int, point: Mapping[str, Any], outcome: Outcome) -> _native.NandlabError:
    _, name, message, attributes = outcome  # type: ignore[misc]
    error = _ERROR_TYPES.get(name, _native.NandlabError)(
        f"sweep point #{index} ({_describe(point)}): {message}"
    )
    for attribute, value in attributes.items():
        setattr(error, attribute, value)
    return error


def _check_jobs(jobs: int) -> None:
    check_int(jobs, "jobs", minimum=1, maximum=MAX_JOBS)


def sweep(
    base: ConfigLike,
    grid: Mapping[str, Sequence[Any]],
    *,
    jobs: int = 1,
    seeds: Optional[Sequence[int]] = None,
    progress: Optional[bool] = False,
    set: Overrides = None,  # the CLI's --set, by design
    backend: str = "local",
    address: Optional[str] = None,
    out: Union[str, os.PathLike[str], None] = None,
    retry_failed: bool = False,
    retries: int = 3,
    ship_traces: bool = True,
) -> pd.DataFrame:
    """Runs every combination of ``grid`` values (× ``seeds``) on top of ``base``.

    Args:
        base: the config every point starts from (as for `nandlab.run`).
        grid: dotted config keys → the values to try, e.g.
            ``{"ftl.cleaning": ["greedy", "cat"], "ftl.regions": [1, 2, 4]}``.
        jobs: points run at once, 1 to `MAX_JOBS` (1,024). ``local``: worker processes (1
            runs the points in this process, one after the other); workers are started with
            the ``spawn`` method, so a script that calls `sweep` with ``jobs > 1`` needs the
            usual ``if __name__ == "__main__":`` guard (a call without one is refused, naming
            the line). ``ray``: the CPUs of the local cluster started when ``address`` is
            None.
        seeds: if given, every grid point runs once per seed (``run.seed``): integers in
            0 ..= 2**63 - 1 (`MAX_SEED`), e.g. ``range(1, 6)``.
        progress: a line on stderr with points done / total, failures, rate and ETA; None
            shows it when stderr is a terminal.
        set: overrides applied to the base before each point's, like the CLI's ``--set``.
        backend: ``"local"`` or ``"ray"`` (``pip install 'nandlab[ray]'``): one Ray task per
            point, one CPU each, results streamed back as points finish.
        address: the Ray cluster: None starts a local one (``jobs`` CPUs) unless Ray is
            already initialized in this process, ``"auto"`` joins the running cluster of
            this machine, ``"ray://host:10001"`` a remote one (its nodes need the same nandlab
            version: results of another version are refused).
        out: a directory to store the results in (`nandlab.load_sweep` reads it): every point
            is written as it finishes; run the same sweep again to run only the points not
            stored yet. A directory holding another sweep (grid, base config or version) is
            refused, naming the difference. Failed points are stored with their error
            instead of raising it.
        retry_failed: with ``out``, run the stored failed points again.
        retries: times a point is run again after its worker process died (Ray: task retries).
        ship_traces: ``ray`` only: send the traces the points read (``workload.path``) to the
            workers through Ray's object store, once per trace and node; False when every node
            sees the paths (a shared file system).

    Returns:
        One row per point in grid order (first key slowest, seeds fastest). Columns: the grid
        keys (then ``run.seed`` when ``seeds`` is given) holding the values as given, then the
        columns of `Result.to_frame` (config, metrics, seed, version); with ``out``, also
        ``status`` (``ok`` / ``failed``) and ``error``. Save with `write_parquet`.

    Raises:
        Without ``out``: the error of the first point that failed (`ConfigError`,
        `TraceError`, ...) with the point named in the message; the other points are
        cancelled. `SweepStoreError` for a store of another sweep or a damaged one (the
        message names the file). Before anything runs: `ConfigError` for a swept key that is
        not a dotted config key, `ArgumentError` (a ValueError; `ArgumentTypeError` for a
        wrong type) for another bad argument, e.g. a seed out of range or more than
        `MAX_POINTS` (1,000,000) points.
    """
    _check_jobs(jobs)
    keys, points, seed_list = _points(grid, seeds)
    return _sweep(
        base,
        keys,
        points,
        grid=grid,
        seeds=seed_list,
        options=_Options(
            jobs, progress, set, backend, address, out, retry_failed, retries, ship_traces
        ),
    )


def sweep_points(
    base: ConfigLike,
    points: Sequence[Mapping[str, Any]],
    *,
    jobs: int = 1,
    progress: Optional[bool] = False,
    set: Overrides = None,  # the CLI's --set, by design
    backend: str = "local",
    address: Optional[str] = None,
    out: Union[str, os.PathLike[str], None] = None,
    retry_failed: bool = False,
    retries: int = 3,
    ship_traces: bool = True,
) -> pd.DataFrame:
    """Runs each of ``points`` (dotted key → value overrides) on top of ``base``: for
    experiments whose points are not a grid (e.g. a run length that depends on the device
    size).

    Returns one row per point, in order: the point's keys (all keys any point sets, missing
    values as NaN), then the columns of `Result.to_frame`. Every other argument as in `sweep`.
    """
    _check_jobs(jobs)
    if isinstance(points, (str, bytes)) or not isinstance(points, Sequence):
        raise argument_error(
            "points", f"expected a sequence of mappings, not {points!r}", wrong_type=True
        )
    _count(points, "points")
    keys: dict[str, None] = {}
    for i, point in enumerate(points):
        if not isinstance(point, Mapping):
            raise argument_error(
                f"points[{i}]",
                f"each point must be a mapping of config keys, not {point!r}",
                wrong_type=True,
            )
        keys.update((_check_key(k), None) for k in point)
    return _sweep(
        base,
        list(keys),
        [dict(p) for p in points],
        grid=None,
        seeds=None,
        options=_Options(
            jobs, progress, set, backend, address, out, retry_failed, retries, ship_traces
        ),
    )


class _Options:
    def __init__(
        self,
        jobs: int,
        progress: Optional[bool],
        set: Overrides,
        backend: str,
        address: Optional[str],
        out: Union[str, os.PathLike[str], None],
        retry_failed: bool,
        retries: int,
        ship_traces: bool,
    ) -> None:
        if backend not in BACKENDS:
            raise argument_error(
                "backend", f"must be one of {', '.join(BACKENDS)}, not {backend!r}"
            )
        if address is not None and backend != "ray":
            raise argument_error("address", "names a Ray cluster: it needs backend='ray'")
        if address is not None and not isinstance(address, str):
            raise argument_error(
                "address", f"expected a string, not {address!r}", wrong_type=True
            )
        check_int(retries, "retries", minimum=0)
        if retry_failed and out is None:
            raise argument_error(
                "retry_failed", "reruns the failed points of a store: it needs out="
            )
        if out is not None:
            out = check_path(out, "out")
        self.jobs, self.backend, self.address = jobs, backend, address
        self.progress = sys.stderr.isatty() if progress is None else bool(progress)
        self.set, self.out, self.retry_failed = overrides_list(set), out, retry_failed
        self.retries, self.ship_traces = retries, ship_traces


def _base_description(config: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """The base config as the manifest records it: its content, not only its name."""
    out: dict[str, Any] = {}
    if "config_json" in config:
        out["config"] = json.loads(config["config_json"])
    elif "config_path" in config:
        path = os.path.abspath(config["config_path"])
        text = read_config_text(path)
        out.update({"config_path": path, "config_text": text})
    if overrides:
        out["set"] = overrides
    return out


def _sweep(
    base: ConfigLike,
    keys: list[str],
    points: list[dict[str, Any]],
    *,
    grid: Optional[Mapping[str, Sequence[Any]]],
    seeds: Optional[Sequence[int]],
    options: _Options,
) -> pd.DataFrame:
    config = native_args(base, None)
    del config["overrides"]
    overrides = [options.set + overrides_list(point) for point in points]
    store: Optional[SweepStore] = None
    records: dict[int, tuple[str, Optional[str], Optional[str]]] = {}
    if options.out is not None:
        manifest = Manifest.make(
            _base_description(config, options.set), keys, points, grid, seeds
        )
        store = SweepStore.open(options.out, manifest)
        finished = store.finished()
        if options.retry_failed:
            failed = [i for i, status in finished.items() if status == "failed"]
            store.forget(failed)
            for i in failed:
                del finished[i]
        todo = [i for i in range(len(points)) if i not in finished]
    else:
        todo = list(range(len(points)))

    display = _Progress(len(points), len(points) - len(todo), options.progress)
    runner = _runner(options, len(todo))
    interrupted = False
    try:
        for batch in runner.run(config, [(i, overrides[i]) for i in todo]):
            rows = []
            for index, outcome in batch:
                if outcome[0] == "ok":
                    _check_version(outcome[1])
                if store is None:
                    if outcome[0] != "ok":
                        raise _error_for(index, points[index], outcome)
                    records[index] = ("ok", outcome[1], None)
                else:
                    rows.append(store.row(index, outcome))
                display.tick(failed=outcome[0] != "ok")
            if store is not None:
                store.write(rows)
    except KeyboardInterrupt:
        interrupted = True
        raise
    finally:
        runner.close()
        display.finish()
        if interrupted and store is not None:
            stored = len(store.finished())
            sys.stderr.write(
                f"nandlab sweep: interrupted; {stored} of {len(points)} points are stored in "
                f"{store.path}: run the same sweep again to run the other "
                f"{len(points) - stored}\n"
            )
    if store is None:
        return frame_of(keys, points, records, with_status=False)
    stored_rows = store.stored()
    if len(stored_rows) == len(points):
        store.compact(stored_rows)
    frame = frame_of(keys, points, load_records(stored_rows), with_status=True, store=store)
    n_failed = int((frame["status"] == "failed").sum()) if len(frame) else 0
    if n_failed:
        warnings.warn(
            f"{n_failed} of {len(points)} sweep points failed; their errors are in the "
            "'error' column",
            SweepWarning,
            stacklevel=3,
        )
    return frame


def _check_version(report_json: str) -> None:
    version = json.loads(report_json).get("version")
    if version != _native.BUILD_VERSION:
        raise _native.NandlabError(
            f"a worker ran {version!r}, this process is {_native.BUILD_VERSION!r}: results of "
            "different code are not mixed (install the same nandlab on every node)"
        )


# ---------------------------------------------------------------- progress


def _duration(seconds: float) -> str:
    s = int(seconds + 0.5)
    if s >= 3600:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    if s >= 60:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s}s"


class _Progress:
    """``nandlab sweep: 57/200 points (40 stored before), 3 failed, 2.1 points/s, ETA 1m08s``
    on stderr, rewritten in place."""

    def __init__(self, total: int, stored: int, show: bool) -> None:
        self.total, self.stored, self.show = total, stored, show
        self.ran, self.failed = 0, 0
        self.started = time.monotonic()
        self.shown = False
        if show and stored:
            self._write()

    def tick(self, failed: bool) -> None:
        self.ran += 1
        self.failed += failed
        if self.show:
            self._write()

    def _write(self) -> None:
        done = self.stored + self.ran
        parts = [f"nandlab sweep: {done}/{self.total} points"]
        if self.stored:
            parts[0] += f" ({self.stored} stored before)"
        if self.failed:
            parts.append(f"{self.failed} failed")
        elapsed = time.monotonic() - self.started
        if self.ran and elapsed > 0:
            rate = self.ran / elapsed
            parts.append(f"{rate:.3g} points/s")
            if done < self.total:
                parts.append(f"ETA {_duration((self.total - done) / rate)}")
        sys.stderr.write("\r" + ", ".join(parts) + "\033[K")
        sys.stderr.flush()
        self.shown = True

    def finish(self) -> None:
        if self.shown:
            sys.stderr.write("\n")
            sys.stderr.flush()


# ---------------------------------------------------------------- backends


class _Runner(Protocol):
    def run(
        self, config: dict[str, Any], tasks: list[_Task]
    ) -> Iterator[list[tuple[int, Outcome]]]:
        """Runs ``tasks``, yielding the outcomes of the points that finished together."""

    def close(self) -> None:
        """Stops what is still running (after an error or an interrupt) and frees workers."""


def _runner(options: _Options, tasks: int) -> _Runner:
    if options.backend == "ray":
        from ._ray import RayRunner

        return RayRunner(options.jobs, options.address, options.retries, options.ship_traces)
    if options.jobs == 1 or tasks <= 1:
        return _InProcess()
    site = unguarded_call_site()
    if site is not None:
        file, line = site
        raise RuntimeError(
            f"nandlab.sweep(jobs={options.jobs}) was called at the top level of the script "
            f"{file} (line {line}). Its worker processes start by importing that script, which "
            "would run the sweep again in each of them. Put the script's top-level code under "
            "`if __name__ == \"__main__\":` (or call sweep with jobs=1)."
        )
    return _Pool(options.jobs, options.retries)


class _InProcess:
    def run(
        self, config: dict[str, Any], tasks: list[_Task]
    ) -> Iterator[list[tuple[int, Outcome]]]:
        for index, overrides in tasks:
            yield [(index, run_point(config, overrides))]

    def close(self) -> None:
        pass


def unguarded_call_site() -> Optional[tuple[str, int]]:
    """Where the main script calls into a sweep from its top level outside an
    ``if __name__ == "__main__":`` block, as (file, line); None when it does not (a call from
    a function the guard runs, from an interactive session, ``-c`` or a notebook)."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    # A regular file only: a script read from a pipe (`python /dev/stdin`) cannot be read
    # again, and has no top level the workers would import.
    if main is None or not path or not os.path.isfile(path):
        return None
    frame = sys._getframe()
    while frame is not None and not (
        frame.f_globals is vars(main) and frame.f_code.co_name == "<module>"
    ):
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None:
        return None
    line = frame.f_lineno
    try:
        tree = ast.parse(pathlib.Path(path).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return None
    for node in tree.body:
        end = getattr(node, "end_lineno", None) or node.lineno
        if isinstance(node, ast.If) and _is_main_guard(node.test) and node.lineno <= line <= end:
            return None
    return (path, line)


def _is_main_guard(test: ast.expr) -> bool:
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return False
    if not isinstance(test.ops[0], ast.Eq):
        return False
    sides = [test.left, test.comparators[0]]
    names = [s.id for s in sides if isinstance(s, ast.Name)]
    strings = [s.value for s in sides if isinstance(s, ast.Constant)]
    return names == ["__name__"] and strings == ["__main__"]


class _Pool:
    """Worker processes (``spawn``), one point each at a time. A worker that dies breaks the
    pool: its points (the ones running then) are suspects, run again one at a time in a new
    pool so that a point that kills its worker is told apart from its neighbours; a point is
    given up (stored as failed) after ``retries`` runs that ended with a dead worker."""

    def __init__(self, jobs: int, retries: int) -> None:
        self.jobs, self.retries = jobs, retries
        self.pool: Optional[ProcessPoolExecutor] = None

    def run(
        self, config: dict[str, Any], tasks: list[_Task]
    ) -> Iterator[list[tuple[int, Outcome]]]:
        queue: deque[_Task] = deque(tasks)
        suspects: deque[_Task] = deque()
        deaths: dict[int, int] = {}
        context = multiprocessing.get_context("spawn")
        while queue or suspects:
            workers = min(self.jobs, len(tasks))
            self.pool = ProcessPoolExecutor(max_workers=workers, mp_context=context)
            self._check_start(self.pool)
            running: dict[Future[Outcome], _Task] = {}
            lost: list[_Task] = []
            while (queue or suspects or running) and not lost:
                if suspects:
                    # One suspect alone: if the pool breaks now, it was this point.
                    if not running:
                        task = suspects.popleft()
                        running[self.pool.submit(run_point, config, task[1])] = task
                else:
                    while queue and len(running) < self.jobs:
                        task = queue.popleft()
                        running[self.pool.submit(run_point, config, task[1])] = task
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                batch = []
                for future in done:
                    task = running.pop(future)
                    try:
                        batch.append((task[0], future.result()))
                    except BrokenProcessPool:
                        lost.append(task)
                # The next points go out before the caller stores these results (a few ms
                # each), which the freed workers would otherwise spend idle.
                while queue and not suspects and not lost and len(running) < self.jobs:
                    task = queue.popleft()
                    running[self.pool.submit(run_point, config, task[1])] = task
                if batch:
                    yield batch
            # A broken pool fails every point it was running.
            for future, task in running.items():
                try:
                    yield [(task[0], future.result())]
                except BrokenProcessPool:
                    lost.append(task)
            self._shutdown()
            for task in sorted(lost):
                deaths[task[0]] = deaths.get(task[0], 0) + 1
                if deaths[task[0]] > self.retries:
                    yield [(task[0], _worker_died(deaths[task[0]]))]
                else:
                    suspects.append(task)

    def _check_start(self, pool: ProcessPoolExecutor) -> None:
        """A worker that dies before running anything is not a point's fault: the workers
        cannot start here (their own error is on stderr)."""
        try:
            pool.submit(int).result()
        except BrokenProcessPool:
            self._shutdown()
            main = getattr(sys.modules.get("__main__"), "__file__", None)
            hint = (
                f" Worker processes start by importing the main script ({main}): it must be "
                "a file they can import."
                if main
                else ""
            )
            raise RuntimeError(
                "nandlab.sweep: its worker processes could not start (their error is above)."
                + hint
                + " jobs=1 runs the points in this process."
            ) from None

    def _shutdown(self) -> None:
        pool, self.pool = self.pool, None
        if pool is None:
            return
        pool.shutdown(wait=False, cancel_futures=True)
        # Points already running would go on to their end: stop them (an interrupt or an
        # error ended the sweep; a broken pool's workers are gone anyway).
        for process in list((getattr(pool, "_processes", None) or {}).values()):
            if process.is_alive():
                process.terminate()

    def close(self) -> None:
        self._shutdown()


def _worker_died(times: int) -> Outcome:
    return (
        "error",
        "NandlabError",
        f"the worker process running this point died {times} times (killed, or a crash of the "
        "simulator: please report it)",
        {},
    )


# ---------------------------------------------------------------- tables


def with_version(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with a ``version`` column naming the code that made it (`build_version`, e.g.
    ``nandlab 0.1.0 (1a2b3c4d5e6f)``), added as the last column unless it is already there.

    Sweep and `Result.to_frame` rows carry their result's version already; tables derived from
    them (means, pivots, ratios) lose it, and a saved table without it cannot be traced back to
    the code, so every writer here adds it.
    """
    import pandas as pd

    if not isinstance(frame, pd.DataFrame):
        raise argument_error(
            "frame", f"expected a pandas DataFrame, not {type(frame).__name__}", wrong_type=True
        )
    if "version" in frame.columns:
        return frame
    return frame.assign(version=_native.BUILD_VERSION)


def write_csv(frame: pd.DataFrame, path: Union[str, os.PathLike[str]]) -> None:
    """Writes a table to a CSV file, without the index, with a ``version`` column (see
    `with_version`). The experiments under ``experiments/`` save every table this way.

    Raises:
        ArgumentError: ``frame`` is not a DataFrame, or ``path`` cannot be written.
    """
    table, target = with_version(frame), check_path(path, "path")
    try:
        table.to_csv(target, index=False)
    except OSError as e:
        raise write_error("path", target, e) from None


def write_parquet(frame: pd.DataFrame, path: Union[str, os.PathLike[str]]) -> None:
    """Writes a sweep's (or `Result.to_frame`'s) table to a Parquet file, without the index,
    with a ``version`` column (see `with_version`). Needs pyarrow
    (``pip install nandlab[parquet]``).

    Raises:
        ArgumentError: ``frame`` is not a DataFrame, or ``path`` cannot be written.
    """
    if importlib.util.find_spec("pyarrow") is None:
        raise ImportError("write_parquet needs pyarrow: pip install 'nandlab[parquet]'")
    table, target = with_version(frame), check_path(path, "path")
    try:
        table.to_parquet(target, index=False)
    except OSError as e:  # pyarrow's ArrowIOError is an OSError too
        raise write_error("path", target, e) from None
