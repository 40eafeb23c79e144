"""`report` and ``nandlab report``: one self-contained HTML file with the figures of a run, a
sweep or a table of results.

Sources: a `Result` or its JSON file (``nandlab run --json``; ``-``: on standard input, as
``nandlab run --report`` gives it), a sweep store directory (with
``manifest.json``, ``nandlab sweep --out``), a CSV or Parquet table (``nandlab.write_csv``, the
experiments' tables), or a directory of such tables (one section per table).

The page holds the source, the versions (``nandlab.build_version`` and the versions recorded in
the data), the swept keys and their values, failed points with their errors, one figure per key
metric against the swept keys (mean and standard deviation over seeds, as `nandlab.plot.lines`
draws them), latency CDFs, wear histograms, wear over time when the runs sampled it
(``run.sample_every_bytes``), a table of the means and the config. Figures are drawn by the
`nandlab.plot` helpers and embedded as PNG data URIs (256-colour palettes: a third of the
bytes); the stylesheet is inline, there are no scripts and a Content-Security-Policy forbids
loading anything else, so the file opens anywhere without a network. The same input gives the
same bytes: nothing in the page depends on the clock, and the PNGs carry no metadata.

Tables do not say which columns were swept; they are inferred (see `_table_keys`): the columns
a sweep put first (grid keys, before the resolved config in its canonical order) and label
columns (text columns that are neither config nor metrics, e.g. ``workload``) that take more than
one value, then every other config column that varies and is not determined by those. The x
axis is the numeric key with the most values, else a numeric config column that renames a label
key one to one (``locality`` "90/10" → ``workload.hot_access_fraction``), else bars over a
category; the hue is the innermost other key, and further keys give one panel each (beyond
nine panels the innermost panel keys join the hue). Latency CDFs, wear histograms and wear over
time show one line or panel per combination of the swept keys when there are at most eight (the
seeds' histograms summed), else per combination without the x key, else per hue value.
"""

from __future__ import annotations

import argparse
import base64
import functools
import html
import io
import json
import math
import os
import pathlib
import re
import stat
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional, Union

from . import _native, plot
from ._config import flatten, toml_value
from ._errors import argument_error, check_path, file_kind, read_bounded
from ._result import Result

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["ReportError", "main", "report"]

PathLike = Union[str, "os.PathLike[str]"]

KEY_METRICS = (
    "write_amplification",
    "erases",
    "cleaning_cost",
    "gc_copied_pages",
    "wear_stddev",
    "write_latency_ns.p99",
    "read_latency_ns.p99",
)
"""The metrics drawn against the swept keys (those present and not constant)."""

SEED_KEYS = ("run.seed", "seed")
MAX_PANELS = 9
MAX_SERIES = 8
MAX_TABLE_ROWS = 400
DPI = 100
TABLE_SUFFIXES = (".csv", ".parquet")

MAX_RESULT_BYTES = 256 << 20
"""The largest result JSON read (a run's is a few KiB; wear samples and a trace's facts add
little)."""

STDIN = "standard input"
"""The source of ``nandlab report -``, as the page and the messages name it."""

MAX_TABLE_BYTES = 4 << 30
"""The largest CSV or Parquet table read (as the sweep store's largest file)."""

# Columns of stored sweep rows and tables that are neither config, metrics nor labels.
_META = {"seed", "version", "point", "status", "error", "error_type", "error_attributes",
         "result_json"}

_STYLE = """
body { font-family: sans-serif; margin: 1.5em auto; max-width: 1250px; padding: 0 1em;
  color: #222; line-height: 1.4; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.3em; border-bottom: 1px solid #ccc; margin-top: 2em; }
h3 { font-size: 1.1em; margin-top: 1.5em; }
dl.facts { display: grid; grid-template-columns: max-content auto; gap: 0.2em 1em; }
dl.facts dt { font-weight: bold; }
dl.facts dd { margin: 0; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
figure { display: inline-block; margin: 0.5em 1em 1em 0; vertical-align: top; }
figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { font-size: 0.85em; color: #555; max-width: 600px; }
pre { background: #f7f7f7; border: 1px solid #ddd; padding: 0.6em; overflow-x: auto;
  font-size: 0.85em; }
nav ul { columns: 2; }
.note { color: #555; font-size: 0.9em; }
details { margin: 0.5em 0; }
"""


class ReportError(_native.NandlabError, ValueError):
    """A source a report cannot be made from (unknown kind, unreadable or empty), or an output
    file that cannot be written; the message names the file and says what was expected."""


class ReportSourceNotFound(ReportError, FileNotFoundError):
    """The source of a report does not exist (a `ReportError` and a `FileNotFoundError`)."""

    def __init__(self, message: str) -> None:
        # One argument, as other ReportErrors: OSError's (errno, strerror) form would print
        # as a tuple.
        super().__init__(message)


ReportError.__module__ = "nandlab"  # the package re-exports it


# --- the page ---------------------------------------------------------------------------------


