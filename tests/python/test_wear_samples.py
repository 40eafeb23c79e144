"""Wear sampled over a run (``run.sample_every_bytes``) and repeated workloads
(``workload.repeat``) from Python: typed `WearSample` records, kept out of `to_frame`, plotted
by `plot.wear_stability`. Method: tiny runs with exact counts (819 logical pages of 4 KiB)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import nandlab
from nandlab import plot

MIB = 1 << 20


def test_wear_samples_are_typed_and_cumulative(small: dict[str, Any]) -> None:
    result = nandlab.run({**small, "run.sample_every_bytes": MIB})
    samples = result.wear_samples
    # Prefill + 1 warm-up + 2 measured passes of 819 pages = 12.8 MiB: 12 samples + the end.
    assert len(samples) == 13
    assert all(isinstance(s, nandlab.WearSample) for s in samples)
    first, last = samples[0], samples[-1]
    assert first.host_write_bytes == MIB
    assert last.host_write_bytes == 4 * 819 * 4096
    assert isinstance(last.erases, int)
    assert isinstance(last.wear_stddev, float)
    assert [s.host_write_bytes for s in samples] == sorted({s.host_write_bytes for s in samples})
    # Cumulative over the whole run, so at least the measurement window's erases.
    assert last.erases >= result.metrics["erases"] > 0
    assert last.wear_max >= last.wear_mean >= last.wear_min
    assert "wear_samples" not in result.to_frame().columns
    assert nandlab.run(small).wear_samples == []


def test_repeat_multiplies_the_measured_part(small: dict[str, Any]) -> None:
    assert nandlab.resolve_config(small)["workload"]["repeat"] == 1
    once = nandlab.run(small).metrics["host_write_pages"]
    thrice = nandlab.run({**small, "workload.repeat": 3})
    assert thrice.metrics["host_write_pages"] == 3 * once == 3 * 2 * 819
    assert thrice.config["workload"]["repeat"] == 3
    with pytest.raises(nandlab.ConfigError, match=r"workload\.repeat") as error:
        nandlab.run({**small, "workload.repeat": 0})
    assert error.value.key == "workload.repeat"
    with pytest.raises(nandlab.ConfigError) as error:
        nandlab.run({**small, "run.sample_every_bytes": 0})
    assert error.value.key == "run.sample_every_bytes"


def test_wear_stability_plot(tmp_path: Path, small: dict[str, Any]) -> None:
    results = [
        nandlab.run({**small, "run.sample_every_bytes": MIB, "ftl.cleaning": cleaning})
        for cleaning in ("greedy", "fifo")
    ]
    path = tmp_path / "stability.png"
    figure = plot.wear_stability(results, path=path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    ax = figure.axes[0]
    assert len(ax.get_lines()) == 2
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "cleaning=greedy",
        "cleaning=fifo",
    ]
    xs = ax.get_lines()[0].get_xdata()
    assert list(xs) == [s.host_write_bytes for s in results[0].wear_samples]
    named = plot.wear_stability({"a": results[0]}, y="wear_max")
    assert named.axes[0].get_legend().get_texts()[0].get_text() == "a"
    with pytest.raises(ValueError, match=r"run\.sample_every_bytes"):
        plot.wear_stability(nandlab.run(small))
