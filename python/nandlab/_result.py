"""`Result`: one run's metrics together with what makes it reproducible.

A result records the resolved config (every default filled in), the seed and the simulator
version; running `result.config` again gives the same metrics (wall-clock fields aside).
`to_frame` gives the one-row table that sweeps concatenate: dotted config columns, scalar
metrics (latency summaries flattened as ``write_latency_ns.p99``), trace facts, seed, version.
Series are kept out of it and typed on their own: `Result.wear_histogram` (a frame) and
`Result.wear_samples` (`WearSample` records, with ``run.sample_every_bytes``) and
`Result.latency_histogram` (requests per latency bucket, for CDFs).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Optional

from ._config import flatten
from ._errors import argument_error

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["WALL_CLOCK_METRICS", "Result", "WearSample"]

WALL_CLOCK_METRICS = ("wall_seconds", "measured_wall_seconds", "host_writes_per_wall_second")
"""Metrics measured on the wall clock: the only ones that differ between identical runs."""

# Left out of `to_frame`: not scalars (see `Result.wear_histogram`, `Result.wear_samples`).
_FRAME_EXCLUDED_METRICS = (
    "wear_histogram",
    "wear_samples",
    "read_latency_histogram_ns",
    "write_latency_histogram_ns",
)


def _why(error: Exception) -> str:
    """What a missing field (KeyError) or a wrong one made fail, in words."""
    if isinstance(error, KeyError):
        return f"no {error.args[0]!r} field"
    return str(error)


def _cell(value: Any) -> Any:
    """A frame cell: lists and tables become JSON text so that columns stay hashable (groupby,
    pivot) and store in Parquet whatever their shape."""
    if isinstance(value, (list, tuple, Mapping)):
        return json.dumps(value)
    return value


@dataclass(frozen=True)
class WearSample:
    """The device's wear at one point of a run (``run.sample_every_bytes``).

    Every count is cumulative from the start of the run, prefill and warm-up included (wear is
    the device's whole life, not the measurement window). Samples are taken each time the host
    has written another ``run.sample_every_bytes`` bytes, and once at the end.

    Attributes:
        host_write_bytes: bytes the host has written so far.
        erases: blocks erased so far, whatever the reason.
        wear_leveling_erases: of those, the ones the wear leveler caused.
        wear_leveling_copies: pages the wear leveler copied so far.
        flash_program_pages: pages programmed so far, all sources.
        wear_mean, wear_stddev, wear_max, wear_min: erase counts over all blocks.
    """

    host_write_bytes: int
    erases: int
    wear_leveling_erases: int
    wear_leveling_copies: int
    flash_program_pages: int
    wear_mean: float
    wear_stddev: float
    wear_max: int
    wear_min: int

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> WearSample:
        """A sample from its JSON form (one entry of ``metrics["wear_samples"]``).

        Raises:
            ArgumentError: (a ValueError) ``data`` is not a wear sample (the message says
                which field is missing or wrong).
        """
        try:
            return cls(
                host_write_bytes=int(data["host_write_bytes"]),
                erases=int(data["erases"]),
                wear_leveling_erases=int(data["wear_leveling_erases"]),
                wear_leveling_copies=int(data["wear_leveling_copies"]),
                flash_program_pages=int(data["flash_program_pages"]),
                wear_mean=float(data["wear_mean"]),
                wear_stddev=float(data["wear_stddev"]),
                wear_max=int(data["wear_max"]),
                wear_min=int(data["wear_min"]),
            )
        except (KeyError, TypeError, ValueError) as e:
            raise argument_error("data", f"not a wear sample: {_why(e)}") from None


@dataclass(frozen=True)
class Result:
    """The result of one run (`nandlab.run`).

    Attributes:
        metrics: every metric by its public name (see the metric list in the README); latency
            summaries are dicts (``count, mean, p50, p90, p99, p999, max`` in ns),
            ``wear_histogram`` is a list of ``[erase_count, blocks]`` pairs and
            ``wear_samples`` a list of dicts (typed: the `wear_samples` property).
        config: the resolved config as nested dicts; ``nandlab.run(result.config)`` repeats
            the run.
        seed: the run's seed (``run.seed``).
        version: the code that produced the result, ``nandlab X.Y.Z (COMMIT)`` (see
            `nandlab.build_version`).
        trace: facts about the trace (path, format, records, ...) for trace workloads.
    """

    metrics: dict[str, Any]
    config: dict[str, Any]
    seed: int
    version: str
    trace: Optional[dict[str, Any]] = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Result:
        """A result from its `to_dict` form (also the CLI's ``--json`` output).

        Raises:
            ArgumentError: (a ValueError) ``data`` is not a result (the message says which
                field is missing or wrong).
        """
        if not isinstance(data, Mapping):
            raise argument_error(
                "data", f"not a nandlab result: a mapping expected, not {type(data).__name__}"
            )
        try:
            return cls(
                metrics=dict(data["metrics"]),
                config=dict(data["config"]),
                seed=int(data["seed"]),
                version=str(data["version"]),
                trace=dict(data["trace"]) if data.get("trace") is not None else None,
            )
        except (KeyError, TypeError, ValueError) as e:
            raise argument_error("data", f"not a nandlab result: {_why(e)}") from None

    @classmethod
    def from_json(cls, text: str) -> Result:
        """A result from `to_json` text (also the CLI's ``--json`` output).

        Raises:
            ArgumentError: (a ValueError) ``text`` is not JSON, or not a result's.
        """
        try:
            data = json.loads(text)
        except (TypeError, ValueError) as e:  # JSONDecodeError, or not a str/bytes at all
            raise argument_error("text", f"not a nandlab result's JSON: {e}") from None
        return cls.from_dict(data)

    def to_dict(self) -> dict[str, Any]:
        """Plain data: ``metrics, config, seed, version`` and ``trace`` when there is one."""
        out: dict[str, Any] = {
            "metrics": self.metrics,
            "config": self.config,
            "seed": self.seed,
            "version": self.version,
        }
        if self.trace is not None:
            out["trace"] = self.trace
        return out

    def to_json(self, *, indent: int | None = 2) -> str:
        """`to_dict` as JSON text."""
        return json.dumps(self.to_dict(), indent=indent)

    def scalars(self) -> dict[str, Any]:
        """The row `to_frame` holds, as a dict: config columns (dotted), scalar metrics
        (latency summaries flattened as ``read_latency_ns.p50``), ``trace.*``, seed, version."""
        row: dict[str, Any] = {k: _cell(v) for k, v in flatten(self.config).items()}
        for name, value in self.metrics.items():
            if name in _FRAME_EXCLUDED_METRICS:
                continue
            if isinstance(value, Mapping):
                row.update({f"{name}.{k}": _cell(v) for k, v in value.items()})
            else:
                row[name] = _cell(value)
        if self.trace is not None:
            row.update({f"trace.{k}": _cell(v) for k, v in self.trace.items()})
        row["seed"] = self.seed
        row["version"] = self.version
        return row

    def to_frame(self) -> pd.DataFrame:
        """A one-row DataFrame: see `scalars`. ``wear_histogram`` and ``wear_samples`` are left
        out (see the properties of those names)."""
        import pandas as pd

        return pd.DataFrame([self.scalars()])

    @property
    def wear_histogram(self) -> pd.DataFrame:
        """Blocks per erase count at the end of the run: columns ``erase_count, blocks``."""
        import pandas as pd

        pairs = self.metrics.get("wear_histogram") or []
        return pd.DataFrame(
            [(int(c), int(b)) for c, b in pairs], columns=["erase_count", "blocks"]
        ).astype("int64")

    def latency_histogram(self, kind: Literal["read", "write"]) -> pd.DataFrame:
        """Requests per latency bucket of the run's ``kind`` requests (``read`` or ``write``),
        from ``metrics["read_latency_histogram_ns"]`` / ``["write_latency_histogram_ns"]``:
        columns ``latency_ns`` (the lowest latency of a bucket; log-linear buckets of about 3.2 %
        width) and ``requests``, one row per bucket holding requests, lowest first. Empty
        when the run had no such requests (or predates these metrics)."""
        import pandas as pd

        if kind not in ("read", "write"):
            raise argument_error("kind", f"must be 'read' or 'write', not {kind!r}")
        pairs = self.metrics.get(f"{kind}_latency_histogram_ns") or []
        frame = pd.DataFrame(
            sorted((int(ns), int(n)) for ns, n in pairs), columns=["latency_ns", "requests"]
        )
        return frame.astype("int64")

    @property
    def wear_samples(self) -> list[WearSample]:
        """Wear over the run, oldest first (empty unless ``run.sample_every_bytes`` was set)."""
        return [WearSample.from_dict(s) for s in self.metrics.get("wear_samples") or []]

    def __repr__(self) -> str:
        m = self.metrics
        c = self.config
        summary = ", ".join(
            f"{k}={m[k]:.4g}" if isinstance(m.get(k), float) else f"{k}={m.get(k)}"
            for k in ("host_write_pages", "erases", "write_amplification", "cleaning_cost")
            if k in m
        )
        ftl = c.get("ftl", {})
        return (
            f"Result(cleaning={ftl.get('cleaning')!r}, placement={ftl.get('placement')!r}, "
            f"seed={self.seed}, {summary})"
        )
