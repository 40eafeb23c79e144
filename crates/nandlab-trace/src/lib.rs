//! # nandlab-trace: real block I/O traces as a uniform record stream
//!
//! Reads block-level I/O traces in ten published formats (nine text, one binary) and yields
//! [`TraceRecord`]s: operation, byte offset, byte length, time in ns relative
//! to the first record, device number, and source line. Standalone: it does
//! not depend on the rest of nandlab.
//!
//! | name | format | time unit | addresses | device |
//! | --- | --- | --- | --- | --- |
//! | `msr` | MSR Cambridge CSV | FILETIME 100 ns ticks | bytes | DiskNumber |
//! | `spc` | SPC / UMass CSV | seconds (decimal) | LBA in 512 B sectors, size in bytes | ASU |
//! | `disksim` | DiskSim ASCII | milliseconds (decimal) | 512 B sectors | devno |
//! | `mqsim` | MQSim ASCII | nanoseconds (integer) | 512 B sectors | devno |
//! | `blkparse` | blkparse default text | seconds.nanoseconds | 512 B sectors | `maj << 20 \| min` |
//! | `tencent` | Tencent CBS CSV | Unix seconds | 512 B sectors | VolumeID |
//! | `systor` | SYSTOR'17 CSV (header) | Unix seconds.ns | bytes | LUN |
//! | `cloudphysics` | CloudPhysics VSCSI CSV (header) | microseconds | lbn in 512 B blocks, size in bytes | 0 |
//! | `alibaba` | Alibaba Cloud block trace CSV | microseconds | bytes | device_id |
//! | `srt` | HP SRT binary (`$$TR_IOREC`), as DiskSim reads it | seconds + microseconds | 512 B sectors, size in bytes | devno |
//!
//! Each `formats/*.rs` module documents its columns and rules; the crate's
//! `README.md` is the user-facing description.
//!
//! ## Common rules
//!
//! * **Compression**: a file whose first two bytes are the gzip magic is
//!   gunzipped transparently, whatever its name.
//! * **SRT** (`srt`, binary): a text header, then fixed-size big-endian
//!   records; a record's number stands in for the line number in records and
//!   errors (see `formats/srt.rs` for the layout assumed, DiskSim's).
//! * **Lines**: line numbers are 1-based in the decompressed text. Blank lines,
//!   lines starting with `#`, and the format's header line are skipped. Any
//!   other line that does not parse is a [`TraceError::Parse`] naming the file
//!   and line; the reader stops there (it never skips bad lines silently).
//! * **Time**: `time_ns` is relative to the first record yielded (after
//!   device selection), which has time 0, and never decreases: when the
//!   trace's clock goes backwards (Tencent's whole-second stamps, SYSTOR's
//!   out-of-order completions) the record gets the previous record's time.
//!   Decimal times are converted exactly, without floating point.
//! * **Zero-length requests**: reads, writes and trims of 0 bytes are skipped;
//!   flushes (which have offset 0 and length 0) are kept.
//! * **Device selection**: [`TraceOptions::device`] keeps only the records of
//!   one device/volume/LUN (for blkparse the packed `maj << 20 | min`).
//! * **Detection** ([`detect_format`]): from content, never from the file
//!   name; see the `detect` module. In short: a SYSTOR or CloudPhysics header
//!   selects that format; otherwise the format whose parser accepts all of the
//!   first 50 data lines wins; DiskSim and MQSim (same five columns) are told
//!   apart by the time column: **a `.` in any sampled time means DiskSim
//!   (ms), otherwise MQSim (ns)** (and a 5th column other than 0/1 means
//!   DiskSim). No fit, or several: [`TraceError::UnknownFormat`] asking the
//!   user to set `workload.format`.
//! * **Fitting** onto a smaller simulated device: [`AddressFit`] with
//!   [`FitMode`] `Error`, `Fold` or `Compact`; [`compact_footprint_bytes`]
//!   sizes a device for `Compact`.
//!
//! ```no_run
//! use nandlab_trace::{open, TraceOptions};
//! let reader = open("trace.csv.gz".as_ref(), &TraceOptions::default())?;
//! for rec in reader {
//!     let rec = rec?;
//!     println!("{:?} {} +{} @{}ns", rec.op, rec.offset_bytes, rec.length_bytes, rec.time_ns);
//! }
//! # Ok::<(), nandlab_trace::TraceError>(())
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod analyze;
mod background;
mod detect;
mod error;
mod fit;
mod formats;
mod input;
mod reader;
pub mod suites;

use std::collections::BTreeSet;
use std::fmt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

