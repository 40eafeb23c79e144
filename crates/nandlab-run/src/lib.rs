//! nandlab-run: one configuration, end to end. Loads TOML files and `key=value` overrides,
//! sizes the device from a trace when no size is given, builds the workload (synthetic, or a
//! trace replay fitted onto the device), pre-computes the oracle placement's future, runs the
//! core's loop, and adds the wall-clock figures the pure core cannot measure.
//!
//! The CLI and the Python bindings are thin layers over `load_config`, `prepare` and `run`.

pub mod analyze;
pub mod memory;
pub mod suite;
mod trace_workload;

use std::path::{Path, PathBuf};
use std::time::Instant;

use nandlab_core::next_write_distances;
use nandlab_core::Repeated;
use nandlab_core::{
    apply_overrides, Config, ConfigError, Device, Metrics, RequestError, RequestKind, Resolved,
    WorkItem,
};
use nandlab_core::{Event, RunError, RunOptions};
use nandlab_trace::TraceError;
use serde::Serialize;

pub use trace_workload::TraceInfo;

/// Everything that can stop a run, each naming what the user should fix.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    Config(ConfigError),
    /// A config file could not be read.
    ConfigFile {
        path: PathBuf,
        message: String,
    },
    Trace(TraceError),
    Request {
        index: u64,
        error: RequestError,
    },
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Config(e) => write!(f, "{e}"),
            Self::ConfigFile { path, message } => write!(f, "{}: {message}", path.display()),
            Self::Trace(e) => write!(f, "{e}"),
            Self::Request { index, error } => write!(f, "request #{index}: {error}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<ConfigError> for Error {
    fn from(e: ConfigError) -> Self {
        Self::Config(e)
    }
}

impl From<TraceError> for Error {
    fn from(e: TraceError) -> Self {
        Self::Trace(e)
    }
}

/// A run that stopped early: the workload's own error (a trace's, boxed so that the run loop's
/// items stay small; a generated workload has none) or the request the device refused.
impl<E> From<RunError<E>> for Error
where
    Error: From<E>,
{
    fn from(e: RunError<E>) -> Self {
        match e {
            RunError::Workload(w) => w.into(),
            RunError::Request { index, error } => Self::Request { index, error },
        }
    }
}

impl From<Box<TraceError>> for Error {
    fn from(e: Box<TraceError>) -> Self {
        Self::Trace(*e)
    }
}

impl From<std::convert::Infallible> for Error {
    fn from(never: std::convert::Infallible) -> Self {
        match never {}
    }
}

/// Largest configuration file read: a configuration is a TOML file of a few KiB, and the bound
/// keeps a path such as `/dev/zero`, a pipe that never ends or a huge file from taking the
/// machine's memory before the parser can say it is no configuration.
pub const MAX_CONFIG_BYTES: u64 = 16 << 20;

/// Reads a configuration file as UTF-8 text, at most `MAX_CONFIG_BYTES`.
fn read_config_text(p: &Path) -> Result<String, Error> {
    use std::io::Read;
    let err = |message: String| Error::ConfigFile { path: p.to_path_buf(), message };
    let file = std::fs::File::open(p).map_err(|e| err(e.to_string()))?;
    let mut bytes = Vec::new();
    file.take(MAX_CONFIG_BYTES + 1).read_to_end(&mut bytes).map_err(|e| err(e.to_string()))?;
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(err(format!(
            "longer than {MAX_CONFIG_BYTES} bytes (16 MiB), the most a configuration file may \
             hold: not a configuration (a TOML file of a few KiB)"
        )));
    }
    String::from_utf8(bytes).map_err(|e| {
        err(format!(
            "not UTF-8 text (byte {}): not a TOML configuration",
            e.utf8_error().valid_up_to()
        ))
    })
}

/// Reads a config file (if any) and applies overrides on top. Relative trace paths in a file
/// are resolved against the file's directory.
pub fn load_config(path: Option<&Path>, overrides: &[String]) -> Result<Config, Error> {
    let mut value = match path {
        Some(p) => {
            let text = read_config_text(p)?;
            let mut v: toml::Value = toml::from_str(&text).map_err(|e| Error::ConfigFile {
                path: p.to_path_buf(),
                message: nandlab_core::toml_error_message(&text, &e),
            })?;
            rebase_trace_path(&mut v, p);
            v
        }
        None => toml::Value::Table(toml::Table::new()),
    };
    apply_overrides(&mut value, overrides)?;
    Ok(Config::from_value(value)?)
}

fn rebase_trace_path(v: &mut toml::Value, config_path: &Path) {
    let Some(dir) = config_path.parent() else { return };
    if let Some(toml::Value::String(p)) = v.get_mut("workload").and_then(|w| w.get_mut("path")) {
        let candidate = Path::new(p.as_str());
        if candidate.is_relative() {
            *p = dir.join(candidate).to_string_lossy().into_owned();
        }
    }
}

