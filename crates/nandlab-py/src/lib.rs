//! `nandlab._native`: the private native module under the `nandlab` Python package.
//!
//! Thin by design (STYLE §6.9): it converts Python arguments into a `nandlab_core::Config`,
//! runs it through `nandlab-run` with the GIL released, and maps each runner error onto one
//! exception of the tree `NandlabError` > `ConfigError` | `TraceError` | `RequestError`.
//! Results cross the boundary as JSON text; dict normalisation, result objects, sweeps and plots
//! live in `python/nandlab`. `cli` runs the whole command line (`nandlab-cli`, built without
//! `serve`) for `python -m nandlab`. The hand-written stub `python/nandlab/_native.pyi` documents every
//! name defined here (a test checks that they match).

use std::path::PathBuf;

use nandlab_core::{apply_overrides, Config};
use nandlab_run::{load_config, prepare, Error};
use nandlab_trace::TraceError as TraceFailure;
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use serde::Serialize;

/// Large simulator tables get transparent huge pages (fewer TLB misses on random lookups).
#[global_allocator]
static ALLOCATOR: nandlab_prefetch::HugePageAlloc = nandlab_prefetch::HugePageAlloc;

// The exceptions are named after the public package that re-exports them, so that they print
// and pickle as `nandlab.ConfigError` etc.
create_exception!(nandlab, NandlabError, PyException, "Base class of every nandlab error.");
create_exception!(
    nandlab,
    ConfigError,
    NandlabError,
    "A configuration that cannot be run. `key` is the dotted config key at fault (None when \
     the whole file or text is at fault)."
);
create_exception!(
    nandlab,
    TraceError,
    NandlabError,
    "A trace file that cannot be read or fitted. `path` names the file and `line` the 1-based \
     line (None when no line is at fault)."
);
create_exception!(
    nandlab,
    RequestError,
    NandlabError,
    "A host request the simulated device cannot accept. `index` is the request's position in \
     the run; `kind` says why (\"out-of-range\", \"time-went-backwards\", \"payload-length\", \
     \"media\", \"worn-out\", \"time-overflow\"); `io_kind` is the I/O error kind of a media \
     failure (e.g. \"StorageFull\", \"PermissionDenied\", \"Other\"), None for the other kinds."
);

/// Sets attribute `name` of the exception `err` carries and returns `err`.
fn with_attr<'py, V: IntoPyObject<'py>>(
    py: Python<'py>,
    err: PyErr,
    name: &str,
    value: V,
) -> PyErr {
    // Setting an attribute on a fresh exception instance cannot fail in practice; if it did,
    // the message still carries the same information.
    let _ = err.value(py).setattr(name, value);
    err
}

/// Maps a runner error onto the exception tree, one variant to one exception type.
fn to_py_err(py: Python<'_>, error: &Error) -> PyErr {
    let message = error.to_string();
    match error {
        Error::Config(e) => {
            let key = (!e.key.is_empty()).then(|| e.key.clone());
            with_attr(py, ConfigError::new_err(message), "key", key)
        }
        Error::ConfigFile { .. } => {
            with_attr(py, ConfigError::new_err(message), "key", None::<String>)
        }
        Error::Trace(e) => {
            let (path, line) = trace_location(e);
            let path = path.map(|p| p.to_string_lossy().into_owned());
            let err = with_attr(py, TraceError::new_err(message), "path", path);
            with_attr(py, err, "line", line)
        }
        Error::Request { index, error } => {
            let err = with_attr(py, RequestError::new_err(message), "index", *index);
            let err = with_attr(py, err, "kind", error.kind_name());
            with_attr(py, err, "io_kind", request_io_kind(error))
        }
        // `Error` is non-exhaustive: a variant added later is still a nandlab error.
        _ => NandlabError::new_err(message),
    }
}

/// The I/O error kind of a media failure, as Rust names it (`RequestError.io_kind`).
fn request_io_kind(error: &nandlab_core::RequestError) -> Option<String> {
    match error {
        nandlab_core::RequestError::Media(e) => Some(e.kind_name()),
        _ => None,
    }
}

fn trace_location(e: &TraceFailure) -> (Option<&PathBuf>, Option<u64>) {
    match e {
        TraceFailure::Parse { path, line, .. } | TraceFailure::OutOfRange { path, line, .. } => {
            (Some(path), Some(*line))
        }
        TraceFailure::Io { path, .. }
        | TraceFailure::UnknownFormat { path, .. }
        | TraceFailure::Empty { path } => (Some(path), None),
        _ => (None, None),
    }
}

