"""Hostile and careless input to the Python side: every user error is a `nandlab.NandlabError`
naming the argument, key or file (and `nandlab sweep` prints one ``nandlab sweep: error: ...``
line and exits 2), never a raw traceback, a bare KeyError/ValueError/OSError/MemoryError from
inside, an endless read or an aborted interpreter.

Method: one bad input per case, checked for the exception type and what its message names.
Inputs that used to read forever or exhaust memory (``/dev/zero``, a FIFO, a 2**32-page block,
a trillion seeds) run in a child process with a 1 GiB address-space limit and a timeout, so that
a regression fails the test instead of the machine."""

from __future__ import annotations

import json
import os
import pathlib
import resource
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import nandlab
from nandlab import (
    ArgumentError,
    ArgumentTypeError,
    ColumnError,
    ConfigError,
    NandlabError,
    ReportError,
    SweepStoreError,
    _sweep_cli,
    plot,
    recycling,
)

SMALL: dict[str, Any] = {"device.blocks": 64, "device.pages_per_block": 16}
GRID = {"ftl.cleaning": ["greedy", "cat"]}
SWEEP_ARGS = ["--set", "device.blocks=64", "--set", "device.pages_per_block=16",
              "--grid", "ftl.cleaning=greedy,cat", "--jobs", "1", "--quiet"]
U64_MAX = 2**64 - 1
I64_MAX = str(2**63 - 1)


def run_limited(code: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``code`` in a child interpreter limited to 1 GiB of address space and ``timeout``
    seconds: what used to read ``/dev/zero`` whole fails there, not here."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        preexec_fn=limit,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A complete two-point sweep store (manifest.json and results.parquet)."""
    root = tmp_path / "store"
    nandlab.sweep(SMALL, GRID, out=root)
    assert sorted(p.name for p in root.iterdir()) == ["manifest.json", "results.parquet"]
    return root


@pytest.fixture
def cli_store(tmp_path: Path) -> Path:
    """The same sweep stored by ``nandlab sweep`` (its base config is the --set overrides)."""
    root = tmp_path / "cli-store"
    assert sweep_cli(root) == 0
    assert sorted(p.name for p in root.iterdir()) == ["manifest.json", "results.parquet"]
    return root


def sweep_cli(out: Path | str, *extra: str) -> int:
    return _sweep_cli.main([*SWEEP_ARGS, *extra, "--out", str(out)])


def one_error_line(err: str) -> str:
    """The ``nandlab sweep: error:`` line of stderr: exactly one, and no traceback."""
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("nandlab sweep: error: ")]
    assert len(lines) == 1, err
    return lines[0]


# ---------------------------------------------------------------- nandlab sweep (CLI)


