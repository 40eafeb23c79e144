"""Results name the exact code: `nandlab.build_version` is ``nandlab X.Y.Z (COMMIT)`` (the
string ``nandlab --version`` prints), every `Result`, DataFrame row and Parquet row records it,
and tables written with `write_csv` (as the experiments do) carry it in a ``version`` column.
Method: small runs and tables written to a temp dir, compared with the module's constant."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import nandlab
from nandlab import _native

# The documented shape (README, `nandlab --version`).
VERSION_PATTERN = re.compile(r"^nandlab \d+\.\d+\.\d+ \(([0-9a-f]{7,40}(-dirty)?|no git.*)\)$")


def test_build_version_names_the_crate_version_and_commit() -> None:
    assert VERSION_PATTERN.match(nandlab.build_version), nandlab.build_version
    assert nandlab.build_version.startswith(f"nandlab {nandlab.__version__} (")
    assert nandlab.build_version == _native.BUILD_VERSION == _native.version()
    # `__version__` stays the bare package version pip knows.
    assert re.fullmatch(r"\d+\.\d+\.\d+", nandlab.__version__)


def test_results_rows_and_sweeps_record_the_build_version(small: dict[str, Any]) -> None:
    result = nandlab.run(small)
    assert result.version == nandlab.build_version
    assert result.to_dict()["version"] == nandlab.build_version
    assert result.to_frame().iloc[0]["version"] == nandlab.build_version
    df = nandlab.sweep(small, {"ftl.cleaning": ["greedy", "cat"]})
    assert (df["version"] == nandlab.build_version).all()


def test_write_csv_adds_the_version_to_derived_tables(tmp_path: Path) -> None:
    derived = pd.DataFrame({"ftl.cleaning": ["greedy", "cat"], "erases": [10.0, 8.0]})
    path = tmp_path / "mean.csv"
    nandlab.write_csv(derived, path)
    back = pd.read_csv(path)
    assert list(back.columns) == ["ftl.cleaning", "erases", "version"]
    assert (back["version"] == nandlab.build_version).all()
    assert "version" not in derived.columns, "the caller's frame is left as it was"


def test_write_csv_keeps_the_version_rows_already_carry(tmp_path: Path) -> None:
    rows = pd.DataFrame({"erases": [1, 2], "version": ["nandlab 0.0.1 (0123456)"] * 2})
    path = tmp_path / "rows.csv"
    nandlab.write_csv(rows, path)
    back = pd.read_csv(path)
    assert list(back.columns) == ["erases", "version"]
    assert list(back["version"]) == ["nandlab 0.0.1 (0123456)"] * 2


@pytest.mark.skipif(importlib.util.find_spec("pyarrow") is None, reason="needs pyarrow")
def test_parquet_rows_record_the_build_version(tmp_path: Path, small: dict[str, Any]) -> None:
    path = tmp_path / "sweep.parquet"
    nandlab.write_parquet(nandlab.sweep(small, {"ftl.cleaning": ["greedy", "cat"]}), path)
    assert (pd.read_parquet(path)["version"] == nandlab.build_version).all()
    derived = tmp_path / "derived.parquet"
    nandlab.write_parquet(pd.DataFrame({"erases": [1.0]}), derived)
    assert list(pd.read_parquet(derived)["version"]) == [nandlab.build_version]


def test_experiments_write_their_tables_with_write_csv() -> None:
    """A plain ``to_csv`` would drop the version column from a new run's tables."""
    scripts = sorted((Path(__file__).parents[2] / "experiments").glob("*/run.py"))
    assert scripts, "no experiment scripts found"
    for script in scripts:
        text = script.read_text()
        assert ".to_csv(" not in text, f"{script}: use nandlab.write_csv"
        if ".csv" in text:
            assert "nandlab.write_csv(" in text, script
