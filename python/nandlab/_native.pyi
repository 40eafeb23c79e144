"""The private native module of nandlab (Rust, PyO3). Use the `nandlab` package instead.

Configs cross the boundary as JSON text or a TOML file path, results as JSON text. Every
function validates the config once and raises `ConfigError` naming the key at fault.
"""

from collections.abc import Callable, Sequence
from os import PathLike
from typing import Optional, Union

__all__ = [
    "BUILD_VERSION",
    "ConfigError",
    "NandlabError",
    "RequestError",
    "TraceError",
    "__version__",
    "analyze",
    "cli",
    "pbr",
    "presets",
    "probe",
    "recycling_costs",
    "resolve",
    "run",
    "suite",
    "version",
]

__version__: str
"""The crate version, X.Y.Z (PEP 440)."""
BUILD_VERSION: str
"""``nandlab X.Y.Z (COMMIT)``: the crate version and the git commit this module was built from
(``-dirty`` appended when tracked files had uncommitted changes), or ``no git commit: <why>``
in place of the commit; what ``nandlab --version`` prints and every result records."""

class NandlabError(Exception):
    """Base class of every nandlab error."""

class ConfigError(NandlabError):
    """A configuration that cannot be run.

    The message names the dotted key at fault, e.g. ``config key `ftl.cleaning`: unknown
    value "lru"; expected one of greedy, cost-benefit, cat, fifo, random-d``.
    """

    key: Optional[str]
    """The dotted config key at fault; None when a whole file or text is at fault."""

class TraceError(NandlabError):
    """A trace file that cannot be read, parsed or fitted onto the device.

    The message reads ``path:line: what is wrong, "the line"``.
    """

    path: Optional[str]
    """The trace file."""
    line: Optional[int]
    """The 1-based line at fault; None when no single line is (unreadable file, unknown
    format, empty trace)."""

class RequestError(NandlabError):
    """A host request the simulated device cannot accept."""

    index: int
    """The request's position in the run."""
    kind: str
    """Why: ``"out-of-range"``, ``"time-went-backwards"``, ``"payload-length"``, ``"media"``,
    ``"worn-out"`` or ``"time-overflow"`` (match on this, not on the message)."""
    io_kind: Optional[str]
    """For ``kind == "media"``: the I/O error kind as Rust names it (``"StorageFull"``,
    ``"PermissionDenied"``, ``"InvalidData"``, ``"Other"``, …); None for the other kinds."""

def run(
    config_json: Optional[str] = None,
    config_path: Union[str, PathLike[str], None] = None,
    overrides: Sequence[str] = ...,
    progress: Optional[Callable[[int, int], object]] = None,
) -> str:
    """Runs one configuration to the end and returns the report as JSON text.

    The config is JSON text (`config_json`), a TOML file (`config_path`) or, with neither, every
    default; `overrides` (``"key=value"``, value in TOML syntax) go on top. The report has
    ``metrics``, ``config`` (resolved), ``seed``, ``version`` and, for trace workloads,
    ``trace``.

    The GIL is released during the run. `progress(requests_done, requests_expected)` is called
    every 65,536 requests with the GIL held; the run cannot stop early, so an exception raised
    by the callback is re-raised after the run ends.

    Raises:
        ConfigError, TraceError, RequestError: see each class.
        ValueError: both config_json and config_path given.
    """

def resolve(
    config_json: Optional[str] = None,
    config_path: Union[str, PathLike[str], None] = None,
    overrides: Sequence[str] = ...,
) -> str:
    """The resolved config (every default filled in) as JSON text, with an extra ``derived``
    object: ``physical_pages``, ``logical_pages``, ``utilization``, ``regions``,
    ``gc_free_blocks_min``. Arguments as for `run`."""

def presets() -> str:
    """Every device preset as a JSON list (name, description, page_size_bytes,
    pages_per_block, blocks, timing, endurance_cycles), the default first."""