def test_cli_corrupt_results_parquet(cli_store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Was: pyarrow.lib.ArrowInvalid (Parquet magic bytes not found) from deep inside."""
    (cli_store / "results.parquet").write_bytes(b"not parquet")
    assert sweep_cli(cli_store) == 2
    line = one_error_line(capsys.readouterr().err)
    assert str(cli_store / "results.parquet") in line
    assert "corrupt" in line
    assert "Remove it" in line
    assert "--out" in line
    # Removing it, as the message says, recovers: its points run again.
    (cli_store / "results.parquet").unlink()
    assert sweep_cli(cli_store) == 0
    assert len(nandlab.load_sweep(cli_store)) == 2


@pytest.mark.parametrize(
    ("name", "content", "reason"),
    [
        ("part-1-2-3.parquet", b"PAR1 truncated", "not a readable Parquet file"),
        ("part-1-2-4.parquet", None, "a character device"),  # a link to /dev/zero
    ],
)
def test_cli_corrupt_part(
    cli_store: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    content: bytes | None,
    reason: str,
) -> None:
    """Was: ArrowInvalid (a damaged part) from deep inside."""
    if content is None:
        os.symlink("/dev/zero", cli_store / name)
    else:
        (cli_store / name).write_bytes(content)
    assert sweep_cli(cli_store) == 2
    line = one_error_line(capsys.readouterr().err)
    assert str(cli_store / name) in line
    assert reason in line
    assert "Remove it" in line


def test_cli_corrupt_manifest(cli_store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    manifest = cli_store / "manifest.json"
    data = json.loads(manifest.read_text())
    data["points"] = [1, 2]  # valid JSON, wrong shape: was a bare TypeError inside
    manifest.write_text(json.dumps(data))
    assert sweep_cli(cli_store) == 2
    line = one_error_line(capsys.readouterr().err)
    assert str(manifest) in line
    assert "corrupt sweep manifest" in line
    assert "remove the directory" in line


def test_cli_seed_range_is_checked_before_it_is_built(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Was: MemoryError from list(range(1, 100000000001))."""
    assert sweep_cli(tmp_path / "s", "--seeds", "1-100000000000") == 2
    line = one_error_line(capsys.readouterr().err)
    assert "--seeds 1-100000000000" in line
    assert "1,000,000" in line
    assert sweep_cli(tmp_path / "s", "--seeds", "18446744073709551615") == 2
    assert I64_MAX in one_error_line(capsys.readouterr().err)
    assert sweep_cli(tmp_path / "s", "--seeds", "-1") == 2
    assert "out of range" in one_error_line(capsys.readouterr().err)
    assert not (tmp_path / "s").exists()


def test_cli_out_under_proc(capsys: pytest.CaptureFixture[str]) -> None:
    """Was: FileNotFoundError from pathlib's mkdir."""
    assert sweep_cli("/proc/nandlab-out") == 2
    line = one_error_line(capsys.readouterr().err)
    assert "/proc/nandlab-out" in line
    assert "cannot create the sweep store directory" in line


def test_cli_jobs_is_bounded(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _sweep_cli.main([*SWEEP_ARGS, "--jobs", "100000", "--out", str(tmp_path / "s")]) == 2
    assert "--jobs 100000" in one_error_line(capsys.readouterr().err)


def test_python_m_nandlab_sweep_prints_one_line(cli_store: Path) -> None:
    """The whole command, as users run it: no traceback, one error line, status 2."""
    (cli_store / "results.parquet").write_bytes(b"garbage")
    done = subprocess.run(
        [sys.executable, "-m", "nandlab", "sweep", *SWEEP_ARGS, "--out", str(cli_store)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert "results.parquet" in one_error_line(done.stderr)


# ---------------------------------------------------------------- nandlab.sweep (API)


@pytest.mark.parametrize(
    ("grid", "seeds", "error", "match"),
    [
        ({5: [1]}, None, ConfigError, "swept keys must be dotted config keys"),  # was KeyError
        ({"ftl.cleaning=x": [1]}, None, ConfigError, "cannot hold '='"),
        (None, None, ArgumentTypeError, "grid: expected a mapping"),  # was TypeError
        ({"ftl.cleaning": "greedy"}, None, ArgumentTypeError, "sequence of values"),
        (GRID, "1-3", ArgumentTypeError, "seeds: expected a sequence"),  # was ValueError
        (GRID, 5, ArgumentTypeError, "seeds: expected a sequence"),  # was TypeError
        (GRID, [1.5], ArgumentTypeError, r"seeds\[0\]: expected an integer"),  # was truncated
        (GRID, [float("nan")], ArgumentTypeError, r"seeds\[0\]"),  # was ValueError
        (GRID, [None], ArgumentTypeError, r"seeds\[0\]"),  # was TypeError
        (GRID, [-1], ArgumentError, r"seeds\[0\]: -1 is out of range"),
        (GRID, [U64_MAX], ArgumentError, I64_MAX),  # the range is named
    ],
)
def test_sweep_bad_keys_and_seeds(grid: Any, seeds: Any, error: type, match: str) -> None:
    with pytest.raises(error, match=match) as info:
        nandlab.sweep(SMALL, grid, seeds=seeds)
    assert isinstance(info.value, NandlabError)


def test_sweep_point_count_is_checked_before_it_is_built() -> None:
    """Was: MemoryError (or the OOM killer) building a list of a trillion seeds, and a million
    points built and run for a grid that crossed two long axes."""
    done = run_limited(
        """
        import nandlab
        grid = {"ftl.cleaning": ["cat"]}
        for grid, seeds in ((grid, range(10**12)), (grid, iter(range(10**12))),
                            ({"a.b": list(range(1000)), "c.d": list(range(1001))}, None)):
            try:
                nandlab.sweep({"device.blocks": 64}, grid, seeds=seeds)
            except nandlab.ArgumentError as e:
                print("refused:", e)
        """
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "refused: seeds: 1,000,000,000,000 values, more than the 1,000,000" in done.stdout
    assert "refused: seeds: more than the 1,000,000" in done.stdout
    assert "refused: grid: 1,001,000 points (1,000 × 1,001)" in done.stdout


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"out": "/proc/nandlab-out"}, SweepStoreError, "/proc/nandlab-out"),  # FileNotFound
        ({"out": 5}, ArgumentTypeError, "out: expected a path"),  # was TypeError in pathlib
        ({"out": ""}, ArgumentError, "out: the path is empty"),
        ({"jobs": "2"}, ArgumentTypeError, "jobs"),
        ({"jobs": 10**6}, ArgumentError, "jobs: 1000000 is out of range"),
        ({"set": 5}, ArgumentTypeError, "set: overrides must be"),  # 'int' is not iterable
    ],
)
def test_sweep_bad_arguments(kwargs: dict[str, Any], error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        nandlab.sweep(SMALL, GRID, **kwargs)


def test_sweep_points_bad_points() -> None:
    with pytest.raises(ArgumentTypeError, match="points: expected a sequence"):
        nandlab.sweep_points(SMALL, 5)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="swept keys"):
        nandlab.sweep_points(SMALL, [{3: 1}])  # type: ignore[dict-item]


def test_sweep_base_config_not_utf8(tmp_path: Path) -> None:
    """Was: UnicodeDecodeError reading the base config for the store's manifest."""
    base = tmp_path / "base.toml"
    base.write_bytes(b"\xff\xfe[device]\n")
    with pytest.raises(ConfigError, match="not UTF-8") as info:
        nandlab.sweep(base, GRID, out=tmp_path / "s")
    assert str(base) in str(info.value)
    assert info.value.key is None


def test_stored_damaged_result_names_the_file(store: Path) -> None:
    """Was: JSONDecodeError from a row's result_json (sweep, report; load_sweep too)."""
    results = store / "results.parquet"
    frame = pd.read_parquet(results)
    frame["result_json"] = ["{", frame["result_json"][1]]
    frame.to_parquet(results, index=False)
    for call in (
        lambda: nandlab.load_sweep(store),
        lambda: nandlab.sweep(SMALL, GRID, out=store),
        lambda: nandlab.report(store, store.parent / "r.html"),
    ):
        with pytest.raises(SweepStoreError, match=r"point #0's result is damaged") as info:
            call()
        assert str(results) in str(info.value)


@pytest.mark.parametrize(
    ("path", "match"),
    [
        ("file", r"not a nandlab sweep store \(is not a directory\)"),  # NotADirectoryError
        ("/dev/zero", r"not a nandlab sweep store \(is not a directory\)"),
        ("", "path: the path is empty"),
        (5, "path: expected a path"),
    ],
)
def test_load_sweep_not_a_store(tmp_path: Path, path: Any, match: str) -> None:
    if path == "file":
        path = tmp_path / "file"
        path.write_text("x")
    with pytest.raises(NandlabError, match=match):
        nandlab.load_sweep(path)


def test_manifest_and_parts_are_read_bounded(store: Path, tmp_path: Path) -> None:
    """A manifest that is /dev/zero or a FIFO: refused at once, not read forever (or until
    memory runs out)."""
    (store / "manifest.json").rename(tmp_path / "manifest.json")
    os.symlink("/dev/zero", store / "manifest.json")
    fifo_store = tmp_path / "fifo"
    fifo_store.mkdir()
    os.mkfifo(fifo_store / "manifest.json")
    done = run_limited(
        f"""
        import nandlab
        for root in ({str(store)!r}, {str(fifo_store)!r}):
            try:
                nandlab.load_sweep(root)
            except nandlab.SweepStoreError as e:
                print("refused:", e)
        """,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "a character device: a sweep manifest must be a regular file" in done.stdout
    assert "a FIFO: a sweep manifest must be a regular file" in done.stdout


def test_manifest_size_limit(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from nandlab import _store

    monkeypatch.setattr(_store, "MAX_MANIFEST_BYTES", 64)
    with pytest.raises(SweepStoreError, match="larger than 64 bytes"):
        nandlab.load_sweep(store)
    with pytest.raises(SweepStoreError, match="manifest would take"):
        nandlab.sweep(SMALL, GRID, out=store.parent / "new")


# ---------------------------------------------------------------- configs and u64 keys


def test_config_file_is_read_bounded(tmp_path: Path) -> None:
    """A config path that is /dev/zero or a FIFO used to be read whole by the native side
    (until memory ran out); a file past 16 MiB is refused too, naming the limit."""
    big = tmp_path / "big.toml"
    with open(big, "wb") as file:
        file.truncate((16 << 20) + 1)
    os.mkfifo(tmp_path / "fifo.toml")
    done = run_limited(
        f"""
        import nandlab
        for path in ("/dev/zero", {str(tmp_path / "fifo.toml")!r}, {str(big)!r}):
            try:
                nandlab.run(path)
            except nandlab.ConfigError as e:
                print("refused:", e)
        """
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "refused: /dev/zero: a character device: a config file must be a regular" in done.stdout
    assert "a FIFO: a config file must be a regular file" in done.stdout
    assert "larger than 16 MiB" in done.stdout


@pytest.mark.parametrize(
    "call",
    [
        lambda: nandlab.run({**SMALL, "run": {"seed": U64_MAX}}),
        lambda: nandlab.run(SMALL, set={"run.seed": U64_MAX}),
        lambda: nandlab.run(SMALL, set=[f"run.seed={U64_MAX}"]),  # was "expected u64"
        lambda: nandlab.resolve_config(SMALL, set={"run.seed": 2**63}),
    ],
)
def test_u64_keys_name_their_range(call: Callable[[], Any]) -> None:
    """Config integers are TOML's (signed 64-bit): run.seed takes 0 ..= 2**63 - 1, and a
    larger value names that range (it used to say only "out of the 64-bit range", which
    2**64 - 1 is not, or "expected u64")."""
    with pytest.raises(ConfigError, match=rf"run\.seed.*0 \.\.= {I64_MAX}") as info:
        call()
    assert info.value.key == "run.seed"
    assert nandlab.resolve_config(SMALL, set={"run.seed": 2**63 - 1})["run"]["seed"] == 2**63 - 1


def test_run_argument_types() -> None:
    with pytest.raises(ArgumentTypeError, match="set: overrides must be"):
        nandlab.run(SMALL, set=5)  # type: ignore[arg-type]  # was "'int' is not iterable"
    with pytest.raises(ArgumentError, match="config: the path is empty"):
        nandlab.run("")
    with pytest.raises(ArgumentError, match="NUL byte"):
        nandlab.run("a\0b")


# ---------------------------------------------------------------- the other public functions


def test_native_integer_arguments_name_the_argument(msr_trace: Path) -> None:
    """Was: OverflowError "can't convert negative int to unsigned", naming nothing."""
    with pytest.raises(ArgumentError, match="device: -1 is out of range"):
        nandlab.analyze(msr_trace, device=-1)
    with pytest.raises(ArgumentError, match="sample_points"):
        nandlab.analyze(msr_trace, sample_points=2**70)
    with pytest.raises(ArgumentError, match="max_writes: -1 is out of range"):
        nandlab.pbr("sim:", msr_trace, max_writes=-1)
    with pytest.raises(ArgumentError, match="repeats: -1 is out of range"):
        nandlab.probe("sim:", repeats=-1)
    with pytest.raises(ArgumentError, match="request_bytes: expected"):  # was an unpack error
        nandlab.suite("gc", msr_trace.parent / "s.csv", request_bytes=[(4096,)])


def test_recycling_arguments() -> None:
    """Was: OverflowError naming nothing (negative or huge pages_per_block), ZeroDivisionError
    (both costs 0), and for pages_per_block = 2**32 - 1 an aborted interpreter (memory
    allocation of 32 GiB failed)."""
    kwargs: dict[str, Any] = {"alpha": 0.1, "erase_cost": 1.0, "copy_cost": 1.0}
    with pytest.raises(ArgumentError, match="pages_per_block: -1 is out of range"):
        recycling.optimal_migrations(pages_per_block=-1, **kwargs)
    with pytest.raises(ArgumentError, match="both 0"):
        recycling.optimal_migrations(alpha=0.1, pages_per_block=128, erase_cost=0, copy_cost=0)
    done = run_limited(
        """
        from nandlab import ArgumentError, recycling
        try:
            recycling.optimal_migrations(alpha=0.1, pages_per_block=2**32 - 1,
                                         erase_cost=1.0, copy_cost=1.0, n_max=3)
        except ArgumentError as e:
            print("refused:", e)
        """
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "refused: pages_per_block: 4294967295 is out of range" in done.stdout


def test_result_from_bad_data() -> None:
    """Was: KeyError('metrics') and JSONDecodeError."""
    with pytest.raises(ArgumentError, match="not a nandlab result: no 'metrics' field"):
        nandlab.Result.from_dict({})
    with pytest.raises(ArgumentError, match="not a nandlab result's JSON"):
        nandlab.Result.from_json("{")
    with pytest.raises(ArgumentError, match="not a wear sample"):
        nandlab.WearSample.from_dict({})


def test_unwritable_outputs_name_the_file(tmp_path: Path) -> None:
    """Was: IsADirectoryError / FileNotFoundError from pandas, pathlib or PIL."""
    result = nandlab.run(SMALL)
    frame = result.to_frame()
    with pytest.raises(ReportError, match="cannot write the report"):
        nandlab.report(result, tmp_path)
    with pytest.raises(ArgumentError, match=r"path: .*cannot write it"):
        nandlab.write_csv(frame, tmp_path)
    with pytest.raises(ArgumentError, match=r"path: /proc/x\.png: cannot write it"):
        plot.lines(frame, "device.blocks", "erases", path="/proc/x.png")
    with pytest.raises(ArgumentTypeError, match="frame: expected a pandas DataFrame"):
        nandlab.with_version(5)  # type: ignore[arg-type]  # was AttributeError


def test_plot_arguments() -> None:
    frame = nandlab.run(SMALL).to_frame()
    with pytest.raises(ArgumentError, match="y: column 'version' holds"):  # TypeError in pandas
        plot.lines(frame, "device.blocks", "version")
    with pytest.raises(ArgumentTypeError, match="column: expected a column name"):
        plot.label(5)  # type: ignore[arg-type]  # was AttributeError
    with pytest.raises(ColumnError, match="no column 'nope'") as info:
        plot.bars(frame, "nope", "erases")
    assert isinstance(info.value, KeyError)
    assert str(info.value).startswith("no column")
    with pytest.raises(ArgumentTypeError, match="data: expected a Result"):
        plot.latency_cdf(5)  # type: ignore[arg-type]


def test_errors_keep_their_builtin_bases() -> None:
    """Callers that catch ValueError/TypeError/KeyError/FileNotFoundError still do."""
    assert issubclass(ArgumentError, ValueError)
    assert issubclass(ArgumentError, NandlabError)
    assert issubclass(ArgumentTypeError, TypeError)
    assert issubclass(ColumnError, KeyError)
    assert issubclass(ReportError, ValueError)
    assert issubclass(ReportError, NandlabError)
    with pytest.raises(FileNotFoundError):
        nandlab.report(pathlib.Path("/nonexistent/x.json"), "/tmp/never.html")
