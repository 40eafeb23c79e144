"""The ``nandlab`` command line from Python: ``python -m nandlab`` and the ``nandlab`` console
script of ``pip install .``.

It is the same CLI as the Rust binary ``target/release/nandlab``: every subcommand but two runs
in the native module (`nandlab._native.cli`, the Rust CLI compiled into it, without ``serve``).
``sweep`` and ``report`` are written in Python and run here; the Rust binary hands them to
``python -m nandlab`` in turn.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from typing import Optional

from . import _native

__all__ = ["console_main", "main"]


def main(argv: Optional[list[str]] = None) -> int:
    """Runs the command line ``argv`` (the arguments after the program name; default
    ``sys.argv[1:]``) and returns its exit status."""
    if argv is None:
        argv = sys.argv[1:]
    command = argv[0] if argv else None
    # Imported here, not at the top: each pulls in its own dependencies (the sweep store's
    # Parquet, the report's plots), which the other subcommands do not need.
    if command == "sweep":
        from ._sweep_cli import main as sweep_main

        return sweep_main(argv[1:])
    if command == "report":
        from ._report import main as report_main

        return report_main(argv[1:])
    return _run_native(argv)


def _run_native(argv: list[str]) -> int:
    """Runs ``argv`` in the Rust CLI, interruptible by Ctrl-C as the Rust binary is."""
    # `run --report` starts `$NANDLAB_PYTHON -m nandlab report`: the interpreter running this
    # one, which has this very package, rather than whatever the Rust side would find.
    if sys.executable:
        os.environ["NANDLAB_PYTHON"] = sys.executable
    # The Rust CLI writes to file descriptors 1 and 2 directly: anything Python has buffered
    # must come out first to keep the order.
    sys.stdout.flush()
    sys.stderr.flush()
    # Python's SIGINT handler only sets a flag that is checked between bytecodes, never during
    # a native call that runs for minutes; the default action ends the process at once, as
    # Ctrl-C ends the Rust binary. Only the main thread may change handlers; the previous one
    # comes back afterwards for callers that go on in the same process.
    in_main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, signal.SIG_DFL) if in_main_thread else None
    try:
        return _native.cli(argv)
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


def console_main() -> None:
    """The ``nandlab`` console script: `main` on ``sys.argv``, its status the exit status."""
    sys.exit(main())