/// Where a configuration comes from: JSON text (a Python dict), a TOML file, or nothing (every
/// default); `key=value` overrides go on top in every case.
struct Source {
    json: Option<String>,
    path: Option<PathBuf>,
    overrides: Vec<String>,
}

impl Source {
    fn new(json: Option<String>, path: Option<PathBuf>, overrides: Vec<String>) -> PyResult<Self> {
        if json.is_some() && path.is_some() {
            return Err(PyValueError::new_err("give config_json or config_path, not both"));
        }
        Ok(Self { json, path, overrides })
    }

    fn load(&self) -> Result<Config, Error> {
        match &self.json {
            Some(text) => {
                let mut value = Config::from_json(text)?.to_value();
                apply_overrides(&mut value, &self.overrides)?;
                Ok(Config::from_value(value)?)
            }
            None => load_config(self.path.as_deref(), &self.overrides),
        }
    }
}

/// Runs one configuration to the end and returns the report as JSON.
///
/// The GIL is released for the whole load, prepare and run. `progress(done, expected)` is
/// called (with the GIL held briefly) every 65,536 requests; the runner cannot stop mid-run, so
/// an exception raised by the callback is kept, further calls are skipped, and it is raised
/// when the run ends.
#[pyfunction]
#[pyo3(signature = (config_json=None, config_path=None, overrides=Vec::new(), progress=None))]
fn run(
    py: Python<'_>,
    config_json: Option<String>,
    config_path: Option<PathBuf>,
    overrides: Vec<String>,
    progress: Option<PyObject>,
) -> PyResult<String> {
    let source = Source::new(config_json, config_path, overrides)?;
    let mut callback_error: Option<PyErr> = None;
    let outcome = py.allow_threads(|| {
        let config = source.load()?;
        let prepared = prepare(&config)?;
        let mut report_progress = |done: u64, expected: u64| {
            let Some(callback) = &progress else { return };
            if callback_error.is_some() {
                return;
            }
            Python::with_gil(|py| {
                if let Err(e) = callback.call1(py, (done, expected)) {
                    callback_error = Some(e);
                }
            });
        };
        nandlab_run::run(&prepared, &mut report_progress)
    });
    let report = outcome.map_err(|e| to_py_err(py, &e))?;
    if let Some(e) = callback_error {
        return Err(e);
    }
    Ok(report.to_json())
}

/// The resolved configuration (every default filled in) as JSON, plus a `derived` object with
/// the figures computed from it.
#[pyfunction]
#[pyo3(signature = (config_json=None, config_path=None, overrides=Vec::new()))]
fn resolve(
    py: Python<'_>,
    config_json: Option<String>,
    config_path: Option<PathBuf>,
    overrides: Vec<String>,
) -> PyResult<String> {
    let source = Source::new(config_json, config_path, overrides)?;
    let prepared = py.allow_threads(|| prepare(&source.load()?)).map_err(|e| to_py_err(py, &e))?;
    let r = &prepared.resolved;
    let resolved = ResolvedJson {
        config: &r.config,
        derived: Derived {
            physical_pages: r.geometry.physical_pages(),
            logical_pages: r.geometry.logical_pages,
            utilization: r.geometry.utilization(),
            regions: r.regions,
            gc_free_blocks_min: r.gc_free_blocks_min,
        },
    };
    serde_json::to_string(&resolved)
        .map_err(|e| NandlabError::new_err(format!("cannot serialize the config: {e}")))
}

/// What `resolve` returns: the config's tables, in their declared order, then `derived`.
#[derive(Serialize)]
struct ResolvedJson<'a> {
    #[serde(flatten)]
    config: &'a Config,
    derived: Derived,
}

#[derive(Serialize)]
struct Derived {
    physical_pages: u64,
    logical_pages: u64,
    utilization: f64,
    regions: u32,
    gc_free_blocks_min: u32,
}

/// Every device preset (geometry and timing) as a JSON list, the default first.
#[pyfunction]
fn presets() -> PyResult<String> {
    serde_json::to_string(nandlab_core::PRESETS)
        .map_err(|e| NandlabError::new_err(format!("cannot serialize the presets: {e}")))
}

/// `(n0, w_merge, equilibrium_p, w_mig, w)`.
type RecyclingCosts = (u64, f64, f64, Vec<f64>, Vec<f64>);

