"""`python -m nandlab` (and the `nandlab` console script, the same `nandlab._cli.main`) is the
Rust CLI: the same version line, the same run results as `nandlab.run`, a clear refusal of
`serve` (not in this build), usage and status 2 for an unknown subcommand, Ctrl-C ending a long
run at once; `sweep` and `report` go to their Python modules with the rest of the arguments,
and `run --report` writes its report in the same process (no other Python is started).
Method: run ``python -m nandlab`` in a subprocess; the dispatch and the restored signal handler
in-process, with stand-in modules."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import Any, Optional

import pytest

import nandlab
from nandlab import _cli, _native

SMALL_ARGS = ["--set", "device.blocks=64", "--set", "device.pages_per_block=16"]


def cli(*args: str, cwd: Optional[Path] = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "nandlab", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
    )


def test_version_is_the_build_version() -> None:
    done = cli("--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout == nandlab.build_version + "\n"


def test_run_gives_the_metrics_of_nandlab_run(small: dict[str, Any]) -> None:
    done = cli("run", *SMALL_ARGS, "--json", "-")
    assert done.returncode == 0, done.stderr
    from_cli = json.loads(done.stdout)
    from_api = nandlab.run(small)
    for wall_clock in nandlab.WALL_CLOCK_METRICS:
        from_cli["metrics"].pop(wall_clock)
        from_api.metrics.pop(wall_clock)
    assert from_cli["metrics"] == from_api.metrics
    assert from_cli["config"] == from_api.config
    assert (from_cli["seed"], from_cli["version"]) == (from_api.seed, from_api.version)


def test_serve_is_refused_clearly(tmp_path: Path) -> None:
    image = tmp_path / "drive.img"
    done = cli("serve", "--image", str(image))
    assert done.returncode == 2
    assert done.stdout == ""
    # One line saying why and how to get a nandlab that serves.
    assert done.stderr.count("\n") == 1, done.stderr
    for needle in ("no `serve`", "without OpenSSL", "make build", "cargo install"):
        assert needle in done.stderr, done.stderr
    assert not image.exists()


def test_an_unknown_subcommand_prints_usage_and_exits_2() -> None:
    done = cli("frobnicate")
    assert done.returncode == 2
    assert "error: unrecognized subcommand 'frobnicate'" in done.stderr
    assert "Usage: nandlab" in done.stderr
    # The subcommands are listed by --help, Python's among them.
    done = cli("--help")
    assert done.returncode == 0, done.stderr
    for name in ("run", "serve", "sweep", "report"):
        assert f"\n  {name} " in done.stdout, done.stdout


def test_a_flag_of_another_subcommand_is_a_usage_error() -> None:
    done = cli("presets", "--quiet")
    assert done.returncode == 2
    assert "error: unexpected argument '--quiet'" in done.stderr
    assert "Usage: nandlab presets" in done.stderr


def test_ctrl_c_ends_a_long_run_at_once() -> None:
    # About a minute uninterrupted; SIGINT must end it as it ends the Rust binary.
    command = [sys.executable, "-m", "nandlab", "run", "--set", "workload.passes=300", "--quiet"]
    with subprocess.Popen(command, stdout=subprocess.DEVNULL) as child:
        try:
            time.sleep(2.0)  # past the imports, inside the native run
            assert child.poll() is None, "the run ended before the signal"
            child.send_signal(signal.SIGINT)
            status = child.wait(timeout=10)
        finally:
            child.kill()
    assert status == -signal.SIGINT


def test_sweep_and_report_go_to_their_python_modules(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, list[str]]] = []
    for name, status in (("_sweep_cli", 5), ("_report", 6)):
        stand_in = types.ModuleType(f"nandlab.{name}")

        def main(argv: list[str], name: str = name, status: int = status) -> int:
            calls.append((name, list(argv)))
            return status

        stand_in.main = main  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, f"nandlab.{name}", stand_in)
    assert _cli.main(["sweep", "--grid", "a=1,2", "--out", "d"]) == 5
    assert _cli.main(["report", "d", "--out", "r.html", "--title", "two words"]) == 6
    assert calls == [
        ("_sweep_cli", ["--grid", "a=1,2", "--out", "d"]),
        ("_report", ["d", "--out", "r.html", "--title", "two words"]),
    ]


def test_native_commands_restore_sigint(capfd: pytest.CaptureFixture[str]) -> None:
    before = signal.getsignal(signal.SIGINT)
    assert _cli.main(["--version"]) == 0
    assert signal.getsignal(signal.SIGINT) is before
    assert capfd.readouterr().out == nandlab.build_version + "\n"


def test_the_native_cli_leaves_python_commands_to_python(
    capfd: pytest.CaptureFixture[str],
) -> None:
    # Only `nandlab._cli.main` reaches `_native.cli`, and it runs these itself.
    for name in ("sweep", "report"):
        assert _native.cli([name, "--help"]) == (2, None)
        err = capfd.readouterr().err
        assert f"`python -m nandlab {name}`" in err, err


def test_console_main_exits_with_the_status(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", ["nandlab", "no-such-command"])
    with pytest.raises(SystemExit) as exited:
        _cli.console_main()
    assert exited.value.code == 2


@pytest.mark.skipif(
    importlib.util.find_spec("nandlab._sweep_cli") is None, reason="needs nandlab._sweep_cli"
)
def test_sweep_runs_through_python_m_nandlab(tmp_path: Path) -> None:
    out = tmp_path / "store"
    grid = ["--grid", "ftl.cleaning=greedy,cat", "--jobs", "1", "--quiet"]
    done = cli("sweep", *SMALL_ARGS, *grid, "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert out.is_dir()


@pytest.mark.skipif(
    importlib.util.find_spec("nandlab._report") is None, reason="needs nandlab._report"
)
def test_run_report_writes_the_html_report(tmp_path: Path) -> None:
    html = tmp_path / "run.html"
    # No other Python is started: an interpreter named for the Rust binary is never used.
    env = {**os.environ, "NANDLAB_PYTHON": str(tmp_path / "no-such-python")}
    done = subprocess.run(
        [sys.executable, "-m", "nandlab", "run", *SMALL_ARGS, "--quiet", "--report", str(html)],
        capture_output=True, text=True, timeout=300, env=env,
    )
    assert done.returncode == 0, done.stderr
    assert "write amplification" in done.stdout
    assert done.stdout.endswith(f"wrote {html} ({html.stat().st_size / 1024:.0f} KiB)\n")
    text = html.read_text()
    assert "<html" in text.lower()
    assert "standard input" in text
    # With --json -, standard output is the one JSON document; the report's line goes to stderr.
    done = cli("run", *SMALL_ARGS, "--quiet", "--json", "-", "--report", str(html))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["seed"] == 1
    assert f"wrote {html}" in done.stderr


def test_a_failed_run_report_is_status_2(tmp_path: Path) -> None:
    # The report's directory cannot be made: the run ran, the report says why, status 2.
    blocker = tmp_path / "file"
    blocker.write_text("")
    html = blocker / "run.html"
    done = cli("run", *SMALL_ARGS, "--quiet", "--report", str(html))
    assert done.returncode == 2
    assert "write amplification" in done.stdout
    assert "nandlab report: error: " in done.stderr
    assert f"nandlab: error: the report {html} was not written" in done.stderr
