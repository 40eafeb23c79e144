"""The Python side's own errors and the argument checks that raise them.

Every user error a `nandlab` function finds raises a subclass of `NandlabError`: the native
module's `ConfigError`, `TraceError` and `RequestError`, the sweep store's `SweepStoreError`,
the report's `ReportError`, and `ArgumentError` here for an argument that is not a config key
(``jobs``, ``seeds``, a path, a count). `ArgumentError` is also a `ValueError`, and
`ArgumentTypeError` a `TypeError`, so code written against the plain Python errors still
catches them.

Files read by path on the Python side are read through `read_bounded`: a size limit and a
regular-file check, so that a wrong path (``/dev/zero``, a FIFO, a huge file) is an error naming
the file instead of a read that never ends.
"""

from __future__ import annotations

import contextlib
import operator
import os
import stat
from collections.abc import Callable, Iterator
from typing import Any, Optional

from ._native import NandlabError

__all__ = [
    "U64_MAX",
    "ArgumentError",
    "ArgumentTypeError",
    "ColumnError",
    "argument_error",
    "check_int",
    "check_path",
    "file_kind",
    "native_arguments",
    "read_bounded",
    "write_error",
]

U64_MAX = 2**64 - 1
"""The largest value of an unsigned 64-bit argument of the native module (``device``,
``max_writes``, ``buffer_window_ns``, ...)."""


class ArgumentError(NandlabError, ValueError):
    """A bad argument to a nandlab function (not a config key: those raise `ConfigError`).
    ``argument`` names it; the message says what it must be."""

    argument: Optional[str] = None


class ArgumentTypeError(ArgumentError, TypeError):
    """An argument of the wrong type (an `ArgumentError` and a `TypeError`)."""


class ColumnError(ArgumentError, KeyError):
    """A column a figure or table needs is not in the frame (an `ArgumentError` and a
    `KeyError`)."""

    def __str__(self) -> str:
        # KeyError's str() is the repr of its argument: quotes around the whole message.
        return str(self.args[0]) if self.args else ""


# Printed and pickled as `nandlab.ArgumentError` etc.: the package re-exports them.
ArgumentError.__module__ = "nandlab"
ArgumentTypeError.__module__ = "nandlab"
ColumnError.__module__ = "nandlab"


def argument_error(argument: str, message: str, *, wrong_type: bool = False) -> ArgumentError:
    """An `ArgumentError` (`ArgumentTypeError` with ``wrong_type``) reading ``argument:
    message``, its ``argument`` attribute set."""
    cls = ArgumentTypeError if wrong_type else ArgumentError
    error = cls(f"{argument}: {message}")
    error.argument = argument
    return error


def check_int(
    value: Any,
    argument: str,
    *,
    minimum: Optional[int] = None,
    maximum: Optional[int] = None,
    note: str = "",
) -> int:
    """``value`` as an int (numpy integers too; not a bool or a float, which would be
    truncated silently), within [minimum, maximum] where given; ``note`` ends the message of
    a value out of range (why the range is what it is)."""
    if isinstance(value, bool):
        raise argument_error(argument, f"expected an integer, not {value!r}", wrong_type=True)
    try:
        number = operator.index(value)
    except TypeError:
        raise argument_error(
            argument, f"expected an integer, not {value!r}", wrong_type=True
        ) from None
    if (minimum is not None and number < minimum) or (maximum is not None and number > maximum):
        if maximum is None:
            bounds = f"at least {minimum}"
        elif minimum is None:
            bounds = f"at most {maximum}"
        else:
            bounds = f"in {minimum} ..= {maximum}"
        raise argument_error(argument, f"{number} is out of range: it must be {bounds}{note}")
    return number


@contextlib.contextmanager
def native_arguments() -> Iterator[None]:
    """Turns the plain errors the native module raises for its arguments (a ValueError naming
    the argument, e.g. "alignment_bytes must be at least 1"; a TypeError from the conversion of
    an argument of the wrong type) into `ArgumentError` / `ArgumentTypeError`. The callers
    check integer ranges first, so that no OverflowError without the argument's name gets
    here."""
    try:
        yield
    except NandlabError:
        raise
    except TypeError as e:
        raise ArgumentTypeError(str(e)) from None
    except (ValueError, OverflowError) as e:
        raise ArgumentError(str(e)) from None


def write_error(argument: str, path: Any, error: OSError) -> ArgumentError:
    """The error for an output file (``argument``) that cannot be written."""
    return argument_error(argument, f"{path}: cannot write it: {error.strerror or error}")


def check_path(value: Any, argument: str) -> str:
    """``value`` (a str or os.PathLike) as a path string: not empty, without NUL bytes."""
    if not isinstance(value, (str, os.PathLike)):
        raise argument_error(
            argument, f"expected a path (str or os.PathLike), not {value!r}", wrong_type=True
        )
    text = os.fspath(value)
    if not isinstance(text, str):
        raise argument_error(argument, f"expected a text path, not {text!r}", wrong_type=True)
    if not text:
        raise argument_error(argument, "the path is empty")
    if "\0" in text:
        raise argument_error(argument, f"the path {text!r} holds a NUL byte")
    return text


def read_bounded(
    path: str | os.PathLike[str], limit: int, what: str, error: Callable[[str], Exception]
) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them. Anything else — a
    missing or unreadable file, a directory, a device such as ``/dev/zero``, a FIFO, a file
    larger than ``limit`` — raises ``error(message)`` with a message naming the file and
    ``what`` it should be (e.g. "a config file")."""
    name = os.fspath(path)
    problem: Optional[str] = None
    data = b""
    try:
        # Non-blocking, so that opening a FIFO without a writer does not wait forever (it is
        # refused below); a regular file reads the same either way.
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK)
        with open(fd, "rb") as file:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                problem = f"{file_kind(info.st_mode)}: {what} must be a regular file"
            elif info.st_size <= limit:
                # One byte past the limit: a file that grew after it was opened is caught too.
                data = file.read(limit + 1)
    except OSError as e:
        problem = f"cannot read {what}: {e.strerror or e}"
    if problem is None and (len(data) > limit or info.st_size > limit):
        problem = f"larger than {_size(limit)}, the most {what} may hold: is it the right file?"
    if problem is not None:
        raise error(f"{name}: {problem}")
    return data


def file_kind(mode: int) -> str:
    """What a file that is not a regular one is, in words (from its ``st_mode``)."""
    for test, kind in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return kind
    return "not a regular file"


def _size(n: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n:,} bytes"
