"""Errors: every user mistake raises a typed `nandlab` exception that names what to fix (the
config key, the trace file and line), never a bare PanicException. Method: one bad input per
case, checked for type, message and attributes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import nandlab
from nandlab import ConfigError, NandlabError, RequestError, TraceError


def test_exception_tree() -> None:
    assert issubclass(NandlabError, Exception)
    for cls in (ConfigError, TraceError, RequestError):
        assert issubclass(cls, NandlabError)
        assert cls.__module__ == "nandlab"


def test_bad_value_names_the_key(small: dict[str, Any]) -> None:
    with pytest.raises(ConfigError, match=r"ftl\.cleaning") as info:
        nandlab.run(small, set={"ftl.cleaning": "lru"})
    assert info.value.key == "ftl.cleaning"
    assert "lru" in str(info.value)
    with pytest.raises(ConfigError, match=r"ftl\.cleaning"):
        nandlab.run({**small, "ftl": {"cleaning": "lru"}})
    with pytest.raises(ConfigError, match=r"device\.utilization") as info:
        nandlab.run(small, set=["device.utilization=1.5"])
    assert info.value.key == "device.utilization"


def test_unknown_key(small: dict[str, Any]) -> None:
    with pytest.raises(ConfigError, match="bogus") as info:
        nandlab.run({**small, "device.bogus": 1})
    assert info.value.key == "device.bogus"
    with pytest.raises(ConfigError, match="nosuchtable"):
        nandlab.run(small, set={"nosuchtable.x": 1})


@pytest.mark.parametrize(
    ("config", "key"),
    [
        ({"device.blocks": -1}, "device.blocks"),
        ({"device.blocks": "many"}, "device.blocks"),
        ({"device.blocks": 1.5}, "device.blocks"),
        ({"device.blocks": 2**70}, "device.blocks"),
        ({"device.blocks": 2}, "device.blocks"),
        ({"device.utilization": float("nan")}, "device.utilization"),
        ({"device.blocks": 64, "device.utilization": 0.95}, "device.utilization"),
        ({"device.page_size_bytes": 1000}, "device.page_size_bytes"),
        ({"device.preset": "nope"}, "device.preset"),
        ({"device": 3}, "device"),
        ({"ftl.regions": 0, "ftl.placement": "dac"}, "ftl.regions"),
        ({"ftl.regions": 3}, "ftl.regions"),
        ({"workload.kind": "trace"}, "workload.path"),
        ({"workload.request_bytes": 0}, "workload.request_bytes"),
        (
            {"workload.phases": [{"kind": "x", "passes": 1}], "workload.kind": "phases"},
            "workload.phases[0].kind",
        ),
        ({"ftl.cleaning": "cat", "ftl": {"cleaning": "greedy"}}, "ftl.cleaning"),
        ({"ftl..cleaning": "cat"}, "ftl..cleaning"),
        ({"run.seed": object()}, "run.seed"),
    ],
)
def test_bad_configs_raise_config_error(config: dict[str, Any], key: str) -> None:
    with pytest.raises(ConfigError) as info:
        nandlab.run(config)
    assert info.value.key == key
    assert key in str(info.value)


@pytest.mark.parametrize(
    ("overrides", "key"),
    [
        (["junk"], "junk"),
        (["=1"], ""),
        ({"ftl.cleaning": None}, "ftl.cleaning"),
        ({"device.utilization": float("inf")}, "device.utilization"),
        ({"device.blocks": "64"}, "device.blocks"),
    ],
)
def test_bad_overrides(overrides: Any, key: str) -> None:
    with pytest.raises(ConfigError) as info:
        nandlab.run({"device.blocks": 64}, set=overrides)
    assert info.value.key in (key, key or None)


def test_config_file_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"missing\.toml") as info:
        nandlab.run(tmp_path / "missing.toml")
    assert info.value.key is None
    broken = tmp_path / "broken.toml"
    broken.write_text("[device\nblocks = 1\n")
    with pytest.raises(ConfigError, match=r"broken\.toml"):
        nandlab.run(broken)
    unknown = tmp_path / "unknown.toml"
    unknown.write_text('[ftl]\ncleaning = "lru"\n')
    with pytest.raises(ConfigError, match=r"ftl\.cleaning"):
        nandlab.run(unknown)


def test_malformed_trace_names_file_and_line(tmp_path: Path) -> None:
    trace = tmp_path / "bad.csv"
    trace.write_text(
        "128166372003061629,hm,0,Write,3221225472,4096,1000\n"
        "128166372003071629,hm,0,Write,3221229568,4096,1000\n"
        "128166372003081629,hm,0\n"
    )
    with pytest.raises(TraceError) as info:
        nandlab.run({"workload.kind": "trace", "workload.path": str(trace)})
    message = str(info.value)
    assert f"{trace}:3:" in message
    assert info.value.path == str(trace)
    assert info.value.line == 3


def test_missing_and_empty_traces(tmp_path: Path) -> None:
    with pytest.raises(TraceError, match=r"nope\.csv") as info:
        nandlab.run({"workload.kind": "trace", "workload.path": str(tmp_path / "nope.csv")})
    assert info.value.line is None
    empty = tmp_path / "empty.csv"
    empty.write_text("# nothing\n")
    with pytest.raises(TraceError, match=r"empty\.csv"):
        nandlab.run({"workload.kind": "trace", "workload.path": str(empty)})


def test_request_error_says_which_kind(tmp_path: Path) -> None:
    """A request the device cannot accept raises RequestError whose `kind` says why; `io_kind`
    is None (only media errors, which need a payload-storing media, have one). Method: a
    two-record MQSim trace (nanosecond times 0 and D, D = (2^64 - 1) / 85) replayed until a
    request arrives at 85·D = 2^64 - 1 ns, the last instant simulated time holds (replay 42's
    second record: replay k starts at k·2D): its completion would pass it."""
    span_ns = (2**64 - 1) // 85
    assert span_ns * 85 == 2**64 - 1
    trace = tmp_path / "late.trace"
    trace.write_text(f"0 0 0 8 0\n{span_ns} 0 8 8 0\n")
    config = {
        "device.blocks": 64,
        "workload.kind": "trace",
        "workload.path": str(trace),
        "workload.format": "mqsim",
        "workload.passes": 50,
        "workload.prefill": False,
    }
    with pytest.raises(RequestError, match="overflows") as info:
        nandlab.run(config)
    assert info.value.kind == "time-overflow"
    assert info.value.io_kind is None
    assert info.value.index == 85
    # A sweep re-raises it with the same attributes.
    with pytest.raises(RequestError) as swept:
        nandlab.sweep(config, {"run.seed": [1]})
    assert (swept.value.kind, swept.value.io_kind) == ("time-overflow", None)


def test_request_error_kinds_are_documented() -> None:
    """Every `kind` the native module can set is named in the stub (users match on them)."""
    stub = Path(nandlab.__file__).with_name("_native.pyi").read_text()
    for kind in (
        "out-of-range",
        "time-went-backwards",
        "payload-length",
        "media",
        "worn-out",
        "time-overflow",
    ):
        assert f'"{kind}"' in stub, kind
    assert "io_kind" in stub


def test_callback_error_is_raised_after_the_run() -> None:
    calls = []

    def failing(done: int, expected: int) -> None:
        calls.append(done)
        raise RuntimeError("stop")

    with pytest.raises(RuntimeError, match="stop"):
        nandlab.run({"device.blocks": 256, "workload.passes": 1}, progress=failing)
    assert len(calls) == 1, "after a failure the callback is not called again"


def test_argument_types(small: dict[str, Any]) -> None:
    with pytest.raises(TypeError):
        nandlab.run(42)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        nandlab.run(small, progress="yes")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        nandlab.run(small, set=[1, 2])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="not both"):
        nandlab._native.run(config_json="{}", config_path="x.toml")


def test_native_inputs_never_panic(tmp_path: Path) -> None:
    """Raw strings straight into the native module: malformed JSON, wrong shapes, binary
    files. Each must raise a NandlabError (a PanicException is a BaseException, so it would
    escape the `except`)."""
    binary = tmp_path / "binary.toml"
    binary.write_bytes(bytes(range(256)))
    cases: list[dict[str, Any]] = [
        {"config_json": "not json"},
        {"config_json": "[1, 2]"},
        {"config_json": "null"},
        {"config_json": '{"device": {"blocks": 1e400}}'},
        {"config_json": '{"device": {"blocks": 18446744073709551616}}'},
        {"config_json": '{"workload": {"phases": [1]}}'},
        {"config_json": "{}", "overrides": ["a.b.c=1", "a.b=2"]},
        {"config_json": "{}", "overrides": ["device.blocks.x=1"]},
        {"config_json": "{}", "overrides": ["device.blocks=[1,"]},
        {"config_path": str(binary)},
        {"config_path": str(tmp_path)},
        {"config_json": '{"workload": {"kind": "trace", "path": "' + str(binary) + '"}}'},
        {"config_json": '{"workload": {"kind": "trace", "path": "' + str(tmp_path) + '"}}'},
    ]
    for case in cases:
        try:
            nandlab._native.run(**case)
        except NandlabError:
            pass
        else:
            pytest.fail(f"no error for {case}")


def test_hostile_sizes_raise_config_error_before_allocating(small: dict[str, Any]) -> None:
    """`device.page_size_bytes = 2**40` used to abort the interpreter, and a device
    too large for memory to abort while allocating; both are ConfigErrors naming the key."""
    with pytest.raises(ConfigError, match=r"device\.page_size_bytes") as info:
        nandlab.run(small, set={"device.page_size_bytes": 2**40})
    assert info.value.key == "device.page_size_bytes"
    with pytest.raises(ConfigError, match=r"run\.memory_limit_bytes") as info:
        nandlab.run(set={"device.logical_bytes": 2**43, "run.memory_limit_bytes": 2**31})
    assert info.value.key == "device.logical_bytes"
    assert "TiB logical" in str(info.value)


def test_keys_that_do_not_apply_raise_config_error(small: dict[str, Any]) -> None:
    with pytest.raises(ConfigError, match=r"workload\.format") as info:
        nandlab.run(small, set={"workload.format": "bogus"})
    assert info.value.key == "workload.format"
    with pytest.raises(ConfigError, match=r"timing\.program_page_ns"):
        nandlab.run(small, set={"timing.program_page_ns": 2**63 - 1})
