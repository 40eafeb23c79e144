"""`nandlab.sweep`: grid order, columns, seeds, worker processes, error reporting, Parquet.
Method: 2×2 grids on a small device, compared against single runs."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import nandlab

GRID = {"ftl.cleaning": ["greedy", "cat"], "device.utilization": [0.7, 0.8]}
EXPECTED_POINTS = [("greedy", 0.7), ("greedy", 0.8), ("cat", 0.7), ("cat", 0.8)]


def drop_wall(df: pd.DataFrame) -> pd.DataFrame:
    return df.drop(columns=list(nandlab.WALL_CLOCK_METRICS))


def test_two_jobs_grid_order_and_columns(small: dict[str, Any]) -> None:
    df = nandlab.sweep(small, GRID, jobs=2)
    assert len(df) == 4
    assert list(df.columns[:2]) == ["ftl.cleaning", "device.utilization"]
    assert list(zip(df["ftl.cleaning"], df["device.utilization"])) == EXPECTED_POINTS
    frame_columns = nandlab.run(small).to_frame().columns
    assert set(df.columns) == set(frame_columns)
    assert len(df.columns) == len(frame_columns), "grid keys are not repeated"
    for column in ("erases", "write_amplification", "seed", "version", "ftl.regions"):
        assert column in df.columns
    # Each row is the run of its point.
    for _, row in df.iterrows():
        single = nandlab.run(
            small,
            set={
                "ftl.cleaning": row["ftl.cleaning"],
                "device.utilization": row["device.utilization"],
            },
        )
        assert row["erases"] == single.metrics["erases"]
        assert row["gc_copied_pages"] == single.metrics["gc_copied_pages"]


def test_in_process_equals_workers(small: dict[str, Any]) -> None:
    serial = nandlab.sweep(small, GRID, jobs=1)
    parallel = nandlab.sweep(small, GRID, jobs=2)
    pd.testing.assert_frame_equal(drop_wall(serial), drop_wall(parallel))


def test_seeds_vary_fastest(small: dict[str, Any]) -> None:
    df = nandlab.sweep(
        {**small, "workload.kind": "hotcold"}, {"ftl.cleaning": ["greedy", "cat"]}, seeds=[3, 4]
    )
    assert list(df.columns[:2]) == ["ftl.cleaning", "run.seed"]
    assert list(zip(df["ftl.cleaning"], df["run.seed"])) == [
        ("greedy", 3),
        ("greedy", 4),
        ("cat", 3),
        ("cat", 4),
    ]
    assert list(df["seed"]) == [3, 4, 3, 4]
    assert df.loc[0, "erases"] != df.loc[1, "erases"]
    with pytest.raises(ValueError, match=r"run\.seed"):
        nandlab.sweep(small, {"run.seed": [1]}, seeds=[1])


def test_toml_base(tmp_path: Path) -> None:
    path = tmp_path / "base.toml"
    path.write_text("[device]\nblocks = 64\npages_per_block = 16\n")
    df = nandlab.sweep(path, {"ftl.cleaning": ["greedy", "fifo"]}, jobs=2)
    assert list(df["ftl.cleaning"]) == ["greedy", "fifo"]
    assert (df["device.blocks"] == 64).all()


def test_error_names_the_point(small: dict[str, Any]) -> None:
    for jobs in (1, 2):
        with pytest.raises(nandlab.ConfigError, match=r"lru") as info:
            nandlab.sweep(small, {"ftl.cleaning": ["greedy", "lru"]}, jobs=jobs)
        message = str(info.value)
        assert "sweep point #1" in message
        assert "ftl.cleaning='lru'" in message
        assert info.value.key == "ftl.cleaning"


def test_bad_arguments(small: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="jobs"):
        nandlab.sweep(small, GRID, jobs=0)
    with pytest.raises(TypeError, match="sequence"):
        nandlab.sweep(small, {"ftl.cleaning": "greedy"})
    empty = nandlab.sweep(small, {"ftl.cleaning": []})
    assert len(empty) == 0
    assert list(empty.columns) == ["ftl.cleaning"]


@pytest.mark.skipif(importlib.util.find_spec("pyarrow") is None, reason="needs pyarrow")
def test_parquet_round_trip(tmp_path: Path, small: dict[str, Any]) -> None:
    df = nandlab.sweep(small, GRID)
    path = tmp_path / "sweep.parquet"
    nandlab.write_parquet(df, path)
    back = pd.read_parquet(path)
    pd.testing.assert_frame_equal(back, df, check_dtype=False)
    assert list(back.columns) == list(df.columns)


def test_sweep_points_runs_each_point(small: dict[str, Any]) -> None:
    points = [
        {"ftl.cleaning": "greedy"},
        {"ftl.cleaning": "cat", "device.utilization": 0.7},
        {"buffer.kind": "fab", "buffer.size_bytes": 65536},
    ]
    df = nandlab.sweep_points(small, points, jobs=2)
    assert len(df) == 3
    assert list(df["ftl.cleaning"][:2]) == ["greedy", "cat"]
    assert df["buffer.kind"].tolist() == ["none", "none", "fab"]
    for i, point in enumerate(points):
        single = nandlab.run(small, set=point)
        assert df["erases"][i] == single.metrics["erases"]
    assert df["buffer.write_hits"][2] == nandlab.run(small, set=points[2]).metrics["buffer"][
        "write_hits"
    ]
    with pytest.raises(TypeError, match="mapping"):
        nandlab.sweep_points(small, ["ftl.cleaning=cat"])  # type: ignore[list-item]