/// The block-recycling paper's cost model (docs/ALGORITHMS.md §4), the same code the `optimal`
/// recycling policy runs: returns `(n0, w_merge, equilibrium_p, w_mig, w)` where `w_mig[p]` is the
/// migration cost per available page for p = 0..N_p−1 and `w[n]` the migration/merge sequence cost
/// per available page for n = 0..=n_max (infinite values where no page is freed).
#[pyfunction]
#[pyo3(signature = (alpha, pages_per_block, erase_cost, copy_cost, n_max))]
fn recycling_costs(
    alpha: f64,
    pages_per_block: u32,
    erase_cost: f64,
    copy_cost: f64,
    n_max: u64,
) -> PyResult<RecyclingCosts> {
    use nandlab_core::CostModel;
    let bad = |what: &str| Err(PyValueError::new_err(what.to_string()));
    if pages_per_block < 1 {
        return bad("pages_per_block must be at least 1");
    }
    if !(alpha.is_finite() && alpha >= 0.0) {
        return bad("alpha must be a finite number >= 0");
    }
    if !(erase_cost.is_finite() && erase_cost >= 0.0 && copy_cost.is_finite() && copy_cost >= 0.0) {
        return bad("erase_cost and copy_cost must be finite numbers >= 0");
    }
    if n_max > 10_000_000 {
        return bad("n_max must be at most 10,000,000");
    }
    let m = CostModel::new(erase_cost, copy_cost, pages_per_block);
    let w_mig = (0..pages_per_block).map(|p| m.w_mig(f64::from(p))).collect();
    let w = (0..=n_max).map(|n| m.w_sequence(alpha, n as f64)).collect();
    Ok((m.optimal_migrations(alpha), m.w_merge(), m.equilibrium_p(), w_mig, w))
}

/// The version recorded in every result: `nandlab X.Y.Z (COMMIT)` (`BUILD_VERSION`). The benchmarks
/// paper's workload characterisation of a trace file (`nandlab analyze`), as JSON text. The GIL is
/// released during the pass.
#[pyfunction]
#[pyo3(signature = (path, format=None, device=None, sequential_window=10, alignment_bytes=4096, sample_points=10_000, buffer_window_ns=1_000_000_000))]
#[allow(clippy::too_many_arguments)]
fn analyze(
    py: Python<'_>,
    path: PathBuf,
    format: Option<String>,
    device: Option<u64>,
    sequential_window: usize,
    alignment_bytes: u64,
    sample_points: usize,
    buffer_window_ns: u64,
) -> PyResult<String> {
    if alignment_bytes == 0 {
        return Err(PyValueError::new_err("alignment_bytes must be at least 1"));
    }
    let options = nandlab_trace::analyze::AnalyzeOptions {
        sequential_window,
        alignment_bytes,
        sample_points,
        buffer_window_ns,
    };
    let report = py
        .allow_threads(|| {
            nandlab_run::analyze::analyze_trace(&path, format.as_deref(), device, &options)
        })
        .map_err(|e| to_py_err(py, &Error::Trace(e)))?;
    serde_json::to_string(&report.to_json_value())
        .map_err(|e| NandlabError::new_err(format!("cannot serialize the analysis: {e}")))
}

/// Writes benchmark suite `name`'s trace (MSR CSV) to `out` with `overrides` (`key=value`)
/// and returns its analysis as JSON text (`nandlab suite --json`). The GIL is released.
#[pyfunction]
fn suite(py: Python<'_>, name: String, out: PathBuf, overrides: Vec<String>) -> PyResult<String> {
    let params =
        nandlab_run::suite::suite_params(&name, &overrides).map_err(PyValueError::new_err)?;
    let report = py
        .allow_threads(|| nandlab_run::suite::write_suite(params, &out))
        .map_err(NandlabError::new_err)?;
    serde_json::to_string(&report.to_json_value())
        .map_err(|e| NandlabError::new_err(format!("cannot serialize the analysis: {e}")))
}

/// The PBR points of a replay as columns: offsets, lengths and response times.
type PbrColumns = (Vec<u64>, Vec<u64>, Vec<u64>);

