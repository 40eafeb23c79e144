"""The ``nandlab`` command line from Python: ``python -m nandlab`` and the ``nandlab`` console
script of ``pip install .``.

It is the same CLI as the Rust binary ``target/release/nandlab``, and each command crosses
between the languages at most once:

- ``sweep`` and ``report`` are written in Python and run here, without the native CLI;
- every other subcommand runs in the native module (`nandlab._native.cli`, the Rust CLI compiled
  into it, without ``serve``), which returns what is left for Python: the HTML report of
  ``run --report FILE.html``, which is then written here, in this process, as
  ``nandlab report - --out FILE.html`` with the run's JSON as its input.

(The Rust binary does the same with one child process, ``python -m nandlab sweep|report ...``.)
"""

from __future__ import annotations

import contextlib
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
    if command == "run" and any(a == "--report" or a.startswith("--report=") for a in argv):
        # Before the run: a broken report module fails now, not after a long run.
        from . import _report  # noqa: F401
    status, report = _run_native(argv)
    if report is None:
        return status
    return _write_report(*report)


def _run_native(argv: list[str]) -> tuple[int, Optional[tuple[str, str, bool]]]:
    """Runs ``argv`` in the Rust CLI, interruptible by Ctrl-C as the Rust binary is."""
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


def _write_report(result_json: str, html: str, json_on_stdout: bool) -> int:
    """The end of ``run --report FILE.html``: ``nandlab report - --out FILE.html`` on the run's
    JSON. When the run wrote its JSON to standard output (``--json -``), the report's own
    output goes to stderr, so that standard output stays that one JSON document."""
    from ._report import main as report_main

    target = sys.stderr if json_on_stdout else sys.stdout
    with contextlib.redirect_stdout(target):
        status = report_main(["-", "--out", html], stdin=result_json)
    if status != 0:
        print(f"nandlab: error: the report {html} was not written", file=sys.stderr)
        return 2
    return 0


def console_main() -> None:
    """The ``nandlab`` console script: `main` on ``sys.argv``, its status the exit status."""
    sys.exit(main())
