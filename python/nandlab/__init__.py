"""nandlab: a flash-storage (SSD FTL) laboratory.

A deterministic simulator written in Rust, driven from Python::

    import nandlab

    result = nandlab.run({"workload.kind": "hotcold", "ftl.placement": "dac"})
    result.metrics["write_amplification"]

    df = nandlab.sweep(
        {"workload.kind": "hotcold", "device.utilization": 0.85},
        {"ftl.cleaning": ["greedy", "cat"], "ftl.regions": [1, 2, 4]},
        jobs=2,
        seeds=[1, 2, 3],
    )
    nandlab.plot.lines(df, "ftl.regions", "erases", hue="ftl.cleaning", path="erases.png")

Configs are dicts (nested or with dotted keys, as in ``nandlab print-config``), TOML file
paths, or None for every default; ``set=`` overrides work like the CLI's ``--set``. A run is a
pure function of (config, seed, version), all recorded in its `Result`. The version is
`build_version`, e.g. ``nandlab 0.1.0 (1a2b3c4d5e6f)``: the crate version and the git commit the
native module was built from (``-dirty`` when the work tree had uncommitted changes, or
``no git commit: ...`` for a build outside a checkout), the string ``nandlab --version``
prints. ``__version__`` is the package version alone (``0.1.0``).

Every user error raises a subclass of `NandlabError`: `ConfigError` (a config key, named by
``error.key``, or a config file), `TraceError`, `RequestError`, `SweepStoreError` (a sweep
store: another sweep's, or a damaged file, named), `ReportError`, and `ArgumentError` for any
other bad argument (named by ``error.argument``; also a ValueError, `ArgumentTypeError` also a
TypeError, `ColumnError` also a KeyError).
"""

from . import plot, recycling
from ._analyze import SUITES, TraceAnalysis, analyze, suite
from ._api import ProgressCallback, presets, resolve_config, run
from ._config import ConfigLike, Overrides
from ._errors import ArgumentError, ArgumentTypeError, ColumnError
from ._native import BUILD_VERSION as build_version
from ._native import ConfigError, NandlabError, RequestError, TraceError
from ._native import __version__ as __version__
from ._pbr import GeometryProbe, PbrResult, pbr, probe
from ._report import ReportError, report
from ._result import WALL_CLOCK_METRICS, Result, WearSample
from ._store import SweepStoreError, load_sweep
from ._sweep import SweepWarning, sweep, sweep_points, with_version, write_csv, write_parquet

__all__ = [
    "SUITES",
    "WALL_CLOCK_METRICS",
    "ArgumentError",
    "ArgumentTypeError",
    "ColumnError",
    "ConfigError",
    "ConfigLike",
    "GeometryProbe",
    "NandlabError",
    "Overrides",
    "PbrResult",
    "ProgressCallback",
    "ReportError",
    "RequestError",
    "Result",
    "SweepStoreError",
    "SweepWarning",
    "TraceAnalysis",
    "TraceError",
    "WearSample",
    "__version__",
    "analyze",
    "build_version",
    "load_sweep",
    "pbr",
    "plot",
    "presets",
    "probe",
    "recycling",
    "report",
    "resolve_config",
    "run",
    "suite",
    "sweep",
    "sweep_points",
    "with_version",
    "write_csv",
    "write_parquet",
]