/// The benchmarks paper's Per-Byte-Response replay (`nandlab pbr`): the summary (with the
/// diagnosis) as JSON text and the points as columns. The GIL is released during the replay.
#[pyfunction]
#[pyo3(signature = (target, trace, overrides=Vec::new(), format=None, device=None, max_writes=None, destroy_data=false))]
#[allow(clippy::too_many_arguments)]
fn pbr(
    py: Python<'_>,
    target: String,
    trace: PathBuf,
    overrides: Vec<String>,
    format: Option<String>,
    device: Option<u64>,
    max_writes: Option<u64>,
    destroy_data: bool,
) -> PyResult<(String, PbrColumns)> {
    let spec =
        nandlab_probe::TargetSpec::parse(&target, &overrides).map_err(PyValueError::new_err)?;
    let result = py
        .allow_threads(|| {
            let mut t = nandlab_probe::open_target(&spec, destroy_data)?;
            let options = nandlab_probe::pbr::PbrOptions { format, device, max_writes };
            nandlab_probe::pbr::replay(t.as_mut(), &trace, &options, &mut |_| {})
        })
        .map_err(NandlabError::new_err)?;
    let summary = serde_json::to_string(&result.summary())
        .map_err(|e| NandlabError::new_err(format!("cannot serialize the summary: {e}")))?;
    let p = &result.points;
    let columns = (
        p.iter().map(|x| x.offset_bytes).collect(),
        p.iter().map(|x| x.length_bytes).collect(),
        p.iter().map(|x| x.response_ns).collect(),
    );
    Ok((summary, columns))
}

/// Black-box geometry probes (`nandlab probe`): the report as JSON text. `only` selects among
/// `page`, `block`, `zone`, `parallel` (empty: all). The GIL is released.
#[pyfunction]
#[pyo3(signature = (target, overrides=Vec::new(), only=Vec::new(), repeats=7, destroy_data=false))]
fn probe(
    py: Python<'_>,
    target: String,
    overrides: Vec<String>,
    only: Vec<String>,
    repeats: usize,
    destroy_data: bool,
) -> PyResult<String> {
    let spec =
        nandlab_probe::TargetSpec::parse(&target, &overrides).map_err(PyValueError::new_err)?;
    let mut options =
        nandlab_probe::probe::ProbeOptions { repeats: repeats.max(1), ..Default::default() };
    if !only.is_empty() {
        for name in &only {
            if !["page", "block", "zone", "parallel"].contains(&name.as_str()) {
                return Err(PyValueError::new_err(format!(
                    "only takes page, block, zone, parallel, not {name:?}"
                )));
            }
        }
        let has = |n: &str| only.iter().any(|o| o == n);
        options.page = has("page");
        options.block = has("block");
        options.zone = has("zone");
        options.parallel = has("parallel");
    }
    let report = py
        .allow_threads(|| {
            let mut t = nandlab_probe::open_target(&spec, destroy_data)?;
            nandlab_probe::probe::probe(t.as_mut(), &options, &mut |_| {})
        })
        .map_err(NandlabError::new_err)?;
    serde_json::to_string(&report)
        .map_err(|e| NandlabError::new_err(format!("cannot serialize the probe report: {e}")))
}

/// The HTML report `run --report` leaves to the caller: (result JSON, HTML path, whether the
/// run's JSON went to standard output).
type ReportJob = (String, String, bool);

/// The `nandlab` command line (`python -m nandlab`, the `nandlab` console script): runs `argv`
/// (the arguments after the program name) as the Rust binary would, with the GIL released,
/// and returns the exit status and, after `run --report FILE.html`, the report for the caller
/// (`nandlab._cli`) to write. It writes to the process's file descriptors 1 and 2, not to
/// `sys.stdout`; the build has no `serve` (no OpenSSL in the wheel).
#[pyfunction]
fn cli(py: Python<'_>, argv: Vec<String>) -> (u8, Option<ReportJob>) {
    let (status, job) = py.allow_threads(|| nandlab_cli::main_in_python(&argv));
    let job = job.map(|j| (j.json, j.html.to_string_lossy().into_owned(), j.json_on_stdout));
    (status, job)
}

#[pyfunction]
fn version() -> &'static str {
    nandlab_version::VERSION_STRING
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(analyze, m)?)?;
    m.add_function(wrap_pyfunction!(suite, m)?)?;
    m.add_function(wrap_pyfunction!(pbr, m)?)?;
    m.add_function(wrap_pyfunction!(probe, m)?)?;
    m.add_function(wrap_pyfunction!(resolve, m)?)?;
    m.add_function(wrap_pyfunction!(presets, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(cli, m)?)?;
    m.add_function(wrap_pyfunction!(recycling_costs, m)?)?;
    m.add("NandlabError", py.get_type::<NandlabError>())?;
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("TraceError", py.get_type::<TraceError>())?;
    m.add("RequestError", py.get_type::<RequestError>())?;
    // `__version__` stays the bare crate version (PEP 440, what pip knows); the full string
    // with the commit is `BUILD_VERSION`.
    m.add("__version__", nandlab_core::VERSION)?;
    m.add("BUILD_VERSION", nandlab_version::VERSION_STRING)?;
    Ok(())
}
