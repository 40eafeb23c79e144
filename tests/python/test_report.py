"""`nandlab.report` and ``nandlab report``: one self-contained HTML page per run, sweep store
or table. Method: reports of a sampled run, a small sweep store (with failed points) and a CSV
table on the small device; the figures are counted by their captions, the config and versions
looked up in the text, the page written twice and compared byte for byte; bad sources must give
one-line errors; and when chromium is installed, scripts/check_report.py renders a report in
the headless browser."""

from __future__ import annotations

import html
import json
import pathlib
import re
import subprocess
import sys
import warnings
from typing import Any

import pytest

import nandlab
from nandlab import _report, plot

ROOT = pathlib.Path(__file__).resolve().parents[2]
CHECK = ROOT / "scripts" / "check_report.py"
CHROMIUM = pathlib.Path("/usr/bin/chromium")
# The small device of conftest.SMALL, wear sampled every 128 KiB written.
BASE: dict[str, Any] = {
    "device.blocks": 64,
    "device.pages_per_block": 16,
    "workload.kind": "hotcold",
    "run.sample_every_bytes": 1 << 17,
}
GRID = {"ftl.cleaning": ["greedy", "cat", "nosuch"], "device.utilization": [0.6, 0.75, 0.9]}
METRIC_LABELS = ["write amplification", "erases", "cleaning cost", "GC copied (pages)",
                 "wear stddev"]


def captions(text: str) -> list[str]:
    """The figure captions without their ``Figure N.`` numbers."""
    found = re.findall(r"<figcaption>Figure (\d+)\. (.*?)</figcaption>", text)
    assert [int(n) for n, _ in found] == list(range(1, len(found) + 1))
    return [html.unescape(c) for _, c in found]


def images(text: str) -> int:
    return len(re.findall(r'<img src="data:image/png;base64,', text))


def check_self_contained(text: str) -> None:
    assert "http://" not in text
    assert "https://" not in text
    assert "<script" not in text
    assert "<link" not in text
    assert images(text) == len(re.findall(r"<img\b", text)) == len(captions(text))


