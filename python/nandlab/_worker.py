"""One sweep point, run where a worker runs it (this process, a pool process, a Ray task).

Workers return plain data — ``("ok", report JSON)`` or ``("error", class name, message,
attributes)`` — so nothing unpicklable crosses processes, and a failing point is data, not an
exception that a pool or Ray would retry: a config or trace error is deterministic.

Traces travel to Ray workers through the object store (`localize`): each worker node keeps
one copy per trace content (named by its SHA-256) in a cache directory, the point runs on that
copy, and the paths in the result are set back to the driver's, so a result does not depend
on where it ran.
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import tempfile
from collections.abc import Sequence
from typing import Any, Optional, Union

from . import _native

# What a worker returns: ("ok", report JSON) or ("error", class name, message, attributes).
Outcome = Union[tuple[str, str], tuple[str, str, str, dict[str, Any]]]

ERROR_ATTRIBUTES = ("key", "path", "line", "index", "kind", "io_kind")

TRACE_KEY = "workload.path"


def run_point(config: dict[str, Any], overrides: list[str]) -> Outcome:
    """Runs one point and returns plain data. ``config`` holds the native module's config
    arguments (``config_json`` or ``config_path``)."""
    try:
        return ("ok", _native.run(overrides=overrides, **config))
    except _native.NandlabError as e:
        attributes = {a: getattr(e, a) for a in ERROR_ATTRIBUTES if hasattr(e, a)}
        return ("error", type(e).__name__, str(e), attributes)
    except BaseException as e:  # a bug (PanicException) must not kill the worker
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        return ("error", "NandlabError", f"{type(e).__name__}: {e}", {})


# ---------------------------------------------------------------- traces through Ray


def trace_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def cache_dir() -> pathlib.Path:
    """Where a worker node keeps shipped traces (``$NANDLAB_TRACE_CACHE`` or the temp dir)."""
    root = os.environ.get("NANDLAB_TRACE_CACHE")
    return pathlib.Path(root) if root else pathlib.Path(tempfile.gettempdir()) / "nandlab-traces"


def local_copy(digest: str, name: str, fetch: Any) -> pathlib.Path:
    """This node's copy of a shipped trace: ``cache/<digest>/<name>`` (the name keeps the
    extension the reader detects the format by). ``fetch()`` returns its bytes; it is called
    only when the node has no copy yet."""
    path = cache_dir() / digest / name
    if path.exists():
        return path
    data: bytes = fetch()
    if trace_digest(data) != digest:
        raise RuntimeError(f"the shipped trace {name} arrived damaged (SHA-256 differs)")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
    return path


def restore_paths(report_json: str, local_to_original: dict[str, str]) -> str:
    """``report_json`` with every trace path that names a local copy set back to the driver's
    path (the config's ``workload.path`` and the trace facts' ``path``)."""
    if not local_to_original:
        return report_json
    report = json.loads(report_json)
    workload = report.get("config", {}).get("workload", {})
    if workload.get("path") in local_to_original:
        workload["path"] = local_to_original[workload["path"]]
    trace = report.get("trace")
    if isinstance(trace, dict) and trace.get("path") in local_to_original:
        trace["path"] = local_to_original[trace["path"]]
    return json.dumps(report)


def run_shipped(
    config: dict[str, Any],
    overrides: list[str],
    shipped: Sequence[tuple[str, str, str, Any]],
) -> Outcome:
    """`run_point` on a node that may not see the driver's files: ``shipped`` lists
    ``(original path, digest, file name, [object ref])`` of every trace the point may read;
    the point reads this node's copy of each (fetched from the object store once per node),
    and its result names the original paths."""
    import ray

    local_to_original: dict[str, str] = {}
    extra: list[str] = []
    for original, digest, name, ref in shipped:
        local = local_copy(digest, name, lambda ref=ref: ray.get(ref[0]))
        local_to_original[str(local)] = original
        if _uses(config, overrides, original):
            extra.append(f"{TRACE_KEY}={json.dumps(str(local))}")
    outcome = run_point(config, list(overrides) + extra)
    if outcome[0] == "ok":
        return ("ok", restore_paths(outcome[1], local_to_original))
    return outcome


def trace_override(item: str) -> Optional[str]:
    """The path a ``key=value`` override gives ``workload.path``, or None for another key."""
    key, _, value = item.partition("=")
    if key.strip() != TRACE_KEY:
        return None
    try:
        return str(json.loads(value))
    except ValueError:
        return value.strip().strip("'\"")


def _uses(config: dict[str, Any], overrides: list[str], path: str) -> bool:
    """Whether the point's ``workload.path`` is ``path`` (its last override, else the base's)."""
    for item in reversed(overrides):
        given = trace_override(item)
        if given is not None:
            return given == path
    base = json.loads(config.get("config_json", "{}"))
    return bool(base.get("workload", {}).get("path") == path)