/// A resolved configuration ready to run, with what was learned about its trace.
pub struct Prepared {
    pub resolved: Resolved,
    pub trace: Option<TraceInfo>,
}

/// Resolves the config. For trace workloads without a device size, sizes the device from the
/// trace first (see `trace_workload::size_device`).
pub fn prepare(config: &Config) -> Result<Prepared, Error> {
    if config.workload.replayed()? {
        let (sized, info) = trace_workload::prepare(config)?;
        let resolved = sized.resolve()?;
        memory::check(&resolved, false)?;
        return Ok(Prepared { resolved, trace: Some(info) });
    }
    let resolved = config.resolve()?;
    memory::check(&resolved, false)?;
    Ok(Prepared { resolved, trace: None })
}

/// One run's result: metrics plus what makes it reproducible.
#[derive(Clone, Debug, Serialize)]
pub struct RunReport {
    pub metrics: Metrics,
    /// The resolved configuration (every default filled in).
    pub config: Config,
    pub seed: u64,
    /// `nandlab X.Y.Z (COMMIT)`: the crate version and the git commit of the build, exactly
    /// what `nandlab --version` prints (`nandlab_version::VERSION_STRING`).
    pub version: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceInfo>,
}

impl RunReport {
    #[must_use]
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a report always serializes")
    }
}

/// Progress callback: (requests done, requests expected).
pub type Progress<'a> = &'a mut dyn FnMut(u64, u64);

/// Runs a prepared configuration to the end.
pub fn run(prepared: &Prepared, progress: Progress<'_>) -> Result<RunReport, Error> {
    let started = Instant::now();
    let r = &prepared.resolved;
    let future = if r.needs_future() { Some(oracle_future(prepared)?) } else { None };
    let mut device = Device::new(r, future)?;
    let options = RunOptions { progress_every_requests: 65_536, ..RunOptions::of(r) };
    let mut measured_from = started;
    let mut observer = |expected: u64, event: Event| match event {
        Event::Progress { requests } => progress(requests, expected),
        Event::MeasurementStarted => measured_from = Instant::now(),
    };
    let mut metrics = if let Some(info) = &prepared.trace {
        // Known once the trace's totals are counted (see `trace_workload`).
        let items = trace_workload::items(r, info)?.map(|item| item.map_err(Box::new));
        nandlab_core::run(&mut device, items, options, &mut |e| {
            observer(info.expected_requests(r), e);
        })?
    } else {
        let workload = Repeated::new(&r.workload)?;
        let expected = workload.estimated_requests();
        let items = workload.map(Ok::<_, std::convert::Infallible>);
        nandlab_core::run(&mut device, items, options, &mut |e| observer(expected, e))?
    };
    metrics.wall_seconds = started.elapsed().as_secs_f64();
    metrics.measured_wall_seconds = measured_from.elapsed().as_secs_f64();
    metrics.host_writes_per_wall_second = if metrics.measured_wall_seconds > 0.0 {
        metrics.host_write_pages as f64 / metrics.measured_wall_seconds
    } else {
        0.0
    };
    Ok(RunReport {
        metrics,
        config: r.config.clone(),
        seed: r.config.run.seed,
        version: nandlab_version::VERSION_STRING,
        trace: prepared.trace.as_ref().map(TraceInfo::completed).transpose()?,
    })
}

/// The oracle's look-ahead: generate the workload once, list every host page write in order,
/// and compute each write's distance to the next write of the same page.
fn oracle_future(prepared: &Prepared) -> Result<Vec<u32>, Error> {
    let r = &prepared.resolved;
    let page = r.geometry.page_size_bytes;
    let mut writes: Vec<nandlab_core::media::Lpn> = Vec::new();
    let mut push = |item: WorkItem| {
        if let WorkItem::Request(q) | WorkItem::Continue(q) = item {
            if q.kind == RequestKind::Write && q.length_bytes > 0 {
                let end = (q.offset_bytes + q.length_bytes).div_ceil(page);
                writes.extend((q.offset_bytes / page..end).map(nandlab_core::media::Lpn::from_u64));
            }
        }
    };
    if let Some(info) = &prepared.trace {
        for item in trace_workload::items(r, info)? {
            push(item?);
        }
    } else {
        Repeated::new(&r.workload)?.for_each(push);
    }
    Ok(next_write_distances(&writes, r.geometry.logical_pages))
}

/// Convenience for front ends: load, prepare and run.
pub fn run_config(config: &Config, progress: Progress<'_>) -> Result<RunReport, Error> {
    run(&prepare(config)?, progress)
}
