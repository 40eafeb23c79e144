//! Per-Byte-Response replay (benchmarks paper §3 and §5, docs/PAPERS.md; docs/ALGORITHMS.md §8): a
//! trace's writes issued one at a time against a target (QD 1, synchronous, device level — the
//! paper's `WriteFile` replay), and for each its PBR = response time ÷ request bytes. Reads, trims
//! and flushes in the trace are skipped (the paper replays writes); timestamps are ignored (each
//! write is issued when the previous one completes). Addresses past the target's capacity wrap
//! around it (offset modulo the capacity, sector aligned; a piece that would pass the end is moved
//! back to end there): their count is reported.

use std::io::Write;
use std::path::{Path, PathBuf};

use nandlab_trace::{TraceFormat, TraceOp, TraceOptions};

use crate::target::Target;

/// One replayed write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PbrPoint {
    /// Index among the replayed writes (the paper's request index).
    pub index: u64,
    /// Where it went on the target (after wrapping).
    pub offset_bytes: u64,
    pub length_bytes: u64,
    pub response_ns: u64,
}

impl PbrPoint {
    /// Response time ÷ request bytes, in ns per byte (the paper's s/B × 10^9).
    #[must_use]
    pub fn pbr_ns_per_byte(&self) -> f64 {
        self.response_ns as f64 / self.length_bytes as f64
    }
}

/// What to replay.
#[derive(Clone, Debug, Default)]
pub struct PbrOptions {
    /// Trace format name (`None`: detected).
    pub format: Option<String>,
    /// Keep one device's records.
    pub device: Option<u64>,
    /// Replay at most this many writes.
    pub max_writes: Option<u64>,
}

/// A PBR replay's result.
#[derive(Clone, Debug)]
pub struct PbrResult {
    pub target: String,
    pub trace: PathBuf,
    /// Response times are simulated (the `sim:` target) rather than wall clock.
    pub simulated: bool,
    pub capacity_bytes: u64,
    pub points: Vec<PbrPoint>,
    /// Writes whose address wrapped around the capacity.
    pub wrapped: u64,
    /// Trace records that were not writes.
    pub skipped: u64,
    /// The simulated device's resolved config (`sim:` targets), for reproducing the result.
    pub config: Option<serde_json::Value>,
}

/// Replays `trace`'s writes against `target`; `progress(writes_done)` every 65,536 writes.
pub fn replay(
    target: &mut dyn Target,
    trace: &Path,
    options: &PbrOptions,
    progress: &mut dyn FnMut(u64),
) -> Result<PbrResult, String> {
    let format = match &options.format {
        None => None,
        Some(name) => Some(TraceFormat::from_name(name).ok_or_else(|| {
            format!(
                "unknown trace format {name:?} (one of: {})",
                TraceFormat::ALL.iter().map(|f| f.name()).collect::<Vec<_>>().join(", ")
            )
        })?),
    };
    let reader = nandlab_trace::open(trace, &TraceOptions { format, device: options.device })
        .map_err(|e| e.to_string())?;
    let records = reader.map(|r| r.map_err(|e| e.to_string()));
    replay_records(target, records, trace, options.max_writes, progress)
}

/// `replay` over records already read (`trace` names them in errors and the result).
pub fn replay_records(
    target: &mut dyn Target,
    records: impl Iterator<Item = Result<nandlab_trace::TraceRecord, String>>,
    trace: &Path,
    max_writes: Option<u64>,
    progress: &mut dyn FnMut(u64),
) -> Result<PbrResult, String> {
    let capacity = target.capacity_bytes();
    let mut result = PbrResult {
        target: target.describe(),
        trace: trace.to_path_buf(),
        simulated: target.simulated(),
        capacity_bytes: capacity,
        points: Vec::new(),
        wrapped: 0,
        skipped: 0,
        config: target.config(),
    };
    for record in records {
        let r = record?;
        if r.op != TraceOp::Write || r.length_bytes == 0 {
            result.skipped += 1;
            continue;
        }
        if max_writes.is_some_and(|m| result.points.len() as u64 >= m) {
            break;
        }
        let len = r.length_bytes.min(capacity);
        let mut offset = r.offset_bytes;
        if offset + len > capacity {
            result.wrapped += 1;
            offset = (offset % capacity) / 512 * 512;
            if offset + len > capacity {
                offset = (capacity - len) / 512 * 512;
            }
        }
        let response_ns = target
            .write(offset, len)
            .map_err(|e| format!("{}:{}: {e}", trace.display(), r.line))?;
        let index = result.points.len() as u64;
        result.points.push(PbrPoint {
            index,
            offset_bytes: offset,
            length_bytes: len,
            response_ns,
        });
        if (index + 1).is_multiple_of(1 << 16) {
            progress(index + 1);
        }
    }
    if result.points.is_empty() {
        return Err(format!("{}: no writes to replay", trace.display()));
    }
    Ok(result)
}

impl PbrResult {
    /// Writes the points as CSV (`index,offset_bytes,length_bytes,response_ns,pbr_ns_per_byte`).
    pub fn write_csv(&self, path: &Path) -> Result<(), String> {
        let err = |e: std::io::Error| format!("{}: {e}", path.display());
        let mut w = std::io::BufWriter::new(std::fs::File::create(path).map_err(err)?);
        writeln!(w, "index,offset_bytes,length_bytes,response_ns,pbr_ns_per_byte").map_err(err)?;
        for p in &self.points {
            writeln!(
                w,
                "{},{},{},{},{:.6}",
                p.index,
                p.offset_bytes,
                p.length_bytes,
                p.response_ns,
                p.pbr_ns_per_byte()
            )
            .map_err(err)?;
        }
        w.flush().map_err(err)
    }
}
