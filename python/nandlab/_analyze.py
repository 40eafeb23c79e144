"""`analyze`: the benchmarks paper's workload characterisation of a trace file (`nandlab analyze`;
the paper is cited in docs/PAPERS.md).

The figures and their definitions come from the Rust analyser (``nandlab_trace::analyze``):
one streaming pass, the GIL released.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional, Union

from . import _native
from ._errors import U64_MAX, argument_error, check_int, check_path, native_arguments

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = ["SUITES", "TraceAnalysis", "analyze", "suite"]

PathLike = Union[str, "os.PathLike[str]"]

#: The macroscopic figures, in the order `TraceAnalysis.table` lists them.
MACROSCOPIC = (
    "requests",
    "read_requests",
    "write_requests",
    "read_bytes",
    "write_bytes",
    "data_transferred_bytes",
    "rewrite_ratio",
    "sequential_ratio",
    "request_bytes_typical",
    "alignment_ratio",
    "footprint_bytes",
    "short_rewrite_share",
    "duration_ns",
    "suite",
)


@dataclass(frozen=True)
class TraceAnalysis:
    """One trace's characterisation. ``data`` is the full report (the JSON of
    ``nandlab analyze --json``); the common figures are attributes."""

    data: Mapping[str, Any]

    @property
    def rewrite_ratio(self) -> float:
        return float(self.data["rewrite_ratio"])

    @property
    def sequential_ratio(self) -> float:
        return float(self.data["sequential_ratio"])

    @property
    def alignment_ratio(self) -> float:
        return float(self.data["alignment_ratio"])

    @property
    def request_bytes_typical(self) -> int:
        return int(self.data["request_bytes_typical"])

    @property
    def write_bytes(self) -> int:
        return int(self.data["write_bytes"])

    @property
    def read_bytes(self) -> int:
        return int(self.data["read_bytes"])

    @property
    def suite(self) -> str:
        """``"transfer"``, ``"mapping"``, ``"gc"``, ``"buffer"`` or ``"none"``."""
        return str(self.data["suite"])

    @property
    def suite_reason(self) -> str:
        return str(self.data["suite_reason"])

    def table(self) -> pd.DataFrame:
        """The macroscopic figures as a one-row DataFrame indexed by the trace path."""
        import pandas as pd

        row = {k: self.data[k] for k in MACROSCOPIC}
        return pd.DataFrame([row], index=pd.Index([self.data["trace"]], name="trace"))

    def samples(self, view: str) -> pd.DataFrame:
        """A sampled microscopic series: ``"lba"`` (write_index, device, offset_bytes),
        ``"life_cycle"`` (offset_bytes, life_ns) or ``"seek"`` (offset_bytes, seek_bytes)."""
        import pandas as pd

        s = self.data["samples"][view]
        return pd.DataFrame(s["points"], columns=s["columns"])

    def plot(self, path: Optional[PathLike] = None) -> Figure:
        """The paper's microscopic views side by side: LBA over write index, life cycle over
        address (log scale) and seek distance over address (its Figures 4-6). Saves a PNG
        when ``path`` is given."""
        from matplotlib.figure import Figure

        fig = Figure(figsize=(15, 4.2), layout="constrained")
        axes = fig.subplots(1, 3)
        lba, life, seek = self.samples("lba"), self.samples("life_cycle"), self.samples("seek")
        axes[0].scatter(lba["write_index"], lba["offset_bytes"] / 512, s=2)
        axes[0].set_xlabel("write index")
        axes[0].set_ylabel("logical sector address")
        axes[0].set_title("logical address distribution")
        axes[1].scatter(life["offset_bytes"] / 512, life["life_ns"] / 1e6, s=2)
        if len(life) and (life["life_ns"] > 0).any():
            axes[1].set_yscale("log")
        axes[1].set_xlabel("logical sector address")
        axes[1].set_ylabel("life cycle (ms)")
        axes[1].set_title("life cycle of rewritten data")
        axes[2].scatter(seek["offset_bytes"] / 512, seek["seek_bytes"] / 512, s=2)
        axes[2].set_xlabel("logical sector address")
        axes[2].set_ylabel("seek distance (sectors)")
        axes[2].set_title("seek distance")
        name = os.path.basename(str(self.data["trace"]))
        fig.suptitle(f"{name}: {self.suite} suite")
        if path is not None:
            fig.savefig(path, dpi=110)
        return fig


def analyze(
    path: PathLike,
    *,
    format: Optional[str] = None,  # the CLI's --format, by design
    device: Optional[int] = None,
    sequential_window: int = 10,
    alignment_bytes: int = 4096,
    sample_points: int = 10_000,
    buffer_window_ns: int = 1_000_000_000,
) -> TraceAnalysis:
    """Characterises the trace at ``path`` in one streaming pass (any format ``nandlab run``
    reads; detected from the content unless ``format`` names it; ``device`` keeps one
    device's records).

    Returns the figures of the benchmarks paper's Table 3 (rewrite, sequential and alignment ratios,
    typical request length, data transferred), the microscopic series behind its Figures
    4-6, and the suite (Transfer, Mapping, GC or Buffer) with the reason.

    Raises:
        TraceError: an unreadable or malformed trace, an unknown format, or no records.
        ArgumentError: an argument out of its range (the message names it): ``device``,
            ``sequential_window``, ``sample_points`` and ``buffer_window_ns`` are unsigned
            64-bit, ``alignment_bytes`` at least 1.
    """
    trace = check_path(path, "path")
    if device is not None:
        device = check_int(device, "device", minimum=0, maximum=U64_MAX)
    numbers = [
        check_int(value, name, minimum=minimum, maximum=U64_MAX)
        for name, value, minimum in (
            ("sequential_window", sequential_window, 0),
            ("alignment_bytes", alignment_bytes, 1),
            ("sample_points", sample_points, 0),
            ("buffer_window_ns", buffer_window_ns, 0),
        )
    ]
    with native_arguments():
        text = _native.analyze(trace, format, device, *numbers)
    return TraceAnalysis(json.loads(text))


#: The benchmark suites `suite` writes (benchmarks paper §5.2).
SUITES = ("transfer", "mapping", "gc", "buffer")


def suite(name: str, out: PathLike, **params: Any) -> TraceAnalysis:
    """Writes benchmark suite ``name`` (one of `SUITES`) as an MSR CSV trace at ``out`` and
    returns its analysis (`nandlab suite`). Defaults are the benchmarks paper's Table 3 rows
    (Transfer: its Copy; GC: Browser; Mapping: Install Linux; Buffer: ours); ``params`` override
    them: ``seed``, ``write_bytes``, ``area_bytes``, ``rewrite_ratio``, ``sequential_ratio``,
    ``alignment_ratio``, ``request_bytes`` / ``rewrite_request_bytes`` (``"4096:0.7,131072:0.3"``
    or a list of ``(bytes, weight)``), ``partition_offset_bytes``, ``hot_fraction``,
    ``hot_extents``, ``groups``, ``group_header_bytes``, ``interarrival_ns``. The result's
    ``data["targets"]`` holds the targets beside the measured figures.

    Raises:
        ArgumentError: (a ValueError) an unknown suite or parameter, or parameters that do not
            fit; the message names the parameter.
        NandlabError: ``out`` cannot be written.
    """

    def text(key: str, v: Any) -> str:
        if isinstance(v, (list, tuple)):
            if not all(isinstance(p, (list, tuple)) and len(p) == 2 for p in v):
                raise argument_error(
                    key, f"expected (bytes, weight) pairs, e.g. [(4096, 0.7)], not {v!r}"
                )
            return ",".join(f"{b}:{w}" for b, w in v)
        return str(v)

    if not isinstance(name, str):
        raise argument_error("name", f"expected one of {SUITES}, not {name!r}", wrong_type=True)
    target = check_path(out, "out")
    overrides = [f"{k}={text(k, v)}" for k, v in params.items()]
    with native_arguments():
        report = _native.suite(name, target, overrides)
    return TraceAnalysis(json.loads(report))