pub use background::BackgroundReader;
pub use detect::{detect_format, SAMPLE_LINES};
pub use error::TraceError;
pub use fit::{compact_footprint_bytes, AddressFit, FitMode};
pub use reader::{
    TraceReader, MAX_LINE_BYTES, MAX_REQUEST_BYTES, MAX_TRACE_SPAN_NS, MAX_TRIM_BYTES,
};

/// A supported trace format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TraceFormat {
    /// MSR Cambridge CSV.
    Msr,
    /// SPC / UMass CSV.
    Spc,
    /// DiskSim ASCII (time in ms).
    Disksim,
    /// MQSim ASCII (time in ns).
    Mqsim,
    /// blkparse default text output.
    Blkparse,
    /// Tencent Cloud Block Storage CSV.
    Tencent,
    /// SYSTOR'17 VDI CSV.
    Systor,
    /// CloudPhysics VSCSI CSV.
    Cloudphysics,
    /// Alibaba Cloud block trace CSV.
    Alibaba,
    /// HP SRT binary records (`$$TR_IOREC`).
    Srt,
}

impl TraceFormat {
    /// Every format, in detection order.
    pub const ALL: [TraceFormat; 10] = [
        TraceFormat::Msr,
        TraceFormat::Spc,
        TraceFormat::Disksim,
        TraceFormat::Mqsim,
        TraceFormat::Blkparse,
        TraceFormat::Tencent,
        TraceFormat::Systor,
        TraceFormat::Cloudphysics,
        TraceFormat::Alibaba,
        TraceFormat::Srt,
    ];

    /// The configuration name: `"msr"`, `"spc"`, `"disksim"`, `"mqsim"`,
    /// `"blkparse"`, `"tencent"`, `"systor"`, `"cloudphysics"`, `"alibaba"` or `"srt"`.
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Msr => "msr",
            TraceFormat::Spc => "spc",
            TraceFormat::Disksim => "disksim",
            TraceFormat::Mqsim => "mqsim",
            TraceFormat::Blkparse => "blkparse",
            TraceFormat::Tencent => "tencent",
            TraceFormat::Systor => "systor",
            TraceFormat::Cloudphysics => "cloudphysics",
            TraceFormat::Alibaba => "alibaba",
            TraceFormat::Srt => "srt",
        }
    }

    /// The format called `s` (ASCII case-insensitive, surrounding whitespace
    /// ignored), if any.
    pub fn from_name(s: &str) -> Option<Self> {
        let s = s.trim();
        Self::ALL.into_iter().find(|f| f.name().eq_ignore_ascii_case(s))
    }
}

impl fmt::Display for TraceFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The kind of a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TraceOp {
    /// Read `length_bytes` at `offset_bytes`.
    Read,
    /// Write `length_bytes` at `offset_bytes`.
    Write,
    /// Discard / UNMAP of `length_bytes` at `offset_bytes`.
    Trim,
    /// Cache flush; offset and length are 0.
    Flush,
}

impl TraceOp {
    /// `"read"`, `"write"`, `"trim"` or `"flush"`.
    pub fn name(self) -> &'static str {
        match self {
            TraceOp::Read => "read",
            TraceOp::Write => "write",
            TraceOp::Trim => "trim",
            TraceOp::Flush => "flush",
        }
    }
}

impl fmt::Display for TraceOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One I/O request.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceRecord {
    /// What the request does.
    pub op: TraceOp,
    /// Start address in bytes (0 for flushes).
    pub offset_bytes: u64,
    /// Length in bytes (> 0 except for flushes; `offset + length` never
    /// overflows `u64`).
    pub length_bytes: u64,
    /// Nanoseconds since the first record yielded (which has 0). Never
    /// decreases: when the trace's clock goes backwards, the previous time is
    /// repeated.
    pub time_ns: u64,
    /// Device number / volume id / LUN / disk number (0 when the format has
    /// none); for blkparse `maj << 20 | min`.
    pub device: u64,
    /// 1-based line number in the (decompressed) file (`srt`: the record's number).
    pub line: u64,
}

/// How to read a trace.
#[derive(Clone, Debug, Default)]
pub struct TraceOptions {
    /// The format; `None` detects it from the content ([`detect_format`]).
    pub format: Option<TraceFormat>,
    /// `Some(d)`: keep only the records of device/volume/LUN `d`.
    pub device: Option<u64>,
}

/// Opens a trace for reading (gunzipping it if it starts with the gzip
/// magic) and detects its format unless `options.format` is set.
pub fn open(path: &Path, options: &TraceOptions) -> Result<TraceReader, TraceError> {
    let format = match options.format {
        Some(f) => f,
        None => detect_format(path)?,
    };
    let source = if format == TraceFormat::Srt {
        reader::Source::Srt(formats::srt::SrtReader::open(path)?)
    } else {
        reader::Source::Lines(reader::LineReader::open(path)?)
    };
    Ok(TraceReader::new(source, format, options.device))
}

