"""The Ray backend of `nandlab.sweep` (``backend="ray"``; ``pip install 'nandlab[ray]'``).

One Ray task per point, declaring one CPU (the native run releases the GIL and uses one core),
``max_retries`` for tasks whose worker process died (Ray reruns them), no retries for errors
the point itself raises (a config or trace error is deterministic: `nandlab._worker` returns
it as data). Tasks are submitted a window at a time (twice the cluster's CPUs) and results are
taken as they finish, so the driver streams them to the store and holds only what is in flight.

Traces: with ``ship_traces`` (the default) every trace the points read (``workload.path`` in
the base config or in a point) is put into Ray's object store once; each node writes one copy
per trace content into its cache directory (``$NANDLAB_TRACE_CACHE``, else
``<tmp>/nandlab-traces``) the first time a point there needs it, and results name the
driver's path, so a result is the same wherever it ran. Without it, every node must see the
paths (a shared file system).
"""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import stat
from collections import deque
from collections.abc import Iterator
from typing import Any, Optional

from . import _native
from ._config import read_config_text, toml_loads
from ._errors import argument_error, file_kind
from ._worker import Outcome, run_point, run_shipped, trace_digest, trace_override

# Tasks in flight per CPU of the cluster: enough that no CPU waits for the driver.
WINDOW_PER_CPU = 2


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ImportError(
            "the ray backend needs Ray: pip install 'nandlab[ray]' (or pip install ray)"
        ) from None
    return ray


class RayRunner:
    """Runs sweep points as Ray tasks (see the module doc)."""

    def __init__(self, jobs: int, address: Optional[str], retries: int, ship: bool) -> None:
        self.ray = _import_ray()
        self.jobs, self.address, self.retries, self.ship = jobs, address, retries, ship
        self.started = False
        self.pending: dict[Any, int] = {}

    def _init(self) -> None:
        ray = self.ray
        if ray.is_initialized():
            return
        kwargs: dict[str, Any] = {
            "include_dashboard": False,
            "logging_level": "WARNING",
            "log_to_driver": True,
        }
        if self.address is None and self.jobs > 1:
            kwargs["num_cpus"] = self.jobs
        # A local cluster's workers run this interpreter, so they import this nandlab; a
        # remote cluster's nodes have their own (its version is checked on every result).
        try:
            ray.init(address=self.address, **kwargs)
        except (ValueError, ConnectionError, RuntimeError, TimeoutError) as e:
            # Ray's own errors for an address it cannot parse or reach, a client it lacks.
            where = repr(self.address) if self.address is not None else "a local one"
            raise argument_error(
                "address", f"cannot start or join the Ray cluster {where}: {_first_line(e)}"
            ) from None
        self.started = True

    def run(
        self, config: dict[str, Any], tasks: list[tuple[int, list[str]]]
    ) -> Iterator[list[tuple[int, Outcome]]]:
        if not tasks:
            return
        ray = self.ray
        self._init()
        config = _as_json_config(config)
        shipped = self._ship(config, tasks) if self.ship else []
        options = {"num_cpus": 1, "max_retries": self.retries, "retry_exceptions": False}
        remote = ray.remote(**options)(run_shipped if shipped else run_point)

        def submit(overrides: list[str]) -> Any:
            if shipped:
                return remote.remote(config, overrides, shipped)
            return remote.remote(config, overrides)

        cpus = int(ray.cluster_resources().get("CPU", 1)) or 1
        window = max(1, WINDOW_PER_CPU * cpus)
        queue = deque(tasks)
        while queue or self.pending:
            while queue and len(self.pending) < window:
                index, overrides = queue.popleft()
                self.pending[submit(overrides)] = index
            ray.wait(list(self.pending), num_returns=1)
            ready, _ = ray.wait(list(self.pending), num_returns=len(self.pending), timeout=0)
            batch = []
            for ref in ready:
                index = self.pending.pop(ref)
                try:
                    outcome: Outcome = ray.get(ref)
                except ray.exceptions.RayError as e:
                    # Its worker died more than `retries` times (or the cluster lost it).
                    outcome = ("error", "NandlabError", _first_line(e), {})
                batch.append((index, outcome))
            yield batch

    def _ship(
        self, config: dict[str, Any], tasks: list[tuple[int, list[str]]]
    ) -> list[tuple[str, str, str, Any]]:
        """Every trace the points may read, put into the object store once."""
        paths: dict[str, None] = {}
        base = json.loads(config.get("config_json", "{}")).get("workload", {}).get("path")
        if isinstance(base, str):
            paths[base] = None
        for _, overrides in tasks:
            for item in overrides:
                given = trace_override(item)
                if given is not None:
                    paths[given] = None
        shipped = []
        for path in paths:
            data = _read_trace(path)
            # Nested in a list so that Ray hands the task the reference, not the bytes: a
            # node fetches them only when it has no copy yet.
            ref = [self.ray.put(data)]
            shipped.append((path, trace_digest(data), pathlib.Path(path).name, ref))
        return shipped

    def close(self) -> None:
        ray = self.ray
        for ref in list(self.pending):
            # Best effort: the task may be done already.
            with contextlib.suppress(Exception):
                ray.cancel(ref, force=True)
        self.pending.clear()
        if self.started:
            ray.shutdown()
            self.started = False


def _read_trace(path: str) -> bytes:
    """A trace to ship, whole: a regular file (a device or a FIFO would be read forever), read
    up to the size it had when opened (the object store holds that much)."""
    try:
        # Non-blocking: opening a FIFO without a writer would wait forever.
        with open(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as file:
            info = os.fstat(file.fileno())
            if not stat.S_ISREG(info.st_mode):
                error = _native.TraceError(
                    f"{path}: {file_kind(info.st_mode)}: a shipped trace must be a regular file"
                )
                error.path, error.line = path, None
                raise error
            return file.read(info.st_size)
    except OSError as e:
        error = _native.TraceError(f"{path}: cannot read the trace: {e.strerror or e}")
        error.path, error.line = path, None
        raise error from None


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


def _as_json_config(config: dict[str, Any]) -> dict[str, Any]:
    """The base config as JSON: a TOML file is read here (its relative ``workload.path``
    taken relative to the file, as the native loader does), since a worker on another node
    cannot read the driver's file."""
    if "config_path" not in config:
        return config
    path = pathlib.Path(config["config_path"])
    loads = toml_loads()
    if loads is None:
        raise _native.ConfigError(
            f"{path}: a TOML base config on the ray backend needs Python >= 3.11 or tomli "
            "(pip install tomli)"
        )
    try:
        value = loads(read_config_text(path))
    except ValueError as e:  # the TOML decode error
        raise _native.ConfigError(f"{path}: {e}") from None
    workload = value.get("workload")
    if isinstance(workload, dict) and isinstance(workload.get("path"), str):
        trace = pathlib.Path(workload["path"])
        if not trace.is_absolute():
            workload["path"] = str(path.parent / trace)
    return {"config_json": json.dumps(value)}
