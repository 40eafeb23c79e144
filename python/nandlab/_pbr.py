"""`pbr`: the benchmarks paper's Per-Byte-Response replay and symptom diagnosis (`nandlab pbr`),
and the geometry paper's probes (`nandlab probe`); both papers are cited in docs/PAPERS.md.

A trace's writes are issued one at a time against a target — the simulator (``"sim:"``,
simulated time), an NBD export (``"nbd://host:port"``, ``"nbd+unix:///?socket=PATH"``) or a
block device path (wall clock) — and each write's PBR = response time / bytes is recorded.
The replay and the diagnosis run in Rust (``nandlab_probe``), the GIL released.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional, Union

from . import _native
from ._config import Overrides, overrides_list
from ._errors import U64_MAX, argument_error, check_int, check_path, native_arguments

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = ["GeometryProbe", "PbrResult", "pbr", "probe"]

PathLike = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class PbrResult:
    """A replay: ``summary`` (the JSON of ``nandlab pbr --json``: quantiles, target, trace,
    config of a ``sim:`` target, version, ``diagnosis``) and the points as columns."""

    summary: Mapping[str, Any]
    offset_bytes: list[int]
    length_bytes: list[int]
    response_ns: list[int]

    @property
    def symptom(self) -> str:
        """``"none"``, ``"buffer"``, ``"mapping"`` or ``"gc"``."""
        return str(self.summary["diagnosis"]["symptom"])

    @property
    def diagnosis(self) -> Mapping[str, Any]:
        """The symptom, its explanation and the evidence (scores, where the high PBRs are)."""
        diagnosis: Mapping[str, Any] = self.summary["diagnosis"]
        return diagnosis

    @property
    def pbr_ns_per_byte(self) -> list[float]:
        return [r / n for r, n in zip(self.response_ns, self.length_bytes)]

    def frame(self) -> pd.DataFrame:
        """One row per replayed write: index, offset, length, response time, PBR."""
        import pandas as pd

        return pd.DataFrame(
            {
                "index": range(len(self.response_ns)),
                "offset_bytes": self.offset_bytes,
                "length_bytes": self.length_bytes,
                "response_ns": self.response_ns,
                "pbr_ns_per_byte": self.pbr_ns_per_byte,
            }
        )

    def write_parquet(self, path: PathLike) -> None:
        """The points as Parquet, the summary in the file's metadata (``nandlab.pbr``).
        Needs pyarrow (``pip install nandlab[parquet]``)."""
        import importlib.util

        if importlib.util.find_spec("pyarrow") is None:
            raise ImportError("write_parquet needs pyarrow: pip install 'nandlab[parquet]'")
        import pyarrow as pa  # type: ignore[import-untyped]
        import pyarrow.parquet as pq  # type: ignore[import-untyped]

        table = pa.Table.from_pandas(self.frame(), preserve_index=False)
        meta = dict(table.schema.metadata or {})
        meta[b"nandlab.pbr"] = json.dumps(self.summary).encode()
        pq.write_table(table.replace_schema_metadata(meta), os.fspath(path))

    def plot(self, path: Optional[PathLike] = None, title: Optional[str] = None) -> Figure:
        """The paper's 3-D view (request index x LBA x PBR, log scale) and its two 2-D
        projections; saved to ``path`` when given. ``title`` defaults to the trace, the target
        and the diagnosis."""
        import math

        import matplotlib

        if path is not None:
            matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt

        index = list(range(len(self.response_ns)))
        lba = [o / 512 for o in self.offset_bytes]
        logp = [math.log10(max(p, 1e-3)) for p in self.pbr_ns_per_byte]
        fig = plt.figure(figsize=(15, 4.5))
        ax = fig.add_subplot(1, 3, 1, projection="3d")
        ax.scatter(index, lba, logp, s=2, c=logp, cmap="viridis")
        ax.set_xlabel("request index")
        ax.set_ylabel("LBA (sectors)")
        ax.set_zlabel("log10 PBR (ns/B)")
        pbr = self.pbr_ns_per_byte
        projections: list[tuple[list[float], str]] = [
            ([float(i) for i in index], "request index"),
            (lba, "LBA (sectors)"),
        ]
        for k, (xs, label) in enumerate(projections):
            a = fig.add_subplot(1, 3, k + 2)
            a.scatter(xs, pbr, s=2)
            a.set_yscale("log")
            a.set_xlabel(label)
            a.set_ylabel("PBR (ns/B)")
        fig.suptitle(
            title or f"{self.summary['trace']} on {self.summary['target']}: {self.symptom}"
        )
        fig.tight_layout()
        if path is not None:
            fig.savefig(os.fspath(path), dpi=110)
        return fig


def pbr(
    target: str,
    trace: PathLike,
    *,
    set: Overrides = None,  # the CLI's --set, by design
    format: Optional[str] = None,  # the CLI's --format, by design
    device: Optional[int] = None,
    max_writes: Optional[int] = None,
    destroy_data: bool = False,
) -> PbrResult:
    """Replays ``trace``'s writes against ``target`` at queue depth 1 and diagnoses the
    result (`nandlab pbr`). ``set`` configures a ``"sim:"`` target (dotted keys, like
    `run`); a block device is overwritten and needs ``destroy_data=True``.

    Raises:
        ArgumentError: (a ValueError) an unknown target form, ``set`` for a target other than
            ``sim:``, ``device`` or ``max_writes`` not an unsigned 64-bit integer.
        NandlabError: the target or the trace cannot be used (the message says why).
    """
    _check_target(target)
    path = check_path(trace, "trace")
    if device is not None:
        device = check_int(device, "device", minimum=0, maximum=U64_MAX)
    if max_writes is not None:
        max_writes = check_int(max_writes, "max_writes", minimum=0, maximum=U64_MAX)
    overrides = overrides_list(set)
    with native_arguments():
        text, (offsets, lengths, responses) = _native.pbr(
            target, path, overrides, format, device, max_writes, bool(destroy_data)
        )
    return PbrResult(json.loads(text), offsets, lengths, responses)


def _check_target(target: Any) -> None:
    if not isinstance(target, str) or not target:
        raise argument_error(
            "target",
            "expected \"sim:\", \"nbd://host:port\", \"nbd+unix:///?socket=PATH\" or a block "
            f"device path, not {target!r}",
            wrong_type=not isinstance(target, str),
        )


@dataclass(frozen=True)
class GeometryProbe:
    """What `probe` found: ``data`` is the report (the JSON of ``nandlab probe --json``)."""

    data: Mapping[str, Any]

    @property
    def effective_page_bytes(self) -> Optional[int]:
        v = self.data["effective_page_bytes"]
        return None if v is None else int(v)

    @property
    def block_bytes(self) -> Optional[int]:
        v = self.data["block_bytes"]
        return None if v is None else int(v)

    @property
    def zone_bytes(self) -> Optional[int]:
        v = self.data["zone_bytes"]
        return None if v is None else int(v)

    @property
    def parallel_units(self) -> Optional[int]:
        v = self.data["parallel_units"]
        return None if v is None else int(v)

    def curves(self) -> dict[str, pd.DataFrame]:
        """Each raw curve as a two-column DataFrame, by name."""
        import pandas as pd

        return {
            c["name"]: pd.DataFrame({c["x_label"]: c["x"], c["y_label"]: c["y"]})
            for c in self.data["curves"]
        }


def probe(
    target: str,
    *,
    set: Overrides = None,  # the CLI's --set, by design
    only: Optional[list[str]] = None,
    repeats: int = 7,
    destroy_data: bool = False,
) -> GeometryProbe:
    """Detects ``target``'s effective page, block and mapping-zone sizes and its parallel units
    (`nandlab probe`; the geometry paper's black-box tests). ``only`` picks among ``"page"``,
    ``"block"``, ``"zone"``, ``"parallel"``; ``repeats`` measurements per point on wall-clock
    targets. The probes write anywhere on the target: a block device needs
    ``destroy_data=True``.

    Raises:
        ArgumentError: (a ValueError) an unknown target form or probe name, ``repeats`` not a
            positive integer.
        NandlabError: the target cannot be used or is too small.
    """
    _check_target(target)
    if only is not None and (
        isinstance(only, str) or not isinstance(only, (list, tuple))
        or not all(isinstance(o, str) for o in only)
    ):
        raise argument_error(
            "only", f"expected a list of probe names, e.g. ['page'], not {only!r}",
            wrong_type=True,
        )
    repeats = check_int(repeats, "repeats", minimum=1, maximum=1_000_000)
    overrides = overrides_list(set)
    with native_arguments():
        text = _native.probe(target, overrides, list(only or []), repeats, bool(destroy_data))
    return GeometryProbe(json.loads(text))