/// Totals over a whole trace, from [`scan`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceSummary {
    /// The format read.
    pub format: TraceFormat,
    /// Records of every kind.
    pub records: u64,
    /// Read records.
    pub reads: u64,
    /// Write records.
    pub writes: u64,
    /// Trim records.
    pub trims: u64,
    /// Flush records.
    pub flushes: u64,
    /// Sum of read lengths.
    pub bytes_read: u64,
    /// Sum of write lengths.
    pub bytes_written: u64,
    /// Sum of trim lengths.
    pub bytes_trimmed: u64,
    /// Smallest offset of any read, write or trim (0 if there are none).
    pub min_offset_bytes: u64,
    /// Largest `offset + length` of any read, write or trim (0 if none).
    pub max_end_bytes: u64,
    /// Time of the last record (the first has time 0).
    pub duration_ns: u64,
    /// The distinct device numbers seen, sorted.
    pub devices: Vec<u64>,
}

/// Reads the whole trace once and totals it. A trace with no records (after
/// device selection) is [`TraceError::Empty`].
pub fn scan(path: &Path, options: &TraceOptions) -> Result<TraceSummary, TraceError> {
    scan_until(path, options, &AtomicBool::new(false))
}

/// Records between two looks at [`scan_until`]'s stop flag.
const SCAN_STOP_EVERY: u64 = 65_536;

/// [`scan`] for a caller on another thread that may lose interest: once `stop` is set (looked
/// at every 65,536 records) it ends with a [`TraceError::Io`] saying it was stopped.
pub fn scan_until(
    path: &Path,
    options: &TraceOptions,
    stop: &AtomicBool,
) -> Result<TraceSummary, TraceError> {
    let reader = open(path, options)?;
    let mut tally = Tally::new(reader.format());
    for (i, rec) in (0_u64..).zip(reader) {
        if i.is_multiple_of(SCAN_STOP_EVERY) && stop.load(Ordering::Relaxed) {
            let message = "the scan was stopped".into();
            return Err(TraceError::Io { path: path.to_path_buf(), message });
        }
        tally.add(&rec?);
    }
    tally.finish(path)
}

/// [`scan`]'s totals kept one record at a time, for a caller that reads the records itself
/// (and may stop early).
#[derive(Clone, Debug)]
pub struct Tally {
    summary: TraceSummary,
    devices: BTreeSet<u64>,
    last_device: Option<u64>,
}

impl Tally {
    /// Nothing counted yet, for a trace in `format`.
    #[must_use]
    pub fn new(format: TraceFormat) -> Self {
        Tally {
            summary: TraceSummary {
                format,
                records: 0,
                reads: 0,
                writes: 0,
                trims: 0,
                flushes: 0,
                bytes_read: 0,
                bytes_written: 0,
                bytes_trimmed: 0,
                min_offset_bytes: u64::MAX,
                max_end_bytes: 0,
                duration_ns: 0,
                devices: Vec::new(),
            },
            devices: BTreeSet::new(),
            last_device: None,
        }
    }

    /// Counts one record.
    pub fn add(&mut self, rec: &TraceRecord) {
        let s = &mut self.summary;
        s.records += 1;
        match rec.op {
            TraceOp::Read => {
                s.reads += 1;
                s.bytes_read = s.bytes_read.saturating_add(rec.length_bytes);
            }
            TraceOp::Write => {
                s.writes += 1;
                s.bytes_written = s.bytes_written.saturating_add(rec.length_bytes);
            }
            TraceOp::Trim => {
                s.trims += 1;
                s.bytes_trimmed = s.bytes_trimmed.saturating_add(rec.length_bytes);
            }
            TraceOp::Flush => s.flushes += 1,
        }
        if rec.op != TraceOp::Flush {
            s.min_offset_bytes = s.min_offset_bytes.min(rec.offset_bytes);
            s.max_end_bytes = s.max_end_bytes.max(rec.offset_bytes + rec.length_bytes);
        }
        s.duration_ns = s.duration_ns.max(rec.time_ns);
        // Records of one device come in runs: the set is touched once per run.
        if self.last_device != Some(rec.device) {
            self.devices.insert(rec.device);
            self.last_device = Some(rec.device);
        }
    }

    /// The totals of the records counted; none is [`TraceError::Empty`] (naming `path`).
    pub fn finish(self, path: &Path) -> Result<TraceSummary, TraceError> {
        let mut s = self.summary;
        if s.records == 0 {
            return Err(TraceError::Empty { path: path.to_path_buf() });
        }
        if s.min_offset_bytes == u64::MAX && s.max_end_bytes == 0 {
            s.min_offset_bytes = 0;
        }
        s.devices = self.devices.into_iter().collect();
        Ok(s)
    }
}
