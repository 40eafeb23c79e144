"""`nandlab.run`: every way to give a config, the metrics it returns, determinism and the
reproducibility record (config, seed, version). Method: small devices, compare whole metric
dicts between runs that must agree."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import nandlab
from nandlab import Result

REQUIRED_METRICS = [
    "host_write_pages",
    "gc_copied_pages",
    "erases",
    "write_amplification",
    "cleaning_cost",
    "wear_mean",
    "wear_stddev",
    "wear_max",
    "flash_busy_ns",
    "wall_seconds",
]


def deterministic(metrics: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in metrics.items() if k not in nandlab.WALL_CLOCK_METRICS}


def test_default_metrics_present(small: dict[str, Any]) -> None:
    result = nandlab.run(small)
    assert isinstance(result, Result)
    for name in REQUIRED_METRICS:
        assert name in result.metrics, name
    m = result.metrics
    assert m["host_write_pages"] > 0
    assert m["erases"] > 0
    assert m["write_amplification"] >= 1.0
    assert m["wall_seconds"] > 0
    assert result.seed == 1
    assert result.version == nandlab.build_version
    assert result.trace is None


def test_nested_dotted_and_mixed_dicts_agree() -> None:
    nested = {
        "device": {"blocks": 64, "pages_per_block": 16},
        "ftl": {"cleaning": "cat", "placement": "dac", "regions": 2},
    }
    dotted = {
        "device.blocks": 64,
        "device.pages_per_block": 16,
        "ftl.cleaning": "cat",
        "ftl.placement": "dac",
        "ftl.regions": 2,
    }
    mixed = {
        "device": {"blocks": 64},
        "device.pages_per_block": 16,
        "ftl.cleaning": "cat",
        "ftl": {"placement": "dac", "regions": 2},
    }
    a, b, c = (nandlab.run(x) for x in (nested, dotted, mixed))
    assert a.config["ftl"]["cleaning"] == "cat"
    assert a.config["ftl"]["regions"] == 2
    assert deterministic(a.metrics) == deterministic(b.metrics) == deterministic(c.metrics)
    assert a.config == b.config == c.config


def test_toml_path(tmp_path: Path, small: dict[str, Any]) -> None:
    path = tmp_path / "run.toml"
    path.write_text(
        '[device]\nblocks = 64\npages_per_block = 16\n\n[ftl]\ncleaning = "cost-benefit"\n'
    )
    from_file = nandlab.run(path)
    from_str = nandlab.run(str(path))
    from_dict = nandlab.run({**small, "ftl.cleaning": "cost-benefit"})
    assert from_file.config["ftl"]["cleaning"] == "cost-benefit"
    assert deterministic(from_file.metrics) == deterministic(from_dict.metrics)
    assert deterministic(from_str.metrics) == deterministic(from_dict.metrics)


def test_set_overrides(tmp_path: Path, small: dict[str, Any]) -> None:
    as_mapping = nandlab.run(
        small, set={"ftl.placement": "dac", "ftl.regions": 2, "workload.prefill": True}
    )
    as_strings = nandlab.run(small, set=["ftl.placement=dac", "ftl.regions=2"])
    assert as_mapping.config["ftl"]["placement"] == "dac"
    assert as_mapping.config["ftl"]["regions"] == 2
    assert deterministic(as_mapping.metrics) == deterministic(as_strings.metrics)
    # Overrides apply on top of a file too, and nested mappings change single keys.
    path = tmp_path / "run.toml"
    path.write_text("[device]\nblocks = 64\npages_per_block = 16\n")
    on_file = nandlab.run(path, set={"ftl": {"placement": "dac", "regions": 2}})
    assert deterministic(on_file.metrics) == deterministic(as_mapping.metrics)
    # A set= value wins over the dict's.
    override = nandlab.run({**small, "ftl.cleaning": "greedy"}, set={"ftl.cleaning": "fifo"})
    assert override.config["ftl"]["cleaning"] == "fifo"


def test_set_value_types(small: dict[str, Any]) -> None:
    result = nandlab.run(
        {**small, "workload.kind": "phases"},
        set={
            "workload.phases": [
                {"kind": "hotcold", "hot_access_fraction": 0.8, "passes": 0.5},
                {"kind": "uniform", "passes": 0.5},
            ],
            "workload.prefill": False,
            "device.utilization": 0.75,
        },
    )
    phases = result.config["workload"]["phases"]
    assert [p["kind"] for p in phases] == ["hotcold", "uniform"]
    assert phases[0]["hot_access_fraction"] == 0.8
    assert result.config["workload"]["prefill"] is False


def test_same_seed_same_metrics_other_seed_differs(small: dict[str, Any]) -> None:
    config = {**small, "workload.kind": "hotcold", "run.seed": 7}
    a = nandlab.run(config)
    b = nandlab.run(config)
    assert a.seed == 7
    assert deterministic(a.metrics) == deterministic(b.metrics)
    c = nandlab.run(config, set={"run.seed": 8})
    assert c.seed == 8
    assert deterministic(c.metrics) != deterministic(a.metrics)


def test_recorded_config_reproduces_the_run(small: dict[str, Any]) -> None:
    first = nandlab.run({**small, "workload.kind": "hotcold", "ftl.placement": "dac"})
    again = nandlab.run(first.config)
    assert again.config == first.config
    assert again.seed == first.seed
    assert again.version == first.version
    assert deterministic(again.metrics) == deterministic(first.metrics)
    # Through JSON, as a result file would be stored.
    stored = Result.from_json(first.to_json())
    assert stored == first
    assert deterministic(nandlab.run(stored.config).metrics) == deterministic(first.metrics)


def test_resolve_config(small: dict[str, Any]) -> None:
    resolved = nandlab.resolve_config(small, set={"ftl.placement": "dac"})
    assert list(resolved)[:5] == ["device", "timing", "ftl", "workload", "run"]
    derived = resolved["derived"]
    assert derived["physical_pages"] == 64 * 16
    assert derived["logical_pages"] == int(64 * 16 * 0.8)
    assert derived["regions"] == 4
    assert derived["gc_free_blocks_min"] == resolved["ftl"]["gc_free_blocks_min"]
    assert resolved["ftl"]["regions"] == 4
    # A resolved config runs as it is and gives the same run.
    direct = nandlab.run(small, set={"ftl.placement": "dac"})
    assert deterministic(nandlab.run(resolved).metrics) == deterministic(direct.metrics)
    assert nandlab.resolve_config()["device"]["preset"] == "generic"


def test_presets() -> None:
    presets = nandlab.presets()
    names = [p["name"] for p in presets]
    assert names[0] == "generic"
    assert "nor1999" in names
    assert all(
        {"page_size_bytes", "pages_per_block", "blocks", "timing"} <= set(p) for p in presets
    )


def test_to_frame_and_wear_histogram(small: dict[str, Any]) -> None:
    result = nandlab.run(small)
    frame = result.to_frame()
    assert len(frame) == 1
    row = frame.iloc[0]
    assert row["ftl.cleaning"] == "greedy"
    assert row["device.blocks"] == 64
    assert row["erases"] == result.metrics["erases"]
    assert row["write_latency_ns.p99"] == result.metrics["write_latency_ns"]["p99"]
    assert row["seed"] == 1
    assert row["version"] == nandlab.build_version
    assert "wear_histogram" not in frame.columns
    assert "write_latency_ns" not in frame.columns
    wear = result.wear_histogram
    assert list(wear.columns) == ["erase_count", "blocks"]
    assert wear["blocks"].sum() == 64
    assert wear["erase_count"].max() == result.metrics["wear_max"]
    assert json.loads(result.to_json())["metrics"]["erases"] == result.metrics["erases"]


def test_progress_callback(small: dict[str, Any]) -> None:
    calls: list[tuple[int, int]] = []
    # 256 blocks × 64 pages: about 65,000 logical pages, over 65,536 requests in all.
    config = {"device.blocks": 256, "workload.warmup_passes": 0, "workload.passes": 1}
    nandlab.run(config, progress=lambda done, expected: calls.append((done, expected)))
    assert calls, "the callback is called every 65,536 requests"
    assert all(done > 0 and expected > 0 for done, expected in calls)
    assert [done for done, _ in calls] == sorted(done for done, _ in calls)


def test_progress_true_writes_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    nandlab.run({"device.blocks": 256, "workload.passes": 1}, progress=True)
    assert "requests" in capsys.readouterr().err


def test_trace_run(msr_trace: Path) -> None:
    result = nandlab.run({"workload.kind": "trace", "workload.path": str(msr_trace)})
    assert result.trace is not None
    assert result.trace["format"] == "msr"
    assert result.trace["records"] == 80
    assert result.trace["sized_from_trace"] is True
    assert result.metrics["host_write_requests"] == 64
    assert result.metrics["host_read_requests"] == 16
    frame = result.to_frame()
    assert frame.loc[0, "trace.format"] == "msr"
    again = nandlab.run(result.config)
    assert deterministic(again.metrics) == deterministic(result.metrics)


def test_relative_trace_path_in_toml(tmp_path: Path, msr_trace: Path) -> None:
    config = tmp_path / "trace.toml"
    config.write_text(f'[workload]\nkind = "trace"\npath = "{msr_trace.name}"\n')
    assert nandlab.run(config).trace is not None


def test_counts_only_same_counts_and_refusals(small: dict[str, Any]) -> None:
    """`run.timing = "off"` from Python: a timed run's counts, no latency, recorded in the
    config (so the result re-runs as it was); a time-reading policy is a ConfigError naming
    its key."""
    timed = nandlab.run(small)
    counted = nandlab.run(small, set={"run.timing": "off"})
    for key in ("host_write_pages", "flash_program_pages", "gc_copied_pages", "erases"):
        assert counted.metrics[key] == timed.metrics[key], key
    assert counted.metrics["sim_time_ns"] == 0
    assert timed.metrics["sim_time_ns"] > 0
    assert counted.config["run"]["timing"] == "off"
    assert "timing" not in timed.config["run"]
    assert deterministic(nandlab.run(counted.config).metrics) == deterministic(counted.metrics)
    with pytest.raises(nandlab.ConfigError, match=r"ftl\.cleaning"):
        nandlab.run(small, set={"run.timing": "off", "ftl.cleaning": "cat"})