class _Page:
    """HTML parts in order, with a table of contents of the ``h2`` headings."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.toc: list[tuple[int, str, str]] = []
        self.figures = 0
        self._ids: dict[str, int] = {}

    def heading(self, text: str, level: int = 2) -> None:
        slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"
        count = self._ids.get(slug, 0)
        self._ids[slug] = count + 1
        anchor = slug if count == 0 else f"{slug}-{count + 1}"
        self.toc.append((level, anchor, text))
        self.parts.append(f'<h{level} id="{anchor}">{_esc(text)}</h{level}>')

    def para(self, text: str, cls: Optional[str] = None) -> None:
        attr = f' class="{cls}"' if cls else ""
        self.parts.append(f"<p{attr}>{_esc(text)}</p>")

    def raw(self, markup: str) -> None:
        self.parts.append(markup)

    def facts(self, items: Sequence[tuple[str, str]]) -> None:
        body = "".join(f"<dt>{_esc(k)}</dt><dd>{_esc(v)}</dd>" for k, v in items)
        self.parts.append(f'<dl class="facts">{body}</dl>')

    def table(self, header: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        self.parts.append(_table_html(header, rows))

    def pre(self, text: str) -> None:
        self.parts.append(f"<pre>{_esc(text)}</pre>")

    def figure(self, figure: Figure, caption: str) -> None:
        data = base64.b64encode(_png(figure)).decode("ascii")
        self.figures += 1
        self.parts.append(
            f'<figure><img src="data:image/png;base64,{data}" alt="{_esc(caption)}">'
            f"<figcaption>Figure {self.figures}. {_esc(caption)}</figcaption></figure>"
        )

    def render(self, title: str) -> str:
        toc = "".join(
            f'<li><a href="#{anchor}">{_esc(text)}</a></li>'
            for level, anchor, text in self.toc
            if level == 2
        )
        nav = f"<nav><ul>{toc}</ul></nav>" if len(self.toc) > 2 else ""
        body = "\n".join(self.parts)
        # The policy makes the browser refuse anything not in the file (and says so in the
        # console), so a page that renders here renders offline.
        return (
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
            "img-src data:; style-src 'unsafe-inline'\">\n"
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{_esc(title)}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n"
            f"<h1>{_esc(title)}</h1>\n{nav}\n{body}\n</body>\n</html>\n"
        )


def _esc(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _table_html(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    head = "".join(f"<th>{_esc(h)}</th>" for h in header)
    body = []
    for row in rows:
        cells = []
        for value in row:
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                cells.append(f'<td class="num">{_esc(_number(value))}</td>')
            else:
                cells.append(f"<td>{_esc(_text(value))}</td>")
        body.append(f"<tr>{''.join(cells)}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _number(value: float) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        if value.is_integer() and abs(value) < 1e15:
            return f"{int(value):,}"
        return f"{value:.4g}"
    return f"{value:,}"


def _text(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    item = getattr(value, "item", None)  # numpy scalars
    if callable(item):
        value = item()
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return _number(value)
    return str(value)


def _png(figure: Figure) -> bytes:
    """The figure as a PNG of at most 256 colours (a third of the bytes of a full-colour one;
    plots have few colours) without metadata, so equal figures give equal bytes."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from PIL import Image

    figure.set_dpi(DPI)
    canvas = FigureCanvasAgg(figure)
    canvas.draw()  # type: ignore[no-untyped-call]
    rgba = canvas.buffer_rgba()  # type: ignore[no-untyped-call]
    image = Image.frombuffer("RGBA", canvas.get_width_height(), rgba)
    palette = image.convert("RGB").quantize(
        colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE
    )
    buffer = io.BytesIO()
    palette.save(buffer, format="PNG")
    return buffer.getvalue()


def _grid_figure(count: int, width: float = 4.6, height: float = 3.4) -> tuple[Figure, list[Axes]]:
    """A figure of ``count`` panels, three per row."""
    from matplotlib.figure import Figure

    columns = min(3, count)
    rows = math.ceil(count / columns)
    figure = Figure(figsize=(width * columns, height * rows), layout="constrained")
    grid = figure.subplots(rows, columns, squeeze=False)
    axes = [ax for row in grid for ax in row]
    for ax in axes[count:]:
        ax.set_visible(False)
    return figure, axes[:count]


# --- config and values as text ----------------------------------------------------------------


def _nest(flat: Mapping[str, Any]) -> dict[str, Any]:
    """Dotted keys as nested tables (``device.blocks`` → ``{"device": {"blocks": ...}}``)."""
    out: dict[str, Any] = {}
    for key, value in flat.items():
        parts = str(key).split(".")
        node = out
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                child = node[part] = {"": child}
            node = child
        node[parts[-1]] = value
    return out


