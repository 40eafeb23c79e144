//! Opening trace files (with transparent gzip decompression) and the
//! [`TraceReader`] record iterator.
//!
//! A file is gunzipped when its first two bytes are the gzip magic
//! `1f 8b`, whatever its name; concatenated gzip members are read as one
//! stream. Lines are found in place in a large read window (no per-line
//! copy or allocation); a line longer than [`MAX_LINE_BYTES`] is an error (it
//! usually means the file is binary). The one binary format, `srt`, is read record by record by
//! `formats::srt::SrtReader` from the same (possibly gunzipped) stream; every
//! request then passes the same checks (`TraceReader::next_record`).

use std::io::BufRead;
use std::path::{Path, PathBuf};

use crate::formats::srt::SrtReader;
use crate::formats::{self, excerpt, trim, Parsed, Raw};
use crate::input::open_input;
use crate::{TraceError, TraceFormat, TraceOp, TraceRecord};

/// The longest line accepted, in bytes.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// The longest read or write accepted, in bytes (4 GiB: more than any block layer issues as
/// one request; a larger length is a corrupt field, and would make fitting and replay work
/// per byte of nonsense).
pub const MAX_REQUEST_BYTES: u64 = 1 << 32;

/// The longest trim accepted, in bytes (2 TiB: Linux's largest single discard, 2^32 sectors).
pub const MAX_TRIM_BYTES: u64 = 1 << 41;

/// The longest time a trace may span, in nanoseconds (10^18 ns, 31.7 years; the simulator's
/// limit for any workload, `MAX_WORKLOAD_SPAN_S`). A later timestamp is a wrong unit or a
/// corrupt field, not something to saturate silently.
pub const MAX_TRACE_SPAN_NS: u64 = 1_000_000_000_000_000_000;

/// Bytes read from the input at a time. Lines are found in place in this window (no copy per
/// line), so a replay's parsing costs a scan for the newline and the format's field parse.
const WINDOW_BYTES: usize = 1 << 20;

/// Reads a (possibly gzipped) text file line by line: the input is read in large windows into
/// one buffer and each line is a range of it.
pub(crate) struct LineReader {
    path: PathBuf,
    input: Box<dyn BufRead + Send>,
    gzip: bool,
    /// `buf[..filled]` holds bytes read and not yet consumed from `start` on.
    buf: Vec<u8>,
    filled: usize,
    /// The current line is `buf[start..end]`, its newline included when it has one.
    start: usize,
    end: usize,
    eof: bool,
    line: u64,
}

impl LineReader {
    pub(crate) fn open(path: &Path) -> Result<Self, TraceError> {
        let (input, gzip) = open_input(path)?;
        Ok(LineReader {
            path: path.to_path_buf(),
            input,
            gzip,
            buf: vec![0; WINDOW_BYTES],
            filled: 0,
            start: 0,
            end: 0,
            eof: false,
            line: 0,
        })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn gzip(&self) -> bool {
        self.gzip
    }

    /// 1-based number of the line last read.
    pub(crate) fn line(&self) -> u64 {
        self.line
    }

    /// Reads the next line; `Ok(false)` at end of file.
    pub(crate) fn advance(&mut self) -> Result<bool, TraceError> {
        self.start = self.end;
        let mut searched = self.start;
        loop {
            if let Some(i) = memchr::memchr(b'\n', &self.buf[searched..self.filled]) {
                self.end = searched + i + 1;
                break;
            }
            searched = self.filled;
            if self.eof {
                if self.start == self.filled {
                    return Ok(false);
                }
                // The last line has no newline.
                self.end = self.filled;
                break;
            }
            if self.filled - self.start > MAX_LINE_BYTES {
                self.line += 1;
                return Err(TraceError::Parse {
                    path: self.path.clone(),
                    line: self.line,
                    message: format!(
                        "line is longer than {MAX_LINE_BYTES} bytes (is this a binary file?)"
                    ),
                });
            }
            self.refill()?;
            searched -= self.start;
            self.start = 0;
        }
        self.line += 1;
        if self.line == 1 && self.buf[self.start..self.end].starts_with(b"\xEF\xBB\xBF") {
            self.start += 3;
        }
        Ok(true)
    }

    /// Moves the unconsumed bytes (the line being assembled) to the front and reads more
    /// after them, growing the buffer when a long line fills it.
    fn refill(&mut self) -> Result<(), TraceError> {
        self.buf.copy_within(self.start..self.filled, 0);
        self.filled -= self.start;
        if self.filled == self.buf.len() {
            let grown = (self.buf.len() * 2).min(MAX_LINE_BYTES + WINDOW_BYTES);
            self.buf.resize(grown, 0);
        }
        loop {
            match self.input.read(&mut self.buf[self.filled..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(());
                }
                Ok(n) => {
                    self.filled += n;
                    return Ok(());
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(TraceError::Io {
                        path: self.path.clone(),
                        message: format!(
                            "read error at line {} of the {}: {}",
                            self.line + 1,
                            if self.gzip {
                                "gzip-decompressed stream (truncated or corrupt gzip file?)"
                            } else {
                                "file"
                            },
                            e
                        ),
                    })
                }
            }
        }
    }

    /// The current line without its line ending and surrounding whitespace.
    pub(crate) fn text(&self) -> &[u8] {
        trim(&self.buf[self.start..self.end])
    }

    /// Whether the current line is blank or a `#` comment.
    pub(crate) fn is_ignorable(&self) -> bool {
        let t = self.text();
        t.is_empty() || t[0] == b'#'
    }

    /// A Parse error for the current line: `reason: "line text"`.
    pub(crate) fn parse_error(&self, reason: &str) -> TraceError {
        TraceError::Parse {
            path: self.path.clone(),
            line: self.line,
            message: format!("{}: \"{}\"", reason, excerpt(self.text(), 80)),
        }
    }
}

/// An iterator over the records of one trace file, in file order.
///
/// Created by [`crate::open`]. Yields `Ok(record)` for every I/O request that
/// passes the device selection, and stops after the first error (which it
/// yields as `Err`): once an error has been returned, `next` returns `None`.
pub struct TraceReader {
    source: Source,
    format: TraceFormat,
    device: Option<u64>,
    t0: Option<u128>,
    last_ns: u64,
    finished: bool,
}

/// Where records come from: the lines of a text format, or the records of the binary SRT
/// format.
pub(crate) enum Source {
    Lines(LineReader),
    Srt(SrtReader),
}

impl Source {
    fn path(&self) -> &Path {
        match self {
            Source::Lines(l) => l.path(),
            Source::Srt(s) => s.path(),
        }
    }

