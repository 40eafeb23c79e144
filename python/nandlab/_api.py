"""`run`, `resolve_config` and `presets`: the single-run API over the native module."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import Any, Optional, Union

from . import _native
from ._config import ConfigLike, Overrides, native_args
from ._errors import argument_error
from ._result import Result

__all__ = ["ProgressCallback", "presets", "resolve_config", "run"]

ProgressCallback = Callable[[int, int], None]
"""Called as ``progress(requests_done, requests_expected)`` every 65,536 requests."""


class _StderrProgress:
    """A one-line progress display on stderr (rewritten in place with a carriage return)."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.shown = False

    def __call__(self, done: int, expected: int) -> None:
        percent = min(100.0, 100.0 * done / expected) if expected else 0.0
        elapsed = time.monotonic() - self.started
        sys.stderr.write(
            f"\rnandlab: {percent:5.1f}%  {done:,}/{expected:,} requests  {elapsed:6.1f} s"
        )
        sys.stderr.flush()
        self.shown = True

    def finish(self) -> None:
        if self.shown:
            sys.stderr.write("\n")
            sys.stderr.flush()


def run(
    config: ConfigLike = None,
    *,
    set: Overrides = None,  # the CLI's --set, by design
    progress: Union[bool, ProgressCallback] = False,
) -> Result:
    """Runs one configuration to the end and returns its `Result`.

    Args:
        config: a mapping, nested (``{"ftl": {"cleaning": "cat"}}``) or with dotted keys
            (``{"ftl.cleaning": "cat"}``); a TOML file path (str or PathLike; relative
            ``workload.path`` values are taken relative to the file); or None for every
            default. A resolved config (``Result.config``, ``resolve_config(...)``) runs as is.
        set: overrides applied on top, like the CLI's ``--set``: a mapping of dotted keys to
            Python values (written as TOML: ``True`` → ``true``, strings quoted, lists as
            arrays) or a sequence of ``"key=value"`` strings.
        progress: True for a progress line on stderr, or a callable
            ``progress(requests_done, requests_expected)`` called every 65,536 requests. The
            run cannot be interrupted; an exception raised by the callback is re-raised when
            the run ends.

    Raises:
        ConfigError: a bad key or value (``error.key`` names it) or an unreadable config file.
        TraceError: an unreadable or malformed trace (``error.path``, ``error.line``).
        RequestError: a request the device cannot accept (``error.index``; ``error.kind`` says
            why, ``error.io_kind`` the I/O error kind of a media failure).

    The GIL is released while the simulation runs.
    """
    args = native_args(config, set)
    display: Optional[_StderrProgress] = None
    callback: Optional[ProgressCallback] = None
    if progress is True:
        display = _StderrProgress()
        callback = display
    elif callable(progress):
        callback = progress
    elif progress is not False:
        raise argument_error(
            "progress", f"must be a bool or a callable, not {progress!r}", wrong_type=True
        )
    try:
        report = _native.run(progress=callback, **args)
    finally:
        if display is not None:
            display.finish()
    return Result.from_dict(json.loads(report))


def resolve_config(config: ConfigLike = None, *, set: Overrides = None) -> dict[str, Any]:
    """The resolved config (every default filled in, trace workloads sized from the trace) as
    nested dicts, plus a ``"derived"`` table: ``physical_pages, logical_pages, utilization,
    regions, gc_free_blocks_min``. Arguments as for `run`; `run` accepts the result as it is
    (the ``derived`` table is ignored). Raises the same errors as `run` would before running.
    """
    resolved: dict[str, Any] = json.loads(_native.resolve(**native_args(config, set)))
    return resolved


def presets() -> list[dict[str, Any]]:
    """Every device preset (``device.preset``): name, description, geometry, per-page timing
    in ns and endurance, the default (``generic``) first."""
    result: list[dict[str, Any]] = json.loads(_native.presets())
    return result