def _is_unset(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _toml_text(value: Any) -> str:
    item = getattr(value, "item", None)
    if callable(item) and not isinstance(value, (list, tuple, Mapping)):
        value = item()
    try:
        return toml_value(value)
    except (ValueError, TypeError):
        return json.dumps(value, default=str)


def _toml(config: Mapping[str, Any], prefix: str = "") -> list[str]:
    """A config as TOML-like lines (unset keys as comments), tables after their scalars."""
    lines: list[str] = []
    tables = []
    for key, value in config.items():
        if isinstance(value, Mapping):
            tables.append((key, value))
        elif _is_unset(value):
            lines.append(f"# {key} (unset)")
        else:
            lines.append(f"{key} = {_toml_text(value)}")
    for key, value in tables:
        if lines:
            lines.append("")
        lines.append(f"[{prefix}{key}]")
        lines.extend(_toml(value, f"{prefix}{key}."))
    return lines


def _values_text(values: Sequence[Any], limit: int = 40) -> str:
    """A key's values for a table cell: ``|`` between them (values may hold commas)."""
    shown = [_value_text(v) for v in values[:limit]]
    return " | ".join(shown + (["..."] if len(values) > limit else []))


def _value_text(value: Any) -> str:
    if isinstance(value, float) and math.isnan(value):
        return "(unset)"
    return _text(value) if not isinstance(value, str) else value


# --- column kinds -----------------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def _config_keys() -> tuple[str, ...]:
    """Every config key, dotted, in the canonical order (as the resolved config lists them)."""
    from ._api import resolve_config

    resolved = resolve_config(None)
    resolved.pop("derived", None)
    return tuple(flatten(resolved))


@functools.lru_cache(maxsize=1)
def _metric_names() -> frozenset[str]:
    """Metric column names (and the names of table-valued metrics, whose columns are
    ``name.field``), from a run of a tiny device: exact whatever metrics the build has."""
    from ._api import run

    result = run({"device.blocks": 64, "device.pages_per_block": 16})
    names = set(result.metrics)
    names.update(k for k in result.scalars() if k not in set(_config_keys()))
    return frozenset(names)


def _is_numeric(series: pd.Series) -> bool:
    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    return bool(is_numeric_dtype(series) and not is_bool_dtype(series))


def _distinct(series: pd.Series) -> int:
    return int(series.nunique(dropna=False))


def _column_kind(df: pd.DataFrame, column: str) -> str:
    """``config``, ``meta``, ``metric`` or ``label`` (a column an experiment added to name its
    rows, e.g. ``workload`` or ``locality``)."""
    if column in _config_keys():
        return "config"
    if column in _META or column.startswith("trace."):
        return "meta"
    head = column.split(".", 1)[0]
    if column in _metric_names() or ("." in column and head in _metric_names()):
        return "metric"
    series = df[column]
    if not _is_numeric(series):
        return "label"
    # An unknown number: a derived metric (throughput, ...) unless it looks like a label.
    values = series.dropna()
    integral = bool(((values % 1) == 0).all()) if len(values) else True
    return "label" if integral and _distinct(series) <= max(1, len(df) // 2) else "metric"


def _lead_columns(columns: Sequence[str]) -> list[str]:
    """The columns a sweep put before the resolved config: those before the first position
    from which the config columns follow the canonical order."""
    rank = {k: i for i, k in enumerate(_config_keys())}
    for start in range(len(columns) + 1):
        ranks = [rank[c] for c in columns[start:] if c in rank]
        if all(a < b for a, b in zip(ranks, ranks[1:])):
            return list(columns[:start])
    return list(columns)


def _determined(df: pd.DataFrame, keys: Sequence[str], column: str) -> bool:
    """Whether ``column`` takes one value per combination of ``keys``."""
    if not keys:
        return _distinct(df[column]) <= 1
    counts = df.groupby(list(keys), dropna=False, sort=False)[column].nunique(dropna=False)
    return bool((counts <= 1).all())


def _same_partition(df: pd.DataFrame, a: str, b: str) -> bool:
    pairs = len(df[[a, b]].astype(str).drop_duplicates())
    return _distinct(df[a]) == _distinct(df[b]) == pairs


@dataclass
class _Keys:
    """What a table sweeps: ``keys`` (outer first), a numeric column equivalent to a
    categorical key (one value each way) to put on the x axis instead, the seed column, the
    metric columns and the other config columns that vary (determined by the keys)."""

    keys: list[str]
    numeric_twin: dict[str, str]
    seed: Optional[str]
    metrics: list[str]
    derived: list[str]


def _table_keys(df: pd.DataFrame) -> _Keys:
    columns = [str(c) for c in df.columns]
    kinds = {c: _column_kind(df, c) for c in columns}
    seed = next((c for c in SEED_KEYS if c in df.columns and _distinct(df[c]) > 1), None)
    varying = [c for c in columns if c not in SEED_KEYS and _distinct(df[c]) > 1]
    lead = [c for c in _lead_columns(columns) if kinds[c] in ("config", "label")]
    candidates = (
        [c for c in lead if c in varying]
        + [c for c in varying if kinds[c] == "label" and c not in lead]
        + [c for c in varying if kinds[c] == "config" and c not in lead]
    )
    keys: list[str] = []
    dropped: list[str] = []
    for column in candidates:
        if keys and _determined(df, keys, column):
            dropped.append(column)
        else:
            keys.append(column)
    twins: dict[str, str] = {}
    for key in keys:
        if _is_numeric(df[key]):
            continue
        twin = next(
            (c for c in dropped
             if _is_numeric(df[c]) and df[c].notna().all() and _same_partition(df, key, c)),
            None,
        )
        if twin is not None:
            twins[key] = twin
    metrics = [c for c in columns if kinds[c] == "metric" and _is_numeric(df[c])]
    derived = [c for c in dropped if kinds[c] == "config"]
    return _Keys(keys, twins, seed, metrics, derived)


# --- axes of the metric figures ---------------------------------------------------------------


@dataclass
class _Plan:
    """How the metric figures show a table: ``x`` (numeric: lines, else bars), ``hue``, panel
    keys; ``frame`` is the table with a combined hue column when keys were folded into it."""

    frame: pd.DataFrame
    x: str
    hue: Optional[str]
    panels: list[str]
    numeric: bool
    logx: bool
    keys: list[str]


def _plan(df: pd.DataFrame, keys: Sequence[str], twins: Mapping[str, str]) -> Optional[_Plan]:
    keys = [k for k in keys if k in df.columns and _distinct(df[k]) > 1]
    if not keys:
        return None
    # A numeric key, else a numeric twin of a categorical key (``locality`` "90/10" ->
    # ``workload.hot_access_fraction``), else bars over a category.
    choices: list[tuple[str, str]] = [(k, k) for k in keys if _is_numeric(df[k])]
    if not choices:
        choices = [(k, twins[k]) for k in keys if k in twins]
    if choices:
        key, x = max(choices, key=lambda c: (_distinct(df[c[1]]), keys.index(c[0])))
    else:
        key = x = max(keys, key=lambda k: (_distinct(df[str(k)]), keys.index(k)))
    numeric = _is_numeric(df[x])
    rest = [k for k in keys if k != key]
    hue = rest[-1] if rest else None
    panels = rest[:-1]
    frame = df
    # Too many panels: the innermost panel key joins the hue ("cleaning / regions").
    while panels and _combinations(frame, panels) > MAX_PANELS:
        inner = panels.pop()
        assert hue is not None
        name = f"{plot.label(inner)} / {plot.label(hue)}"
        frame = frame.assign(
            **{name: [f"{a} / {b}" for a, b in zip(frame[inner], frame[hue])]}
        )
        hue = name
    logx = False
    if numeric:
        values = frame[x].dropna()
        low, high = float(values.min()), float(values.max())
        logx = low > 0 and high / low >= 50
    return _Plan(frame, x, hue, panels, numeric, logx, keys)


def _combinations(df: pd.DataFrame, keys: Sequence[str]) -> int:
    return len(df[list(keys)].astype(str).drop_duplicates()) if keys else 1


def _panels(df: pd.DataFrame, keys: Sequence[str]) -> list[tuple[str, pd.DataFrame]]:
    """(title, rows) per combination of ``keys``, in order of appearance."""
    if not keys:
        return [("", df)]
    out = []
    for values, part in df.groupby(list(keys), sort=False, dropna=False):
        values = values if isinstance(values, tuple) else (values,)
        title = ", ".join(f"{plot.label(k)}={_value_text(v)}" for k, v in zip(keys, values))
        out.append((title, part))
    return out


def _metric_figures(page: _Page, plan: _Plan, metrics: Sequence[str]) -> None:
    df = plan.frame
    constant = []
    for metric in metrics:
        values = df[metric].dropna()
        if values.empty:
            continue
        if values.nunique() <= 1:
            constant.append(f"{plot.label(metric)} = {_text(values.iloc[0])}")
            continue
        panels = _panels(df, plan.panels)
        if len(panels) == 1:
            from matplotlib.figure import Figure

            figure = Figure(figsize=(6.0, 4.0), layout="constrained")
            axes = [figure.add_subplot()]
        else:
            figure, axes = _grid_figure(len(panels))
            for ax in axes[1:]:
                ax.sharey(axes[0])
        for ax, (title, part) in zip(axes, panels):
            if plan.numeric:
                plot.lines(part, plan.x, metric, plan.hue, ax=ax, logx=plan.logx,
                           title=title or None)
            else:
                plot.bars(part, plan.x, metric, plan.hue, ax=ax, title=title or None)
        if len(panels) > 1:
            figure.suptitle(f"{plot.label(metric)} vs {plot.label(plan.x)}")
        caption = f"{plot.label(metric)} vs {plot.label(plan.x)}"
        if plan.hue:
            caption += f", one {'line' if plan.numeric else 'bar'} per {plot.label(plan.hue)}"
        if plan.panels:
            caption += f", one panel per {', '.join(plot.label(k) for k in plan.panels)}"
        page.figure(figure, caption[0].upper() + caption[1:] + ".")
    if constant:
        page.para("The same in every row: " + "; ".join(constant) + ".", "note")


def _means_table(
    page: _Page, df: pd.DataFrame, keys: Sequence[str], metrics: Sequence[str], what: str
) -> None:
    keys = [k for k in keys if k in df.columns]
    metrics = [m for m in metrics if m in df.columns]
    if not metrics:
        return
    if keys:
        means = df.groupby(keys, sort=False, dropna=False)[metrics].mean().reset_index()
        rows_per = df.groupby(keys, sort=False, dropna=False).size().tolist()
    else:
        means = df[metrics].mean().to_frame().T
        rows_per = [len(df)]
    header = [plot.label(k) for k in keys] + [plot.label(m) for m in metrics]
    rows = [
        [_value_text(v) for v in record[: len(keys)]] + list(record[len(keys) :])
        for record in means.itertuples(index=False, name=None)
    ]
    shown = rows[:MAX_TABLE_ROWS]
    many = max(rows_per) > 1
    summary = f"{what}: {len(rows)} rows" + (" (means over seeds)" if many else "")
    if len(rows) > len(shown):
        summary += f", the first {len(shown)} shown"
    page.raw(f"<details><summary>{_esc(summary)}</summary>{_table_html(header, shown)}</details>")


# --- series figures of results (runs and sweep stores) ---------------------------------------


def _pooled(frames: Sequence[pd.DataFrame], key: str, count: str) -> pd.DataFrame:
    """Histograms summed bucket by bucket (the buckets of every run are the same)."""
    import pandas as pd

    frames = [f for f in frames if len(f)]
    if not frames:
        return pd.DataFrame({key: pd.Series(dtype="int64"), count: pd.Series(dtype="int64")})
    total = pd.concat(frames).groupby(key, sort=True)[count].sum().reset_index()
    return total


def _series_groups(
    rows: pd.DataFrame, plan: Optional[_Plan], seeds: bool, limit: int
) -> tuple[list[tuple[str, list[int]]], str, str]:
    """Points (``point`` column) grouped for the series figures: by every swept key when that
    gives at most ``limit`` groups, else without x, else by hue alone, else all together.
    Returns the groups (label, points), what a group is (``per cleaning``) and what the runs
    of a group differ in (``utilization and seeds``; empty when each group is one run)."""
    if plan is None:
        points = [int(p) for p in rows["point"]]
        return [("", points)], "", "all runs" if len(points) > 1 else ""
    frame = plan.frame
    hue = [plan.hue] if plan.hue else []
    keys: list[str] = []
    for level in ([*plan.panels, *hue, plan.x], [*plan.panels, *hue], hue, []):
        keys = list(dict.fromkeys(level))
        if _combinations(frame, keys) <= limit:
            break
    groups: list[tuple[str, list[int]]] = []
    parts = frame.groupby(keys, sort=False, dropna=False) if keys else [((), frame)]
    for values, part in parts:
        values = values if isinstance(values, tuple) else (values,)
        name = ", ".join(f"{plot.label(k)}={_value_text(v)}" for k, v in zip(keys, values))
        groups.append((name, [int(p) for p in part["point"]]))
    # A folded hue column (`_plan`) stands for the keys it joins.
    grouped = {k for k in plan.keys if any(k == g or (g == plan.hue and plot.label(k) in
                                                      g.split(" / ")) for g in keys)}
    over = [plot.label(k) for k in plan.keys if k not in grouped]
    if seeds:
        over.append("seeds")
    per = ("per " + ", ".join(plot.label(k) for k in keys)) if keys else ""
    pooled = " and ".join(over) if any(len(p) > 1 for _, p in groups) else ""
    return groups, per, pooled


def _series_figures(
    page: _Page,
    results: Mapping[int, Result],
    groups: Sequence[tuple[str, Sequence[int]]],
    per: str,
    over: str,
) -> None:
    """Latency CDFs, wear histograms and wear over time of grouped results; ``per`` and
    ``over`` say what a group is and what its runs differ in (see `_series_groups`)."""
    from matplotlib.figure import Figure

    def caption(subject: str, counts: str, note: str = "") -> str:
        text = " ".join(p for p in (subject, per) if p)
        if over:
            text += f"; {counts} summed over {over}"
        return text + (f" ({note})." if note else ".")

    page.heading("Latency")
    drew = False
    for kind in ("write", "read"):
        histograms = {
            name: _pooled(
                [results[p].latency_histogram(kind) for p in points if p in results],
                "latency_ns",
                "requests",
            )
            for name, points in groups
        }
        histograms = {k: v for k, v in histograms.items() if int(v["requests"].sum()) > 0}
        if not histograms:
            continue
        figure = Figure(figsize=(7.0, 4.4), layout="constrained")
        plot.latency_cdf(histograms, kind=kind, ax=figure.add_subplot())
        page.figure(figure, caption(f"{kind.capitalize()} latency CDF", "requests", "log x"))
        drew = True
    if not drew:
        page.para("No latency histograms in these results (no requests, or results from "
                  "before the latency histogram metrics).", "note")

    page.heading("Wear")
    frames = [
        (name, _pooled([results[p].wear_histogram for p in points if p in results],
                       "erase_count", "blocks"))
        for name, points in groups
    ]
    frames = [(n, f) for n, f in frames if int(f["blocks"].sum()) > 0]
    if frames:
        if len(frames) > 1:
            figure, axes = _grid_figure(len(frames))
        else:
            figure = Figure(figsize=(6.0, 4.0), layout="constrained")
            axes = [figure.add_subplot()]
        for ax, (name, frame) in zip(axes, frames):
            blocks = int(frame["blocks"].sum())
            mean = float((frame["erase_count"] * frame["blocks"]).sum()) / blocks
            title = f"{name}\nmean {mean:.1f} erases" if name else None
            plot.wear_histogram(frame, ax=ax, title=title)
        page.figure(figure, caption("Blocks per erase count at the end of the run", "blocks"))
    sampled: dict[str, Result] = {}
    for name, points in groups:
        first = next((results[p] for p in points if p in results and results[p].wear_samples),
                     None)
        if first is not None:
            sampled[name or "run"] = first
    if sampled:
        figure = Figure(figsize=(7.0, 4.4), layout="constrained")
        ax = figure.add_subplot()
        if len(sampled) == 1:
            plot.wear_stability(list(sampled.values()), ax=ax)
        else:
            plot.wear_stability(sampled, ax=ax)
        which = "the first run of each group; " if over else ""
        subject = " ".join(p for p in ("Erase-count standard deviation against host data "
                                       "written", per) if p)
        page.figure(figure, f"{subject} ({which}sampled every run.sample_every_bytes).")
    else:
        page.para("No wear samples (run with run.sample_every_bytes set to see wear over "
                  "time).", "note")


def _run_section(page: _Page, result: Result, source: str) -> None:
    page.facts([
        ("Source", source),
        ("Kind", "one run (nandlab.Result)"),
        ("Report by", _native.BUILD_VERSION),
        ("Result version", result.version),
        ("Seed", str(result.seed)),
    ])
    page.heading("Metrics")
    scalars = result.scalars()
    config_columns = set(flatten(result.config))
    metrics = {k: v for k, v in scalars.items()
               if k not in config_columns and k not in ("seed", "version")
               and not k.startswith("trace.")}
    key = [(plot.label(m), m, metrics[m]) for m in KEY_METRICS if m in metrics]
    page.table(["metric", "column", "value"], key)
    rest = [(name, value) for name, value in metrics.items()
            if name not in KEY_METRICS and not isinstance(value, str)]
    page.raw(f"<details><summary>All {len(metrics)} scalar metrics</summary>"
             f"{_table_html(['column', 'value'], [*((m, v) for _, m, v in key), *rest])}"
             "</details>")
    _series_figures(page, {0: result}, [("", [0])], "", "")
    page.heading("Config")
    page.para("The resolved config: nandlab.run(result.config) repeats the run.", "note")
    page.pre("\n".join(_toml(result.config)))
    if result.trace:
        page.heading("Trace")
        page.pre(json.dumps(result.trace, indent=1, sort_keys=True))


def _sweep_section(page: _Page, root: pathlib.Path, source: str) -> None:
    import pandas as pd

    from . import _store

    manifest = _store.read_manifest(root)
    store = _store.SweepStore(root, manifest)
    stored = store.stored()
    records = _store.load_records(stored)
    # The rows `load_sweep` gives, from the records already read: the points with a record,
    # in grid order.
    rows = _store.frame_of(manifest.keys, manifest.points, records, True, store)
    indexes = [i for i in range(len(manifest.points)) if i in records]
    rows = rows.assign(point=indexes)
    results = {
        index: Result.from_json(text)
        for index, (status, text, _) in records.items()
        if status == "ok" and text is not None
    }
    ok = rows[rows["status"] == "ok"]
    failed = rows[rows["status"] != "ok"]
    total = len(manifest.points)
    versions = sorted(set(str(v) for v in ok["version"])) if "version" in ok else []
    page.facts([
        ("Source", source),
        ("Kind", "sweep store (manifest.json)"),
        ("Report by", _native.BUILD_VERSION),
        ("Sweep version", manifest.version),
        ("Result versions", ", ".join(versions) or "(no results)"),
        ("Points", f"{total} in the sweep: {len(ok)} ok, {len(failed)} failed, "
                   f"{total - len(rows)} not run yet"),
    ])
    seeds = manifest.seeds
    keys = [k for k in manifest.keys if k not in SEED_KEYS]
    page.heading("Grid")
    if manifest.grid is not None:
        grid_rows = [(k, len(v), _values_text(v)) for k, v in manifest.grid.items()]
    else:
        grid_rows = []
        for k in manifest.keys:
            values = list(dict.fromkeys(json.dumps(p.get(k)) for p in manifest.points))
            grid_rows.append((k, len(values), _values_text(values)))
    if seeds is not None:
        grid_rows.append(("seeds", len(seeds), _values_text(seeds)))
    page.table(["key", "count", "values"], grid_rows)
    if len(failed):
        page.heading("Failed points")
        error_types = dict(zip(stored[_store.POINT].astype(int),
                               stored.get(_store.ERROR_TYPE, pd.Series(dtype=object))))
        table: list[list[Any]] = [
            [int(point),
             *(_value_text(manifest.points[int(point)].get(k)) for k in manifest.keys),
             _text(error_types.get(int(point))), _text(error)]
            for point, error in zip(failed["point"], failed["error"])
        ]
        header = ["point", *manifest.keys, "error type", "error"]
        if len(table) <= 10:
            page.table(header, table)
        else:
            # Many failures usually share a few errors: one line per error, then every point.
            by_error: dict[tuple[str, str], list[int]] = {}
            for row in table:
                by_error.setdefault((row[-2], row[-1]), []).append(row[0])
            page.table(
                ["error type", "error", "points", "first points"],
                [[t, e, len(p), ", ".join(map(str, p[:8])) + (", ..." if len(p) > 8 else "")]
                 for (t, e), p in by_error.items()],
            )
            page.raw(f"<details><summary>All {len(table)} failed points</summary>"
                     f"{_table_html(header, table)}</details>")
    plan = _plan(ok, keys, {}) if len(ok) else None
    metrics = [m for m in KEY_METRICS if m in ok.columns]
    page.heading("Metrics")
    if not len(ok):
        page.para("No point ran successfully: no figures.", "note")
    elif plan is None:
        page.para("No swept key takes more than one value among the ok points: no figures "
                  "against the keys.", "note")
    else:
        seeds_note = " Lines are means over seeds with ±1 standard deviation bands." if (
            seeds is not None and len(seeds) > 1) else ""
        page.para(f"Each key metric against {plot.label(plan.x)}.{seeds_note}", "note")
        _metric_figures(page, plan, metrics)
    if len(ok):
        _means_table(page, ok, keys, metrics, "Means per point")
        groups, per, over = _series_groups(ok, plan, seeds is not None and len(seeds) > 1,
                                           MAX_SERIES)
        _series_figures(page, results, groups, per, over)
    page.heading("Config")
    base = manifest.base
    if "config_text" in base:
        page.para(f"Base config: the file {base.get('config_path')}", "note")
        page.pre(str(base["config_text"]))
    else:
        page.para("Base config (as given to the sweep; every point overrides the swept keys):",
                  "note")
        page.pre("\n".join(_toml(_nest(base.get("config") or {}))) or "(every default)")
    if results:
        first = min(results)
        point = ", ".join(f"{k}={_value_text(v)}" for k, v in manifest.points[first].items())
        summary = f"Resolved config of point {first} ({point})"
        page.raw(f"<details open><summary>{_esc(summary)}</summary><pre>"
                 f"{_esc(chr(10).join(_toml(results[first].config)))}</pre></details>")


def _read_table(path: pathlib.Path) -> pd.DataFrame:
    import pandas as pd

    # A regular file of a bounded size: a table named after /dev/zero or a FIFO would be
    # read forever.
    try:
        info = path.stat()
    except OSError as e:
        raise ReportError(f"{path}: cannot read the table ({e.strerror or e})") from None
    if not stat.S_ISREG(info.st_mode):
        raise ReportError(f"{path}: {file_kind(info.st_mode)}: a table must be a regular file")
    if info.st_size > MAX_TABLE_BYTES:
        raise ReportError(
            f"{path}: {info.st_size:,} bytes, more than the {MAX_TABLE_BYTES:,} a table may hold"
        )
    try:
        if path.suffix == ".parquet":
            return pd.read_parquet(path)
        return pd.read_csv(path)
    except (OSError, ValueError, ImportError, TypeError, KeyError) as e:
        raise ReportError(f"{path}: cannot read the table ({e})") from None


def _table_section(page: _Page, path: pathlib.Path, df: pd.DataFrame, heading: bool) -> None:
    if heading:
        page.heading(path.name)
        level = 3
    else:
        level = 2
    if df.empty:
        page.para("An empty table.", "note")
        return
    found = _table_keys(df)
    page.facts([("Rows", str(len(df))), ("Columns", str(len(df.columns)))]
               + ([("Seeds", f"{found.seed}: {_distinct(df[found.seed])} values")]
                  if found.seed else []))
    page.heading(f"Swept keys of {path.name}" if heading else "Swept keys", level)
    if found.keys:
        page.table(
            ["key", "count", "values"],
            [(k, _distinct(df[k]), _values_text(list(dict.fromkeys(df[k].tolist()))))
             for k in found.keys],
        )
    else:
        page.para("No column that looks like a swept key takes more than one value.", "note")
    if found.derived:
        page.para("Also varying, determined by those: " + ", ".join(found.derived) + ".", "note")
    metrics = [m for m in KEY_METRICS if m in found.metrics]
    metrics += [m for m in found.metrics if m not in metrics and m not in _metric_names()]
    plan = _plan(df, found.keys, found.numeric_twin)
    page.heading(f"Metrics of {path.name}" if heading else "Metrics", level)
    if plan is None:
        page.table(["row", *(plot.label(m) for m in metrics)],
                   [[f"row {i}", *r] for i, r in
                    enumerate(df[metrics].head(MAX_TABLE_ROWS).itertuples(index=False))])
    else:
        _metric_figures(page, plan, metrics)
        _means_table(page, df, found.keys, metrics, "Means per key combination")
    config = {c: df[c].iloc[0] for c in df.columns
              if c in _config_keys() and _distinct(df[c]) == 1}
    if config:
        page.heading(f"Config of {path.name}" if heading else "Config", level)
        page.raw(f"<details><summary>{len(config)} config columns with one value in every "
                 f"row</summary><pre>{_esc(chr(10).join(_toml(_nest(config))))}</pre></details>")


def _tables_page(page: _Page, paths: Sequence[pathlib.Path], source: str, kind: str) -> None:
    frames = [(p, _read_table(p)) for p in paths]
    versions: list[str] = []
    for _, df in frames:
        if "version" in df:
            versions.extend(str(v) for v in df["version"].dropna())
    page.facts([
        ("Source", source),
        ("Kind", kind),
        ("Report by", _native.BUILD_VERSION),
        ("Data versions", ", ".join(sorted(set(versions))) or "(none recorded)"),
    ])
    if len(frames) > 1:
        page.table(["table", "rows", "columns"],
                   [(p.name, len(df), len(df.columns)) for p, df in frames])
    for path, df in frames:
        _table_section(page, path, df, heading=len(frames) > 1)


def _result_from_file(path: pathlib.Path) -> Result:
    text = read_bounded(path, MAX_RESULT_BYTES, "a result JSON", ReportError)
    return _result_from_json(text, str(path))


def _result_from_stdin(text: Optional[str]) -> Result:
    """``nandlab report -``: the result JSON on standard input, or ``text`` when given (the
    report of ``nandlab run --report`` inside Python, `nandlab._cli`)."""
    if text is None:
        text = sys.stdin.read(MAX_RESULT_BYTES + 1)
    if len(text) > MAX_RESULT_BYTES:
        raise ReportError(
            f"{STDIN}: larger than {MAX_RESULT_BYTES >> 20} MiB, the most a result JSON may hold"
        )
    return _result_from_json(text, STDIN)


def _result_from_json(text: Union[str, bytes], where: str) -> Result:
    try:
        data = json.loads(text)
        if not isinstance(data, Mapping) or "metrics" not in data or "config" not in data:
            raise ReportError(
                f"{where}: not a nandlab result (the JSON `nandlab run --json` writes, with "
                "metrics and config)"
            )
        return Result.from_dict(data)
    except (ValueError, KeyError, TypeError) as e:
        if isinstance(e, ReportError):
            raise
        raise ReportError(f"{where}: not a nandlab result JSON ({e})") from None


def _run_page(result: Result, source: str, title: Optional[str]) -> str:
    page = _Page()
    _run_section(page, result, source)
    return page.render(title or "nandlab run report")


def _build(source: Union[Result, PathLike], title: Optional[str]) -> str:
    from . import _store

    if isinstance(source, Result):
        return _run_page(source, "a nandlab.Result object", title)
    page = _Page()
    if not isinstance(source, (str, os.PathLike)):
        raise argument_error(
            "source", f"must be a Result or a path, not {type(source).__name__}", wrong_type=True
        )
    text = check_path(source, "source")
    path = pathlib.Path(text)
    if not path.exists():
        raise ReportSourceNotFound(f"{text}: no such file or directory")
    if path.is_file() and path.name == _store.MANIFEST:
        path = path.parent
    if path.is_dir():
        if (path / _store.MANIFEST).exists():
            _sweep_section(page, path, text)
            return page.render(title or f"nandlab sweep report: {path.resolve().name}")
        tables = sorted(p for p in path.iterdir()
                        if p.is_file() and p.suffix in TABLE_SUFFIXES)
        if not tables:
            raise ReportError(
                f"{text}: a directory with neither {_store.MANIFEST} (a sweep store) nor "
                ".csv/.parquet tables"
            )
        _tables_page(page, tables, text, f"directory of {len(tables)} tables")
        return page.render(title or f"nandlab tables report: {path.resolve().name}")
    if path.suffix == ".json":
        result = _result_from_file(path)
        _run_section(page, result, text)
        return page.render(title or f"nandlab run report: {path.name}")
    if path.suffix in TABLE_SUFFIXES:
        _tables_page(page, [path], text, f"table ({path.suffix[1:]})")
        return page.render(title or f"nandlab table report: {path.name}")
    raise ReportError(
        f"{text}: unknown kind of source: give a result JSON (nandlab run --json), a sweep "
        "store directory (with manifest.json), a .csv or .parquet table, or a directory of "
        "tables"
    )


def report(
    source: Union[Result, PathLike], out: PathLike, *, title: Optional[str] = None
) -> pathlib.Path:
    """Writes one self-contained HTML report of ``source`` to ``out`` and returns its path.

    Args:
        source: a `Result`; a result JSON file (``nandlab run --json``); a sweep store
            directory (``nandlab.sweep(..., out=DIR)``, with ``manifest.json``); a CSV or
            Parquet table of results (``nandlab.write_csv``); or a directory of tables (one
            section each).
        out: the HTML file to write (its directory is created when missing).
        title: the page title; by default names the kind of source and its file.

    The page embeds its figures (PNG data URIs) and stylesheet and has no scripts: it needs
    no network. Figures: each key metric against the swept keys (mean and spread over seeds),
    latency CDFs, wear histograms and wear over time (with ``run.sample_every_bytes``); plus
    the grid, failed points, versions and config. The same input writes the same bytes.

    Raises:
        ReportError: (a NandlabError and a ValueError) ``source`` is of no kind above, or
            unreadable (a missing one: also a FileNotFoundError), or ``out`` cannot be
            written.
        SweepStoreError: a broken sweep store.
    """
    return _write(out, lambda: _build(source, title))


def _write(out: PathLike, build: Callable[[], str]) -> pathlib.Path:
    """Writes the page ``build`` makes to ``out`` (its directory created when missing)."""
    import matplotlib

    path = pathlib.Path(check_path(out, "out"))
    with matplotlib.rc_context({"svg.hashsalt": "nandlab-report"}):
        page = build()
    try:
        if path.parent and not path.parent.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(page.encode("utf-8"))
    except OSError as e:
        raise ReportError(f"{out}: cannot write the report: {e.strerror or e}") from None
    return path


def main(argv: Sequence[str], stdin: Optional[str] = None) -> int:
    """``nandlab report PATH --out FILE.html [--title T]``; returns the exit status (2 for a
    bad source or arguments, with a one-line message on stderr). PATH ``-`` reads a result JSON
    from standard input, or from ``stdin`` when given (`nandlab._cli` does that for
    ``nandlab run --report``, in the process that ran it)."""
    parser = argparse.ArgumentParser(
        prog="nandlab report",
        description="Write one self-contained HTML report (figures, grid, failures, config) "
        "of a run's JSON, a sweep store directory, a CSV/Parquet table or a directory of "
        "tables.",
    )
    parser.add_argument("path", help="result JSON (-: on standard input), sweep store "
                        "directory, table, or directory of tables")
    parser.add_argument("--out", required=True, help="the HTML file to write")
    parser.add_argument("--title", help="the page title")
    try:
        args = parser.parse_args(list(argv))
    except SystemExit as e:  # --help, or a usage error (already printed)
        return e.code if isinstance(e.code, int) else 2
    try:
        if args.path == "-":
            result = _result_from_stdin(stdin)
            path = _write(args.out, lambda: _run_page(result, STDIN, args.title))
        else:
            path = report(args.path, args.out, title=args.title)
    except (ReportError, OSError, _native.NandlabError) as e:
        message = str(e) if not isinstance(e, OSError) or not e.filename else (
            f"{e.filename}: {e.strerror}")
        print(f"nandlab report: error: {message}", file=sys.stderr)
        return 2
    size = path.stat().st_size
    print(f"wrote {path} ({size / 1024:.0f} KiB)")
    return 0

