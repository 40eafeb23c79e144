//! `workload.kind = "trace"`: a block trace replayed from its file (any supported format,
//! optionally gzip-compressed) by the runner (`nandlab-run`), which reads it, fits its
//! addresses onto the device and times it. Here: the trace's keys, typed and checked.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{Generator, Plan, WorkloadKindEntry};
use crate::error::ConfigError;
use crate::flash::Geometry;
use crate::spec::{check, one_of, Param, Params, Value};
use crate::workload::spec::WorkloadConfig;
use crate::workload::WorkloadSpec;

pub(super) const ENTRY: WorkloadKindEntry = WorkloadKindEntry {
    name: "trace",
    params: &[
        Param::new("workload", "path"),
        Param::new("workload", "format"),
        Param::new("workload", "device"),
        Param::shown("workload", "fit", || Value::from("auto")),
        Param::new("workload", "compact_chunk_bytes"),
        Param::shown("workload", "trace_timing", || Value::from("trace")),
    ],
    replayed: true,
    // `passes` and `warmup_passes` count whole replays of the trace.
    default_passes: (0.0, 1.0),
    resolve,
};

/// The trace keys of `[workload]`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TraceKeys {
    /// `workload.path`: the trace file.
    pub path: Option<String>,
    /// `workload.format`: the trace format; unset = detected from the content.
    pub format: Option<String>,
    /// `workload.device`: keep only this device / volume / LUN of the trace.
    pub device: Option<u64>,
    /// `workload.fit`: how trace addresses are fitted onto the device: `auto`, `error`, `fold`,
    /// `compact`.
    pub fit: String,
    /// `workload.compact_chunk_bytes`: chunk size of `compact` fitting. Default: one erase
    /// block.
    pub compact_chunk_bytes: Option<u64>,
    /// `workload.trace_timing`: `trace` (open loop at the trace's timestamps) or `closed`.
    pub trace_timing: String,
}

impl TraceKeys {
    /// The trace keys of a configuration as given (before it resolves: the runner sizes the
    /// device from the trace first), defaults filled, types checked.
    pub fn of(w: &WorkloadConfig) -> Result<Self, ConfigError> {
        let mut tables = crate::spec::Tables::default();
        tables.insert("workload", w.extra.clone());
        Self::read(&mut tables.params("workload"))
    }

    fn read(params: &mut Params<'_>) -> Result<Self, ConfigError> {
        Ok(Self {
            path: params.get("path")?,
            format: params.get("format")?,
            device: params.get("device")?,
            fit: params.or("fit", "auto".to_string())?,
            compact_chunk_bytes: params.get("compact_chunk_bytes")?,
            trace_timing: params.or("trace_timing", "trace".to_string())?,
        })
    }

    /// Records the keys the runner decided (`fit`, `compact_chunk_bytes`) in `w`.
    pub fn store(&self, w: &mut WorkloadConfig) {
        let value = |v: Value| (!v.is_null()).then_some(v);
        let mut put = |key: &str, v: Value| {
            w.extra.insert(key.to_string(), value(v));
        };
        put("fit", Value::from(self.fit.clone()));
        put("compact_chunk_bytes", self.compact_chunk_bytes.map_or(Value::Null, Value::from));
    }

    /// Arrivals at the trace's timestamps (open loop) rather than closed-loop.
    #[must_use]
    pub fn timed(&self) -> bool {
        self.trace_timing == "trace"
    }
}

fn resolve(
    w: &mut WorkloadConfig,
    params: &mut Params<'_>,
    g: &Geometry,
) -> Result<Arc<dyn Plan>, ConfigError> {
    let keys = TraceKeys::read(params)?;
    one_of(&keys.fit, "workload.fit", &["auto", "error", "fold", "compact"])?;
    one_of(&keys.trace_timing, "workload.trace_timing", &["trace", "closed"])?;
    let (warmup, passes) = (w.warmup_passes.unwrap_or(0.0), w.passes.unwrap_or(1.0));
    check(
        warmup.fract() == 0.0 && passes.fract() == 0.0,
        "workload.passes",
        "for trace workloads, passes and warmup_passes count whole replays of the trace",
    )?;
    check(keys.path.is_some(), "workload.path", "a trace workload needs a trace file path")?;
    if let Some(c) = keys.compact_chunk_bytes {
        check(
            c >= g.page_size_bytes && c % g.page_size_bytes == 0,
            "workload.compact_chunk_bytes",
            "must be a positive multiple of the page size",
        )?;
    }
    check(
        w.queue_depth == 1 || !keys.timed(),
        "workload.queue_depth",
        "applies to closed-loop arrivals only: open-loop arrivals (poisson, fixed, a trace's \
         timestamps) keep their times, however many requests that leaves in flight; use \
         workload.arrival = \"closed\" (traces: workload.trace_timing = \"closed\")",
    )?;
    Ok(Arc::new(TracePlan { keys }))
}

/// A trace replay: its keys (the runner builds the replay).
#[derive(Clone, Debug)]
pub struct TracePlan {
    pub keys: TraceKeys,
}

impl Plan for TracePlan {
    fn generator(&self, _: &WorkloadSpec) -> Result<Box<dyn Generator>, ConfigError> {
        Err(ConfigError::new(
            "workload.kind",
            "a trace workload is replayed from its file, not generated",
        ))
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
