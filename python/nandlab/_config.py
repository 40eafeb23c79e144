"""Config plumbing between Python values and the native module.

A config given as a dict may be nested (``{"ftl": {"cleaning": "cat"}}``) or use dotted keys
(``{"ftl.cleaning": "cat"}``), or mix both; it is normalised to nested plain-JSON data and
handed to Rust as JSON, where it is validated once. Overrides (``set=``) become ``key=value``
strings with the value written as TOML, exactly as on the command line. Errors found here are
the same ``ConfigError`` the native side raises, naming the key.

Config integers are TOML's: signed 64-bit. Unsigned keys (``run.seed``, counts, sizes) take
0 ..= 2**63 - 1 through every front end (file, ``--set``, Python); a larger value is refused
naming the key and that range. A config file is at most `MAX_CONFIG_BYTES` (16 MiB) and must be
a regular file: the Python side checks it before the native side reads it.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Optional, Union

from ._errors import argument_error, check_path, read_bounded
from ._native import ConfigError

__all__ = [
    "MAX_CONFIG_BYTES",
    "ConfigLike",
    "Overrides",
    "flatten",
    "native_args",
    "read_config_text",
    "toml_value",
]

ConfigLike = Union[Mapping[str, Any], str, "os.PathLike[str]", None]
"""A config: a (nested or dotted) mapping, a TOML file path, or None for every default."""

Overrides = Union[Mapping[str, Any], Sequence[str], None]
"""Overrides: a mapping of dotted keys to values, or ``"key=value"`` strings."""

# The key `nandlab.resolve_config` adds to a resolved config. `run` accepts (and ignores) it so
# that a resolved config can be run as it is.
DERIVED_KEY = "derived"

MAX_CONFIG_BYTES = 16 << 20
"""The largest config file read (TOML): the commented examples are a few KiB; a larger file is
the wrong one (``/dev/zero``, a trace), refused before it is read whole."""

MAX_CONFIG_INT = 2**63 - 1
"""The largest config integer (TOML's are signed 64-bit): also the largest value of an unsigned
key such as ``run.seed``."""


def config_error(key: str | None, message: str) -> ConfigError:
    """A ConfigError in the native side's format, with the `key` attribute set."""
    text = f"config key `{key}`: {message}" if key else f"config: {message}"
    error = ConfigError(text)
    error.key = key
    return error


def _check_int(value: int, key: str) -> int:
    """TOML (and so every config) integers are 64-bit signed: an unsigned key such as
    ``run.seed`` takes 0 ..= 2**63 - 1 too, which the message names."""
    if not -MAX_CONFIG_INT - 1 <= value <= MAX_CONFIG_INT:
        raise config_error(
            key or None,
            f"integer {value} is out of range: config integers are TOML's signed 64-bit ones, "
            f"{-MAX_CONFIG_INT - 1} ..= {MAX_CONFIG_INT} (2**63 - 1), so an unsigned key "
            f"such as run.seed takes 0 ..= {MAX_CONFIG_INT}",
        )
    return value


def _plain(value: Any, key: str) -> Any:
    """Converts one config value to plain JSON data (numpy scalars, paths, tuples allowed)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return _check_int(value, key)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise config_error(key, f"{value!r} is not a finite number")
        return value
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, Mapping):
        return _nest(value, key)
    if isinstance(value, (list, tuple)):
        return [_plain(v, key) for v in value]
    item = getattr(value, "item", None)  # numpy scalars
    if callable(item):
        return _plain(item(), key)
    raise config_error(key, f"cannot use a {type(value).__name__} as a config value")


def _nest(mapping: Mapping[Any, Any], prefix: str = "") -> dict[str, Any]:
    """Expands dotted keys into nested tables; a key given twice is an error."""
    out: dict[str, Any] = {}
    for raw_key, value in mapping.items():
        if not isinstance(raw_key, str):
            raise config_error(prefix or None, f"config keys must be strings, not {raw_key!r}")
        parts = raw_key.split(".")
        full = f"{prefix}.{raw_key}" if prefix else raw_key
        if any(not p.strip() for p in parts):
            raise config_error(full, "empty key or key segment")
        node = out
        for depth, part in enumerate(parts[:-1]):
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                where = ".".join([prefix, *parts[: depth + 1]] if prefix else parts[: depth + 1])
                raise config_error(where, "is a value, not a table")
            node = child
        leaf = parts[-1]
        converted = _plain(value, full)
        if leaf in node:
            existing = node[leaf]
            if isinstance(existing, dict) and isinstance(converted, dict):
                _merge(existing, converted, full)
                continue
            raise config_error(full, "given twice (as a dotted and a nested key)")
        node[leaf] = converted
    return out


def _merge(into: dict[str, Any], other: dict[str, Any], prefix: str) -> None:
    for key, value in other.items():
        full = f"{prefix}.{key}"
        if key in into:
            if isinstance(into[key], dict) and isinstance(value, dict):
                _merge(into[key], value, full)
                continue
            raise config_error(full, "given twice (as a dotted and a nested key)")
        into[key] = value


def toml_value(value: Any, key: str = "") -> str:
    """Formats a Python value as a TOML value (the right-hand side of ``key=value``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(_check_int(value, key))
    if isinstance(value, float):
        if not math.isfinite(value):
            raise config_error(key or None, f"{value!r} is not a finite number")
        return repr(value)
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, os.PathLike):
        return _toml_string(os.fspath(value))
    if isinstance(value, Mapping):
        items = ", ".join(
            f"{_toml_key(str(k))} = {toml_value(v, f'{key}.{k}')}" for k, v in value.items()
        )
        return "{" + items + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v, key) for v in value) + "]"
    if value is None:
        raise config_error(key or None, "None cannot be an override: leave the key out instead")
    item = getattr(value, "item", None)  # numpy scalars
    if callable(item):
        return toml_value(item(), key)
    raise config_error(key or None, f"cannot use a {type(value).__name__} as a config value")


