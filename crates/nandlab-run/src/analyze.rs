//! `nandlab analyze`: a trace file through `nandlab_trace::analyze` in one streaming pass,
//! with the wall-clock figures (trace bytes per second) and the JSON every front end prints.
//! The definitions of the figures are in `nandlab_trace::analyze`'s module doc.

use std::path::{Path, PathBuf};
use std::time::Instant;

use nandlab_trace::analyze::{Analysis, AnalyzeOptions, Analyzer, Log2Histogram};
use nandlab_trace::{TraceError, TraceFormat, TraceOptions};
use serde_json::{json, Value};

/// One analysed trace.
#[derive(Clone, Debug)]
pub struct AnalyzeReport {
    pub path: PathBuf,
    pub format: TraceFormat,
    pub device: Option<u64>,
    pub analysis: Analysis,
    /// Size of the file on disk (compressed size for a gzipped trace).
    pub file_bytes: u64,
    /// Whether the file is gzip-compressed.
    pub gzip: bool,
    pub wall_seconds: f64,
}

/// Analyses the trace at `path` (`format` by name, detected when `None`; only records of
/// `device` when given).
pub fn analyze_trace(
    path: &Path,
    format: Option<&str>,
    device: Option<u64>,
    options: &AnalyzeOptions,
) -> Result<AnalyzeReport, TraceError> {
    analyze_trace_with_progress(path, format, device, options, &mut |_| {})
}

/// Records between two `progress` calls of `analyze_trace_with_progress`.
pub const PROGRESS_EVERY: u64 = 1 << 20;

/// `analyze_trace`, calling `progress(records_done)` every `PROGRESS_EVERY` records.
pub fn analyze_trace_with_progress(
    path: &Path,
    format: Option<&str>,
    device: Option<u64>,
    options: &AnalyzeOptions,
    progress: &mut dyn FnMut(u64),
) -> Result<AnalyzeReport, TraceError> {
    let format = match format {
        None => None,
        Some(name) => Some(TraceFormat::from_name(name).ok_or_else(|| TraceError::Config {
            message: format!(
                "unknown trace format {name:?} (one of: {})",
                TraceFormat::ALL.iter().map(|f| f.name()).collect::<Vec<_>>().join(", ")
            ),
        })?),
    };
    let started = Instant::now();
    let reader = nandlab_trace::open(path, &TraceOptions { format, device })?;
    let format = reader.format();
    let gzip = reader.is_gzip();
    let mut analyzer = Analyzer::new(options);
    for (i, record) in reader.enumerate() {
        analyzer.record(&record?);
        if (i as u64 + 1).is_multiple_of(PROGRESS_EVERY) {
            progress(i as u64 + 1);
        }
    }
    let analysis = analyzer.finish();
    let wall_seconds = started.elapsed().as_secs_f64();
    if analysis.requests == 0 {
        return Err(TraceError::Empty { path: path.to_path_buf() });
    }
    let file_bytes = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    Ok(AnalyzeReport {
        path: path.to_path_buf(),
        format,
        device,
        analysis,
        file_bytes,
        gzip,
        wall_seconds,
    })
}

fn histogram(h: &Log2Histogram) -> Value {
    Value::Array(
        h.counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &c)| json!([Log2Histogram::bucket_floor(i), c]))
            .collect(),
    )
}

impl AnalyzeReport {
    /// Trace file megabytes (10^6 B) per wall second.
    pub fn mb_per_s(&self) -> f64 {
        self.file_bytes as f64 / 1e6 / self.wall_seconds.max(1e-9)
    }

    /// The report as JSON: the figures under the names `nandlab analyze --json` documents.
    pub fn to_json_value(&self) -> Value {
        let a = &self.analysis;
        let (suite, reason) = a.suite();
        // Built in two parts: one `json!` this size exceeds the macro recursion limit.
        let samples = json!({
                "lba": {
                    "stride": a.lba_series.stride,
                    "columns": ["write_index", "device", "offset_bytes"],
                    "points": a.lba_series.points.iter()
                        .map(|p| json!([p.write_index, p.device, p.offset_bytes]))
                        .collect::<Vec<_>>(),
                },
                "life_cycle": {
                    "stride": a.life_series.stride,
                    "columns": ["offset_bytes", "life_ns"],
                    "points": a.life_series.points.iter()
                        .map(|p| json!([p.offset_bytes, p.life_ns])).collect::<Vec<_>>(),
                },
                "seek": {
                    "stride": a.seek_series.stride,
                    "columns": ["offset_bytes", "seek_bytes"],
                    "points": a.seek_series.points.iter()
                        .map(|p| json!([p.offset_bytes, p.seek_bytes])).collect::<Vec<_>>(),
                },
        });
        let mut v = json!({
            "version": nandlab_version::VERSION_STRING,
            "trace": self.path.display().to_string(),
            "format": self.format.name(),
            "device": self.device,
            "requests": a.requests,
            "read_requests": a.read_requests,
            "write_requests": a.write_requests,
            "trim_requests": a.trim_requests,
            "flush_requests": a.flush_requests,
            "read_bytes": a.read_bytes,
            "write_bytes": a.write_bytes,
            "data_transferred_bytes": a.data_transferred_bytes(),
            "rewrite_bytes": a.rewrite_bytes,
            "rewrite_ratio": a.rewrite_ratio(),
            "sequential_ratio": a.sequential_ratio(),
            "sequential_window": a.sequential_window,
            "alignment_ratio": a.alignment_ratio(),
            "alignment_bytes": a.alignment_bytes,
            "request_bytes_typical": a.request_bytes_typical(),
            "write_lengths_top": a.write_lengths_top.iter()
                .map(|&(b, c)| json!({"bytes": b, "count": c})).collect::<Vec<_>>(),
            "written_pages": a.written_pages,
            "footprint_bytes": a.written_pages * nandlab_trace::analyze::PAGE_BYTES,
            "write_min_offset_bytes": a.write_min_offset_bytes,
            "write_max_end_bytes": a.write_max_end_bytes,
            "duration_ns": a.duration_ns,
            "short_rewrite_ratio": a.short_rewrite_ratio(),
            "short_rewrite_share": a.short_rewrite_share(),
            "buffer_window_ns": a.buffer_window_ns,
            "life_cycle_ns_histogram": histogram(&a.life_cycle_ns),
            "seek_bytes_histogram": histogram(&a.seek_bytes),
            "suite": suite.name(),
            "suite_reason": reason,
            "file_bytes": self.file_bytes,
            "gzip": self.gzip,
            "wall_seconds": self.wall_seconds,
            "mb_per_s": self.mb_per_s(),
        });
        v["samples"] = samples;
        v
    }
}
