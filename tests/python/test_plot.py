"""`nandlab.plot`: each helper draws from sweep tables or results and writes a PNG. Method:
small sweeps, check the files are PNGs and the figures carry labels from column names."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import nandlab
from nandlab import plot

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def table() -> Any:
    return nandlab.sweep(
        {
            "device.blocks": 64,
            "device.pages_per_block": 16,
            "workload.kind": "hotcold",
            "ftl.placement": "dac",
        },
        {"ftl.cleaning": ["greedy", "cat"], "ftl.regions": [1, 2]},
        seeds=[1, 2],
    )


def is_png(path: Path) -> bool:
    return path.read_bytes()[:8] == PNG_MAGIC


def test_lines(tmp_path: Path, table: Any) -> None:
    path = tmp_path / "lines.png"
    figure = plot.lines(table, "ftl.regions", "erases", hue="ftl.cleaning", path=path)
    assert is_png(path)
    ax = figure.axes[0]
    assert ax.get_xlabel() == "regions"
    assert ax.get_ylabel() == "erases"
    assert len(ax.get_lines()) == 2
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["greedy", "cat"]


def test_bars(tmp_path: Path, table: Any) -> None:
    path = tmp_path / "bars.png"
    figure = plot.bars(table, "ftl.regions", "write_latency_ns.p99", hue="ftl.cleaning", path=path)
    assert is_png(path)
    assert figure.axes[0].get_ylabel() == "write latency p99 (ns)"
    assert len(figure.axes[0].patches) == 4


def test_wear_histogram(tmp_path: Path) -> None:
    result = nandlab.run({"device.blocks": 64, "device.pages_per_block": 16})
    for i, data in enumerate([result, result.wear_histogram, result.metrics]):
        path = tmp_path / f"wear{i}.png"
        plot.wear_histogram(data, path=path)
        assert is_png(path)


def test_into_existing_axes(tmp_path: Path, table: Any) -> None:
    from matplotlib.figure import Figure

    figure = Figure()
    left, right = figure.subplots(1, 2)
    assert plot.lines(table, "ftl.regions", "erases", ax=left) is figure
    assert plot.bars(table, "ftl.cleaning", "erases", ax=right) is figure
    path = tmp_path / "both.png"
    figure.savefig(path)
    assert is_png(path)


def test_labels() -> None:
    assert plot.label("device.utilization") == "utilization"
    assert plot.label("write_latency_ns.p99") == "write latency p99 (ns)"
    assert plot.label("flash_busy_ns") == "flash busy (ns)"
    assert plot.label("gc_copied_pages") == "GC copied (pages)"
    assert plot.label("erases") == "erases"
    assert plot.label("ftl.time_threshold_s") == "time threshold (s)"


def test_missing_column(table: Any) -> None:
    with pytest.raises(KeyError, match="nope"):
        plot.lines(table, "nope", "erases")
