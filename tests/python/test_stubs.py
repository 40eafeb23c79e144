"""The hand-written stub `_native.pyi` matches the compiled module both ways, and the package's
`__all__` names exist. Method: parse the stub with `ast`; run mypy's stubtest when mypy is
installed."""

from __future__ import annotations

import ast
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

import nandlab
from nandlab import _native

STUB = Path(nandlab.__file__).with_name("_native.pyi")


def stub_names() -> set[str]:
    tree = ast.parse(STUB.read_text())
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def test_stub_names_exist_in_module() -> None:
    names = stub_names()
    assert {"run", "resolve", "presets", "version", "ConfigError"} <= names
    missing = [n for n in sorted(names) if not hasattr(_native, n)]
    assert not missing, f"in _native.pyi but not in the module: {missing}"


def test_module_names_are_in_stub() -> None:
    public = {n for n in dir(_native) if not n.startswith("_")} | {"__version__"}
    undocumented = sorted(public - stub_names())
    assert not undocumented, f"in the module but not in _native.pyi: {undocumented}"


def test_all_exists() -> None:
    for name in nandlab.__all__:
        assert hasattr(nandlab, name), name
    assert (Path(nandlab.__file__).parent / "py.typed").exists()


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="needs mypy")
def test_stubtest() -> None:
    env = {**os.environ, "MYPYPATH": str(STUB.parent.parent)}
    done = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "nandlab._native"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
