"""Figures of the kinds the papers draw, from `sweep` tables and `Result`s.

Every helper returns the matplotlib `Figure`, draws into ``ax`` when given (else a new
figure), and saves a PNG when ``path`` is given. Figures are made without `pyplot`, so the
helpers work with any backend (``Agg`` on servers) and leave no global figure state; in
Jupyter the returned figure displays itself, elsewhere use ``path=`` or ``fig.savefig``.
Where several rows share an x value (e.g. seeds), lines and bars show their mean with the
standard deviation as a band or error bar. Axis labels come from column names, with the unit
the name carries: ``write_latency_ns.p99`` → "write latency p99 (ns)".

matplotlib is imported on first use, so ``import nandlab`` stays light.

Bad arguments raise `nandlab.ArgumentError` (a ValueError) naming them: a missing column is a
`ColumnError` (also a KeyError), a ``path`` that cannot be written names the file.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Optional, Union

from ._errors import ColumnError, argument_error

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from ._result import Result

__all__ = ["bars", "label", "latency_cdf", "lines", "wear_histogram", "wear_stability"]

PathLike = Union[str, "os.PathLike[str]"]

# Name suffix → unit shown in labels, longest first.
_UNITS = (
    ("_per_wall_second", "/s wall"),
    ("_per_s", "/s"),
    ("_seconds", "s"),
    ("_bytes", "bytes"),
    ("_passes", "passes"),
    ("_pages", "pages"),
    ("_ns", "ns"),
    ("_s", "s"),
)
_WORDS = {
    "gc": "GC",
    "ftl": "FTL",
    "dac": "DAC",
    "deb": "DEB",
    "ebr": "EBR",
    "ram": "RAM",
}


def label(column: str) -> str:
    """A readable axis label for a column name, with its unit.

    ``device.utilization`` → "utilization"; ``write_latency_ns.p99`` → "write latency p99 (ns)";
    ``flash_busy_ns`` → "flash busy (ns)"; ``host_write_pages`` → "host write (pages)".
    """
    if not isinstance(column, str):
        raise argument_error("column", f"expected a column name, not {column!r}", wrong_type=True)
    parts = column.split(".")
    # Config columns: the table name (device., ftl., ...) adds nothing but length.
    if len(parts) > 1 and parts[0] in ("device", "timing", "ftl", "workload", "run"):
        parts = parts[1:]
    unit = None
    words: list[str] = []
    for part in parts:
        for suffix, name in _UNITS:
            if part.endswith(suffix) and len(part) > len(suffix):
                part, unit = part[: -len(suffix)], name
                break
        words.extend(_WORDS.get(w, w) for w in part.replace("-", " ").split("_"))
    text = " ".join(w for w in words if w)
    return f"{text} ({unit})" if unit else text


def _new_axes(ax: Optional[Axes], figsize: tuple[float, float]) -> tuple[Figure, Axes]:
    if ax is not None:
        figure = ax.get_figure()
        assert figure is not None
        return figure, ax  # type: ignore[return-value]
    from matplotlib.figure import Figure

    figure = Figure(figsize=figsize, layout="constrained")
    return figure, figure.add_subplot()


def _finish(figure: Figure, ax: Axes, title: Optional[str], path: Optional[PathLike]) -> Figure:
    if title:
        ax.set_title(title)
    ax.grid(True, alpha=0.3)
    if path is not None:
        _save(figure, path, dpi=150)
    return figure


def _save(figure: Figure, path: Any, dpi: int) -> None:
    """``figure.savefig(path)``, its errors naming ``path``: an unwritable file, or an
    extension no backend writes (ValueError)."""
    if not isinstance(path, (str, os.PathLike)):
        raise argument_error("path", f"expected a file path, not {path!r}", wrong_type=True)
    try:
        figure.savefig(os.fspath(path), dpi=dpi)
    except OSError as e:
        raise argument_error("path", f"{path}: cannot write it: {e.strerror or e}") from None
    except ValueError as e:  # "Format 'xyz' is not supported"
        raise argument_error("path", f"{path}: {e}") from None


def _groups(df: pd.DataFrame, hue: Optional[str]) -> list[tuple[Any, pd.DataFrame]]:
    if hue is None:
        return [(None, df)]
    _require(df, hue)
    order = list(dict.fromkeys(df[hue].tolist()))
    return [(value, df[df[hue] == value]) for value in order]


def _require(df: pd.DataFrame, *columns: Optional[str]) -> None:
    import pandas as pd

    if not isinstance(df, pd.DataFrame):
        raise argument_error(
            "df", f"expected a pandas DataFrame, not {type(df).__name__}", wrong_type=True
        )
    missing = [c for c in columns if c is not None and c not in df.columns]
    if missing:
        raise ColumnError(
            f"no column {', '.join(map(repr, missing))}; columns: {list(df.columns)}"
        )


def _require_numeric(df: pd.DataFrame, y: str) -> None:
    """``y`` holds numbers: its mean is drawn (a text column would fail deep in pandas)."""
    import pandas as pd

    if not pd.api.types.is_numeric_dtype(df[y]) or pd.api.types.is_bool_dtype(df[y]):
        raise argument_error("y", f"column {y!r} holds {df[y].dtype} values, not numbers")


def _stats(df: pd.DataFrame, x: str, y: str, sort: bool) -> pd.DataFrame:
    """Mean, standard deviation and count of ``y`` per ``x`` value."""
    grouped = df.groupby(x, sort=sort)[y]
    stats = grouped.agg(["mean", "std", "count"]).reset_index()
    stats["std"] = stats["std"].fillna(0.0)
    return stats


def lines(
    df: pd.DataFrame,
    x: str,
    y: str,
    hue: Optional[str] = None,
    *,
    ax: Optional[Axes] = None,
    path: Optional[PathLike] = None,
    title: Optional[str] = None,
    xlabel: Optional[str] = None,
    ylabel: Optional[str] = None,
    logx: bool = False,
    logy: bool = False,
    marker: str = "o",
    figsize: tuple[float, float] = (6.0, 4.0),
) -> Figure:
    """``y`` against ``x``, one line per value of ``hue`` (in order of appearance).

    E.g. erases against regions per cleaning policy, or cleaning cost against utilization:
    ``lines(df, "device.utilization", "cleaning_cost", hue="ftl.cleaning")``.
    """
    _require(df, x, y)
    _require_numeric(df, y)
    figure, axes = _new_axes(ax, figsize)
    groups = _groups(df, hue)
    for value, part in groups:
        stats = _stats(part, x, y, sort=True)
        name = None if hue is None else f"{value}"
        (line,) = axes.plot(stats[x], stats["mean"], marker=marker, label=name)
        if (stats["count"] > 1).any():
            axes.fill_between(
                stats[x],
                stats["mean"] - stats["std"],
                stats["mean"] + stats["std"],
                color=line.get_color(),
                alpha=0.2,
                linewidth=0,
            )
    if logx:
        axes.set_xscale("log")
    if logy:
        axes.set_yscale("log")
    axes.set_xlabel(xlabel or label(x))
    axes.set_ylabel(ylabel or label(y))
    if title is None:
        title = f"{label(y)} vs {label(x)}" + (f" by {label(hue)}" if hue else "")
    if hue is not None:
        axes.legend(title=label(hue), frameon=False)
    return _finish(figure, axes, title, path)


def bars(
    df: pd.DataFrame,
    x: str,
    y: str,
    hue: Optional[str] = None,
    *,
    ax: Optional[Axes] = None,
    path: Optional[PathLike] = None,
    title: Optional[str] = None,
    xlabel: Optional[str] = None,
    ylabel: Optional[str] = None,
    logy: bool = False,
    figsize: tuple[float, float] = (6.0, 4.0),
) -> Figure:
    """Grouped bars: one group per value of ``x``, one bar per value of ``hue`` within it.

    E.g. erases per locality with and without DAC:
    ``bars(df, "workload.hot_access_fraction", "erases", hue="ftl.placement")``.
    """
    _require(df, x, y, hue)
    _require_numeric(df, y)
    figure, axes = _new_axes(ax, figsize)
    categories = list(dict.fromkeys(df[x].tolist()))
    groups = _groups(df, hue)
    width = 0.8 / len(groups)
    for i, (value, part) in enumerate(groups):
        stats = _stats(part, x, y, sort=False).set_index(x).reindex(categories)
        positions = [c + (i - (len(groups) - 1) / 2) * width for c in range(len(categories))]
        errors = stats["std"] if (stats["count"] > 1).any() else None
        axes.bar(
            positions,
            stats["mean"],
            width=width,
            yerr=errors,
            capsize=3 if errors is not None else 0,
            label=None if hue is None else f"{value}",
        )
    axes.set_xticks(range(len(categories)), [f"{c}" for c in categories])
    if logy:
        axes.set_yscale("log")
    axes.set_xlabel(xlabel or label(x))
    axes.set_ylabel(ylabel or label(y))
    if title is None:
        title = f"{label(y)} by {label(x)}" + (f" and {label(hue)}" if hue else "")
    if hue is not None:
        axes.legend(title=label(hue), frameon=False)
    return _finish(figure, axes, title, path)


def wear_histogram(
    data: Union[Result, pd.DataFrame, Mapping[str, Any], Sequence[Sequence[int]]],
    *,
    ax: Optional[Axes] = None,
    path: Optional[PathLike] = None,
    title: Optional[str] = None,
    figsize: tuple[float, float] = (6.0, 4.0),
) -> Figure:
    """Blocks per erase count: from a `Result`, its ``wear_histogram`` frame (columns
    ``erase_count, blocks``), a metrics dict, or ``[erase_count, blocks]`` pairs."""
    import pandas as pd

    from ._result import Result

    if isinstance(data, Result):
        frame = data.wear_histogram
    elif isinstance(data, pd.DataFrame):
        frame = data
    else:
        try:
            if isinstance(data, Mapping):
                pairs = data["wear_histogram"]
                frame = Result({"wear_histogram": pairs}, {}, 0, "").wear_histogram
            else:
                pairs = [tuple(p) for p in data]
                frame = pd.DataFrame(pairs, columns=["erase_count", "blocks"])
        except (KeyError, TypeError, ValueError) as e:
            raise argument_error(
                "data",
                "expected a Result, a frame with erase_count and blocks, a metrics dict with "
                f"wear_histogram, or [erase_count, blocks] pairs ({type(e).__name__}: {e})",
                wrong_type=isinstance(e, TypeError),
            ) from None
    _require(frame, "erase_count", "blocks")
    figure, axes = _new_axes(ax, figsize)
    axes.bar(frame["erase_count"], frame["blocks"], width=0.9)
    axes.set_xlabel("erase count")
    axes.set_ylabel("blocks")
    if title is None:
        blocks = int(frame["blocks"].sum())
        if blocks:
            mean = float((frame["erase_count"] * frame["blocks"]).sum()) / blocks
            title = f"wear: {blocks} blocks, mean {mean:.1f} erases"
        else:
            title = "wear"
    return _finish(figure, axes, title, path)


def _results(value: Any, argument: str) -> list[Result]:
    """A sequence of `Result`s as a list; anything else is a type error naming ``argument``."""
    from ._result import Result

    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise argument_error(
            argument, f"expected a Result or a sequence of them, not {value!r}", wrong_type=True
        )
    runs = list(value)
    for item in runs:
        if not isinstance(item, Result):
            raise argument_error(
                argument, f"expected Results, not {type(item).__name__}", wrong_type=True
            )
    return runs


def _differing_config(results: Sequence[Result]) -> list[str]:
    """One label per result: the config values that differ between the results (``key=value``,
    comma-separated), so lines compared in one figure are told apart by what was varied."""
    from ._config import flatten

    flat = [flatten(r.config) for r in results]
    keys = sorted({k for f in flat for k in f})
    varied = [k for k in keys if len({repr(f.get(k)) for f in flat}) > 1]
    return [", ".join(f"{label(k)}={f.get(k)}" for k in varied) for f in flat]


def wear_stability(
    results: Union[Result, Sequence[Result], Mapping[str, Result]],
    *,
    y: str = "wear_stddev",
    ax: Optional[Axes] = None,
    path: Optional[PathLike] = None,
    title: Optional[str] = None,
    xlabel: Optional[str] = None,
    ylabel: Optional[str] = None,
    logx: bool = False,
    logy: bool = False,
    marker: str = "",
    figsize: tuple[float, float] = (6.0, 4.0),
) -> Figure:
    """Wear against data written, one line per result (the lazy wear-leveling paper's stability
    figure, Fig. 14): the erase-count standard deviation (or another `WearSample` field, ``y``)
    against the host bytes written since the start of the run, from each result's
    ``wear_samples``.

    A mapping's keys label the lines; a sequence's lines are labelled by the config values that
    differ between the results. Results need ``run.sample_every_bytes`` set, e.g.
    ``wear_stability([nandlab.run(cfg, set={"run.sample_every_bytes": 1 << 24}) for cfg in
    configs])``.
    """
    from ._result import Result, WearSample

    if isinstance(results, Result):
        results = [results]
    if isinstance(results, Mapping):
        names: list[Optional[str]] = [str(k) for k in results]
        runs = list(results.values())
    else:
        runs = _results(results, "results")
        names = list(_differing_config(runs)) if len(runs) > 1 else [None] * len(runs)
    if not runs:
        raise argument_error("results", "wear_stability needs at least one result")
    if not all(isinstance(r, Result) for r in runs):  # a mapping's values
        raise argument_error("results", "expected Results", wrong_type=True)
    fields = WearSample.__dataclass_fields__
    if y not in fields or y == "host_write_bytes":
        raise ColumnError(f"no wear sample field {y!r}; fields: {list(fields)}")
    figure, axes = _new_axes(ax, figsize)
    for i, (name, result) in enumerate(zip(names, runs)):
        samples = result.wear_samples
        if not samples:
            raise argument_error(
                "results", f"result {i} has no wear samples: run it with run.sample_every_bytes set"
            )
        axes.plot(
            [s.host_write_bytes for s in samples],
            [getattr(s, y) for s in samples],
            marker=marker,
            label=name or None,
        )
    if logx:
        axes.set_xscale("log")
    if logy:
        axes.set_yscale("log")
    axes.set_xlabel(xlabel or "host data written (bytes)")
    default_y = "erase-count standard deviation" if y == "wear_stddev" else label(y)
    axes.set_ylabel(ylabel or default_y)
    if title is None:
        title = f"{default_y} vs data written"
    if any(names):
        axes.legend(frameon=False)
    return _finish(figure, axes, title, path)


def latency_cdf(
    data: Union[
        Result, pd.DataFrame, Sequence[Result], Mapping[str, Union[Result, pd.DataFrame]]
    ],
    *,
    kind: Literal["read", "write", "both"] = "write",
    ax: Optional[Axes] = None,
    path: Optional[PathLike] = None,
    title: Optional[str] = None,
    xlabel: Optional[str] = None,
    logx: bool = True,
    figsize: tuple[float, float] = (6.0, 4.0),
) -> Figure:
    """Latency CDFs: the fraction of requests that completed within each latency, one line per
    result, from the requests per latency bucket (`Result.latency_histogram`; log-linear buckets
    of about 3.2 %, so the steps are that fine). ``kind`` picks read or write requests, or
    ``both`` (two lines per result).

    ``data`` is a `Result`, a sequence of them (lines labelled by the config values that differ),
    a mapping of line names to results or to histogram frames (columns ``latency_ns,
    requests``, e.g. several runs' histograms summed; ``kind`` then only names the axis), or
    one such frame. Requests of 0 ns are counted in the fractions but cannot be drawn on the
    default log x axis.
    """
    import pandas as pd

    from ._result import Result

    if kind not in ("read", "write", "both"):
        raise argument_error("kind", f"must be 'read', 'write' or 'both', not {kind!r}")
    named: list[tuple[Optional[str], Union[Result, pd.DataFrame]]]
    if isinstance(data, (Result, pd.DataFrame)):
        named = [(None, data)]
    elif isinstance(data, Mapping):
        named = [(str(k), v) for k, v in data.items()]
    else:
        runs = _results(data, "data")
        names = _differing_config(runs) if len(runs) > 1 else [""] * len(runs)
        named = [(n or None, r) for n, r in zip(names, runs)]
    if not named:
        raise argument_error("data", "latency_cdf needs at least one result or histogram")
    for _, item in named:
        if not isinstance(item, (Result, pd.DataFrame)):
            raise argument_error(
                "data", f"expected Results or histogram frames, not {item!r}", wrong_type=True
            )
    kinds: list[Literal["read", "write"]] = ["read", "write"] if kind == "both" else [kind]
    figure, axes = _new_axes(ax, figsize)
    drawn = labelled = 0
    for name, item in named:
        # A frame is one histogram, whatever ``kind`` says.
        several = isinstance(item, Result) and len(kinds) > 1
        for k in kinds if isinstance(item, Result) else kinds[:1]:
            if isinstance(item, Result):
                frame = item.latency_histogram(k)
            else:
                frame = item
                _require(frame, "latency_ns", "requests")
            frame = frame.sort_values("latency_ns", kind="stable")
            total = float(frame["requests"].sum())
            if total <= 0:
                continue
            xs = [float(v) for v in frame["latency_ns"]]
            fractions = [float(v) / total for v in frame["requests"].cumsum()]
            below = 0.0  # the fraction below the first bucket drawn
            if logx:  # 0 ns cannot be drawn: start at the first positive bucket
                first = next((i for i, v in enumerate(xs) if v > 0), None)
                if first is None:
                    continue
                below = fractions[first - 1] if first > 0 else 0.0
                xs, fractions = xs[first:], fractions[first:]
            text = " ".join(p for p in (name, k if several else None) if p) or None
            # From the fraction below the first bucket, so that one bucket is a visible step.
            axes.step([xs[0], *xs], [below, *fractions], where="post", label=text)
            drawn += 1
            labelled += text is not None
    what = "latency" if len(kinds) > 1 else f"{kinds[0]} latency"
    if logx:
        from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

        axes.set_xscale("log")
        # 1-2-5 ticks in time units: latency ranges often span less than a decade.
        axes.xaxis.set_major_locator(LogLocator(base=10.0, subs=(1.0, 2.0, 5.0)))
        axes.xaxis.set_major_formatter(FuncFormatter(lambda v, _: _duration(v)))
        axes.xaxis.set_minor_formatter(NullFormatter())
        axes.set_xlabel(xlabel or what)
    else:
        axes.set_xlabel(xlabel or f"{what} (ns)")
    axes.set_ylim(0.0, 1.02)
    axes.set_ylabel("fraction of requests")
    if not drawn:
        missing = "requests" if len(kinds) > 1 else f"{kinds[0]} requests"
        axes.text(0.5, 0.5, f"no {missing}", ha="center", va="center", transform=axes.transAxes)
    if title is None:
        title = f"{what} CDF"
    if labelled:
        axes.legend(frameon=False)
    return _finish(figure, axes, title, path)


def _duration(ns: float) -> str:
    """A tick label for a duration in ns: ``500 ns``, ``2 µs``, ``1.5 ms``, ``3 s``."""
    for scale, unit in ((1e9, "s"), (1e6, "ms"), (1e3, "µs")):
        if ns >= scale:
            return f"{ns / scale:g} {unit}"
    return f"{ns:g} ns"