@pytest.fixture(scope="module")
def run_json(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    result = nandlab.run(BASE, set={"workload.read_fraction": 0.2})
    path = tmp_path_factory.mktemp("run") / "result.json"
    path.write_text(result.to_json())
    return path


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    path = tmp_path_factory.mktemp("sweep") / "store"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the failed points' SweepWarning
        nandlab.sweep(BASE, GRID, seeds=[1, 2], out=path)
    return path


@pytest.fixture(scope="module")
def table(store: pathlib.Path, tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    rows = nandlab.load_sweep(store)
    rows = rows[rows["status"] == "ok"].drop(columns=["status", "error"])
    path = tmp_path_factory.mktemp("table") / "sweep.csv"
    nandlab.write_csv(rows, path)
    return path


@pytest.fixture(scope="module")
def sweep_html(store: pathlib.Path, tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    return nandlab.report(store, tmp_path_factory.mktemp("out") / "sweep.html")


def test_run_report(run_json: pathlib.Path, tmp_path: pathlib.Path) -> None:
    out = nandlab.report(run_json, tmp_path / "run.html", title="One <run>")
    text = out.read_text()
    check_self_contained(text)
    assert "<title>One &lt;run&gt;</title>" in text
    found = captions(text)
    assert [c.split(" (")[0].rstrip(".") for c in found] == [
        "Write latency CDF",
        "Read latency CDF",
        "Blocks per erase count at the end of the run",
        "Erase-count standard deviation against host data written",
    ]
    result = nandlab.Result.from_json(run_json.read_text())
    assert html.escape(result.version) in text
    assert html.escape(nandlab.build_version) in text
    assert "sample_every_bytes = 131072" in text
    assert "[device]" in text
    assert "write_amplification" in text
    # A Result object gives the same page but for the source line.
    same = nandlab.report(result, tmp_path / "object.html", title="One <run>").read_text()
    assert same.replace("a nandlab.Result object", str(run_json)) == text


def test_run_report_from_standard_input(
    run_json: pathlib.Path, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `nandlab report -`: the JSON `nandlab run --json -` writes, on standard input (or given
    # as text, as `nandlab run --report` inside Python does): the page of the file but for the
    # source line.
    from_file = nandlab.report(run_json, tmp_path / "file.html", title="T").read_text()
    out = tmp_path / "stdin.html"
    done = subprocess.run(
        [sys.executable, "-m", "nandlab", "report", "-", "--out", str(out), "--title", "T"],
        input=run_json.read_text(), capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"wrote {out} (")
    assert out.read_text().replace(_report.STDIN, str(run_json)) == from_file
    again = tmp_path / "text.html"
    assert _report.main(["-", "--out", str(again), "--title", "T"], stdin=run_json.read_text()) == 0
    assert again.read_text() == out.read_text()
    # Not a result: one line naming standard input.
    capsys.readouterr()
    assert _report.main(["-", "--out", str(again)], stdin="[1, 2]") == 2
    err = capsys.readouterr().err
    assert err == "nandlab report: error: standard input: not a nandlab result (the JSON " \
        "`nandlab run --json` writes, with metrics and config)\n", err


def test_sweep_report(store: pathlib.Path, sweep_html: pathlib.Path) -> None:
    text = sweep_html.read_text()
    check_self_contained(text)
    plain = html.unescape(text)
    found = captions(text)
    for metric in METRIC_LABELS:
        assert f"{metric[0].upper()}{metric[1:]} vs utilization, one line per cleaning." in found
    assert any(c.startswith("Write latency CDF per cleaning, utilization; requests summed "
                            "over seeds") for c in found)
    assert any(c.startswith("Blocks per erase count") for c in found)
    assert any(c.startswith("Erase-count standard deviation") for c in found)
    # The grid, the points and the failures with their errors.
    assert "18 in the sweep: 12 ok, 6 failed, 0 not run yet" in plain
    assert "greedy | cat | nosuch" in plain
    assert "0.6 | 0.75 | 0.9" in plain
    assert "Failed points" in plain
    assert 'unknown value "nosuch"' in plain
    assert plain.count("ConfigError") == 6
    # Versions and config: the base as given and a resolved one.
    assert nandlab.build_version in plain
    assert "sample_every_bytes = 131072" in plain
    assert "pages_per_block = 16" in plain
    assert "Resolved config of point 0" in plain


def test_sweep_report_is_reproducible(
    store: pathlib.Path, sweep_html: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    again = nandlab.report(store, tmp_path / "again.html")
    assert again.read_bytes() == sweep_html.read_bytes()


def test_table_report(table: pathlib.Path, tmp_path: pathlib.Path) -> None:
    out = nandlab.report(table, tmp_path / "table.html")
    text = out.read_text()
    check_self_contained(text)
    found = captions(text)
    for metric in METRIC_LABELS:
        assert f"{metric[0].upper()}{metric[1:]} vs utilization, one line per cleaning." in found
    plain = html.unescape(text)
    assert "run.seed: 2 values" in plain
    assert "pages_per_block = 16" in plain  # the config columns common to every row
    assert "Data versions" in plain
    assert nandlab.build_version in plain
    # A directory of tables: one section per table.
    directory = tmp_path / "tables"
    directory.mkdir()
    (directory / "b.csv").write_text(table.read_text())
    (directory / "a.csv").write_text(table.read_text())
    both = nandlab.report(directory, tmp_path / "dir.html").read_text()
    assert images(both) == 2 * images(text)
    assert both.index('id="a-csv"') < both.index('id="b-csv"')


def test_table_keys_inferred(table: pathlib.Path) -> None:
    import pandas as pd

    df = pd.read_csv(table)
    found = _report._table_keys(df)
    assert found.keys == ["ftl.cleaning", "device.utilization"]
    assert found.seed == "run.seed"
    assert "device.logical_bytes" in found.derived  # follows from the utilization
    plan = _report._plan(df, found.keys, found.numeric_twin)
    assert plan is not None
    assert (plan.x, plan.hue, plan.panels) == (
        "device.utilization", "ftl.cleaning", [])
    # A label column put first (as experiments do) is a key; a label that only renames a
    # numeric config column puts that column on the x axis.
    other = df.assign(**{"workload.kind": "uniform"})
    both = pd.concat([df.assign(**{"workload.kind": "hotcold"}), other], ignore_index=True)
    label = both["workload.kind"].map({"hotcold": "hot", "uniform": "flat"})
    load = both["device.utilization"].map(lambda u: f"{round(u * 100)} %")
    both = pd.concat([label.rename("workload"), both, load.rename("load")], axis=1)
    found = _report._table_keys(both)
    assert found.keys == ["workload", "ftl.cleaning", "device.utilization"]
    assert "workload.kind" in found.derived
    assert "load" not in found.keys
    labelled = both.drop(columns=["device.utilization"])
    found = _report._table_keys(labelled)
    assert found.keys == ["workload", "ftl.cleaning", "load"]
    plan = _report._plan(labelled, found.keys, found.numeric_twin)
    assert plan is not None
    assert (plan.x, plan.hue, plan.panels) == ("device.logical_bytes", "ftl.cleaning",
                                               ["workload"])


def test_latency_histogram_and_cdf(run_json: pathlib.Path) -> None:
    result = nandlab.Result.from_json(run_json.read_text())
    for kind in ("read", "write"):
        frame = result.latency_histogram(kind)
        assert list(frame.columns) == ["latency_ns", "requests"]
        assert frame["latency_ns"].is_monotonic_increasing
        count = result.metrics[f"{kind}_latency_ns"]["count"]
        assert int(frame["requests"].sum()) == count > 0
    with pytest.raises(ValueError, match="kind"):
        result.latency_histogram("trim")  # type: ignore[arg-type]
    figure = plot.latency_cdf(result, kind="both")
    ax = figure.axes[0]
    assert ax.get_xscale() == "log"
    assert len(ax.get_lines()) == 2
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["read", "write"]
    ys = ax.get_lines()[1].get_ydata()
    assert ys[0] == 0.0
    assert abs(ys[-1] - 1.0) < 1e-12


def test_bad_sources(
    tmp_path: pathlib.Path, run_json: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.html"
    with pytest.raises(FileNotFoundError, match="no such file"):
        nandlab.report(tmp_path / "missing", out)
    notes = tmp_path / "notes.txt"
    notes.write_text("hello")
    with pytest.raises(_report.ReportError, match="unknown kind of source"):
        nandlab.report(notes, out)
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"hello": 1}))
    with pytest.raises(ValueError, match="not a nandlab result"):
        nandlab.report(other, out)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match=r"neither manifest\.json"):
        nandlab.report(empty, out)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "manifest.json").write_text("{")
    with pytest.raises(nandlab.NandlabError, match="not a nandlab sweep manifest"):
        nandlab.report(broken, out)
    assert not out.exists()
    # The command: one line on stderr, exit status 2, no traceback.
    for argv in ([str(tmp_path / "missing"), "--out", str(out)],
                 [str(notes), "--out", str(out)],
                 [str(broken), "--out", str(out)]):
        assert _report.main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("nandlab report: error: "), err
        assert err.count("\n") == 1, err
        assert "Traceback" not in err
    assert _report.main([str(run_json)]) == 2  # --out is required
    assert "--out" in capsys.readouterr().err
    assert _report.main([str(run_json), "--out", str(out), "--title", "T"]) == 0
    assert capsys.readouterr().out.startswith(f"wrote {out} (")
    assert "<title>T</title>" in out.read_text()


@pytest.mark.skipif(not CHROMIUM.exists(), reason="no /usr/bin/chromium for the browser check "
                    "(apt-get install chromium)")
def test_browser_check(sweep_html: pathlib.Path, tmp_path: pathlib.Path) -> None:
    shot = tmp_path / "page.png"
    done = subprocess.run([sys.executable, str(CHECK), str(sweep_html), "--screenshot", str(shot)],
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("check_report: OK sweep.html: ")
    assert f"{images(sweep_html.read_text())} images" in done.stdout
    assert "0 console errors" in done.stdout
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # A page that reaches for the network fails the check (blocked and logged).
    bad = tmp_path / "bad.html"
    bad.write_text(sweep_html.read_text().replace(
        "</body>", '<img src="https://example.invalid/x.png" alt="x"></body>'))
    done = subprocess.run([sys.executable, str(CHECK), str(bad)], capture_output=True,
                          text=True, timeout=180)
    assert done.returncode == 1, done.stdout
    assert done.stdout.startswith("check_report: FAIL"), done.stdout