def recycling_costs(
    alpha: float,
    pages_per_block: int,
    erase_cost: float,
    copy_cost: float,
    n_max: int,
) -> tuple[int, float, float, list[float], list[float]]:
    """The block-recycling paper's cost model: ``(n0, w_merge, equilibrium_p, w_mig, w)``,
    ``w_mig[p]`` for p = 0..N_p-1 and ``w[n]`` for n = 0..n_max (``inf`` where nothing is
    freed). Use `nandlab.recycling.optimal_migrations`.

    Raises:
        ValueError: a negative or non-finite cost or alpha, pages_per_block < 1, n_max too big.
    """

def analyze(
    path: Union[str, PathLike[str]],
    format: Optional[str] = None,
    device: Optional[int] = None,
    sequential_window: int = 10,
    alignment_bytes: int = 4096,
    sample_points: int = 10_000,
    buffer_window_ns: int = 1_000_000_000,
) -> str:
    """The benchmarks paper's characterisation of a trace file, as JSON text (the keys of
    ``nandlab analyze --json``). Use `nandlab.analyze`.

    Raises:
        TraceError: an unreadable or malformed trace, an unknown format name, or no records.
        ValueError: alignment_bytes < 1.
    """

def suite(name: str, out: Union[str, PathLike[str]], overrides: Sequence[str]) -> str:
    """Writes benchmark suite ``name``'s trace (MSR CSV) to ``out`` with ``overrides``
    (``key=value``) and returns its analysis as JSON text. Use `nandlab.suite`.

    Raises:
        ValueError: an unknown suite or parameter, or parameters that do not fit.
        NandlabError: the trace cannot be written.
    """

def pbr(
    target: str,
    trace: Union[str, PathLike[str]],
    overrides: Sequence[str] = ...,
    format: Optional[str] = None,
    device: Optional[int] = None,
    max_writes: Optional[int] = None,
    destroy_data: bool = False,
) -> tuple[str, tuple[list[int], list[int], list[int]]]:
    """The benchmarks paper's Per-Byte-Response replay: the summary (with the diagnosis) as JSON
    text and the points as (offsets, lengths, response times in ns). Use `nandlab.pbr`.

    Raises:
        ValueError: an unknown target form, or overrides for a target other than ``sim:``.
        NandlabError: the target or trace cannot be used (the message says why).
    """

def probe(
    target: str,
    overrides: Sequence[str] = ...,
    only: Sequence[str] = ...,
    repeats: int = 7,
    destroy_data: bool = False,
) -> str:
    """Black-box geometry probes; the report as JSON text. Use `nandlab.probe`.

    Raises:
        ValueError: an unknown target form or probe name, or overrides for a non-sim target.
        NandlabError: the target cannot be used or is too small for a probe.
    """

def cli(argv: list[str]) -> tuple[int, Optional[tuple[str, str, bool]]]:
    """Runs the ``nandlab`` command line on ``argv`` (the arguments after the program name, e.g.
    ``["run", "--json", "-"]``) as the Rust binary ``target/release/nandlab`` would, and returns
    its exit status (0 ok, 2 a usage or run error, 141 a closed standard output) with the part
    left to Python: after ``run --report FILE.html``, ``(result_json, html_path,
    json_on_stdout)``, the report for the caller to write (``nandlab report - --out FILE.html``
    with that JSON as input; its output on stderr when ``json_on_stdout``), else None. Use
    ``python -m nandlab`` or `nandlab._cli.main`, which does that part.

    The GIL is released for the whole command. It writes to file descriptors 1 and 2 directly,
    not through ``sys.stdout``/``sys.stderr`` (flush those first). This build has no ``serve``
    subcommand (it would link OpenSSL); ``sweep`` and ``report`` are refused (`nandlab._cli.main`
    runs them in Python).
    """

def version() -> str:
    """The version recorded in every result: `BUILD_VERSION`."""