    fn gzip(&self) -> bool {
        match self {
            Source::Lines(l) => l.gzip(),
            Source::Srt(s) => s.gzip(),
        }
    }

    /// The line (SRT: record) number of the last request read.
    fn position(&self) -> u64 {
        match self {
            Source::Lines(l) => l.line(),
            Source::Srt(s) => s.record(),
        }
    }

    /// A Parse error for the last line or record read.
    fn error(&self, reason: &str) -> TraceError {
        match self {
            Source::Lines(l) => l.parse_error(reason),
            Source::Srt(s) => s.error(reason),
        }
    }

    /// The next request as the format gives it, or `None` at the end.
    fn next_raw(&mut self, format: TraceFormat) -> Result<Option<Raw>, TraceError> {
        let lines = match self {
            Source::Srt(s) => return s.next_raw(),
            Source::Lines(l) => l,
        };
        loop {
            if !lines.advance()? {
                return Ok(None);
            }
            if lines.is_ignorable() {
                continue;
            }
            let text = lines.text();
            if formats::is_header(format, text) {
                continue;
            }
            match formats::parse_line(format, text) {
                Ok(Parsed::Record(raw)) => return Ok(Some(raw)),
                Ok(Parsed::Skip) => continue,
                Ok(Parsed::End) => return Ok(None),
                Err(reason) => return Err(lines.parse_error(&reason)),
            }
        }
    }
}

impl std::fmt::Debug for TraceReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TraceReader")
            .field("path", &self.source.path())
            .field("format", &self.format)
            .field("device", &self.device)
            .field("line", &self.source.position())
            .finish_non_exhaustive()
    }
}

impl TraceReader {
    pub(crate) fn new(source: Source, format: TraceFormat, device: Option<u64>) -> Self {
        TraceReader { source, format, device, t0: None, last_ns: 0, finished: false }
    }

    /// The format being read (given in the options or detected).
    pub fn format(&self) -> TraceFormat {
        self.format
    }

    /// The trace file.
    pub fn path(&self) -> &Path {
        self.source.path()
    }

    /// Whether the file is gzip-compressed (read through a decompressor).
    pub fn is_gzip(&self) -> bool {
        self.source.gzip()
    }

    fn next_record(&mut self) -> Result<Option<TraceRecord>, TraceError> {
        loop {
            let Some(raw) = self.source.next_raw(self.format)? else {
                return Ok(None);
            };
            if self.device.is_some_and(|d| d != raw.device) {
                continue;
            }
            if raw.length_bytes == 0 && raw.op != TraceOp::Flush {
                continue;
            }
            if raw.offset_bytes.checked_add(raw.length_bytes).is_none() {
                return Err(self.source.error("offset + length overflows a 64-bit byte address"));
            }
            let limit = if raw.op == TraceOp::Trim { MAX_TRIM_BYTES } else { MAX_REQUEST_BYTES };
            if raw.length_bytes > limit {
                return Err(self.source.error(&format!(
                    "a {} of {} bytes is longer than the {} bytes one request may have \
                     (corrupt length field, or a length in the wrong unit?)",
                    raw.op, raw.length_bytes, limit
                )));
            }
            let t0 = *self.t0.get_or_insert(raw.time_ns);
            let rel = raw.time_ns.saturating_sub(t0);
            if rel > u128::from(MAX_TRACE_SPAN_NS) {
                return Err(self.source.error(&format!(
                    "timestamp lies {:.3e} s after the first record's; a trace may span at most \
                     {:.0e} s (a wrong time unit or a corrupt field?)",
                    rel as f64 / 1e9,
                    MAX_TRACE_SPAN_NS as f64 / 1e9
                )));
            }
            let rel = rel as u64;
            let time_ns = rel.max(self.last_ns);
            self.last_ns = time_ns;
            return Ok(Some(TraceRecord {
                op: raw.op,
                offset_bytes: raw.offset_bytes,
                length_bytes: raw.length_bytes,
                time_ns,
                device: raw.device,
                line: self.source.position(),
            }));
        }
    }
}

impl Iterator for TraceReader {
    type Item = Result<TraceRecord, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.finished {
            return None;
        }
        match self.next_record() {
            Ok(Some(rec)) => Some(Ok(rec)),
            Ok(None) => {
                self.finished = true;
                None
            }
            Err(e) => {
                self.finished = true;
                Some(Err(e))
            }
        }
    }
}

impl std::iter::FusedIterator for TraceReader {}