def _toml_string(text: str) -> str:
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif (code < 0x20 and ch != "\t") or code == 0x7F:
            out.append(f"\\u{code:04X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _toml_key(key: str) -> str:
    bare = key and all(c.isascii() and (c.isalnum() or c in "-_") for c in key)
    return key if bare else _toml_string(key)


def flatten(value: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Flattens nested tables into dotted keys (lists stay as they are)."""
    out: dict[str, Any] = {}
    for key, item in value.items():
        full = f"{prefix}.{key}" if prefix else key
        if isinstance(item, Mapping):
            out.update(flatten(item, full))
        else:
            out[full] = item
    return out


def overrides_list(overrides: Overrides) -> list[str]:
    """``set=`` as ``key=value`` strings. Nested mapping values become dotted keys, so that
    ``{"ftl": {"cleaning": "cat"}}`` changes one key rather than replacing the table."""
    if overrides is None:
        return []
    if isinstance(overrides, str):
        return [overrides]
    if isinstance(overrides, Mapping):
        flat = flatten({str(k): v for k, v in overrides.items()})
        return [f"{key}={toml_value(value, key)}" for key, value in flat.items()]
    if not isinstance(overrides, (list, tuple)):
        raise argument_error(
            "set",
            "overrides must be a mapping of keys to values or a list of 'key=value' strings, "
            f"not {overrides!r}",
            wrong_type=True,
        )
    items = list(overrides)
    for item in items:
        if not isinstance(item, str):
            raise argument_error(
                "set", f"overrides must be 'key=value' strings, not {item!r}", wrong_type=True
            )
        key, sep, value = item.partition("=")
        # A bare integer past TOML's range would reach the native side as a string and be
        # refused there as "expected u64": name the range instead, as for a Python int (a
        # string of digits is given quoted, as TOML wants it).
        if sep and _INTEGER.fullmatch(value.strip()):
            _check_int(int(value.strip().replace("_", "")), key.strip())
    return items


_INTEGER = re.compile(r"[+-]?[0-9](_?[0-9])*")


def _file_error(message: str) -> ConfigError:
    """A ConfigError about a whole config file (``key`` None), as the native side raises."""
    error = ConfigError(message)
    error.key = None
    return error


def read_config_text(path: str | os.PathLike[str]) -> str:
    """The text of the config file ``path``: a regular file of at most `MAX_CONFIG_BYTES`, in
    UTF-8 (as the native reader wants it). Raises ConfigError naming the file."""
    data = read_bounded(path, MAX_CONFIG_BYTES, "a config file", _file_error)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise _file_error(
            f"{os.fspath(path)}: not a TOML config: not UTF-8 text (byte {e.start})"
        ) from None


def native_args(config: ConfigLike, overrides: Overrides) -> dict[str, Any]:
    """Keyword arguments of `_native.run` / `_native.resolve` for a config and overrides."""
    args: dict[str, Any] = {"overrides": overrides_list(overrides)}
    if config is None:
        return args
    if isinstance(config, (str, os.PathLike)):
        path = check_path(config, "config")
        # Checked here, not only by the native reader, which reads a file whole whatever it
        # is: /dev/zero or a huge file would never end. The native side reads it again (it
        # is small) to resolve the relative trace paths it holds.
        read_config_text(path)
        args["config_path"] = path
        return args
    if isinstance(config, Mapping):
        nested = _nest(config)
        nested.pop(DERIVED_KEY, None)
        args["config_json"] = json.dumps(nested, allow_nan=False)
        return args
    raise argument_error(
        "config",
        f"must be a mapping, a TOML file path or None, not {type(config).__name__}",
        wrong_type=True,
    )


def toml_loads() -> Optional[Callable[[str], dict[str, Any]]]:
    """Python's TOML parser (``tomllib``, 3.11+, or ``tomli`` where installed), or None. Its
    errors are `ValueError` subclasses."""
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        try:
            import tomli as tomllib  # type: ignore[no-redef,import-not-found,unused-ignore]
        except ImportError:
            return None
    loads: Callable[[str], dict[str, Any]] = tomllib.loads
    return loads
