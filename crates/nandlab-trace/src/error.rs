//! The crate's error type, [`TraceError`].
//!
//! Every failure - a file that cannot be opened or decompressed, a malformed
//! line, an unrecognisable format, an address that does not fit the simulated
//! device, an empty trace or an invalid fitting configuration - is reported as
//! a typed value; nothing in this crate panics on user input.
//!
//! `Display` renders one line in the usual `path:line: message` style, e.g.
//!
//! ```text
//! trace.csv:17: expected 7 comma-separated fields, found 3: "128166385295514663,hm,0"
//! ```

use std::fmt;
use std::path::PathBuf;

/// Everything that can go wrong while reading or fitting a trace.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TraceError {
    /// The file could not be opened or read (includes corrupt or truncated
    /// gzip streams).
    Io {
        /// The trace file.
        path: PathBuf,
        /// What failed, including the operating-system or decoder message.
        message: String,
    },
    /// A line is malformed. `message` says what was expected and quotes the
    /// line (truncated to 80 characters).
    Parse {
        /// The trace file.
        path: PathBuf,
        /// 1-based line number in the (decompressed) file (`srt`: the record's number, its
        /// byte offset in `message`).
        line: u64,
        /// What is wrong, followed by the quoted line text.
        message: String,
    },
    /// The format could not be detected from the file's content (or the
    /// content fits several formats equally well).
    UnknownFormat {
        /// The trace file.
        path: PathBuf,
        /// Which formats were tried and why each was rejected.
        message: String,
    },
    /// A request does not fit the simulated device (see [`crate::AddressFit`]).
    OutOfRange {
        /// The trace file.
        path: PathBuf,
        /// 1-based line number of the request.
        line: u64,
        /// The request's offset in the trace, in bytes.
        offset_bytes: u64,
        /// The request's length, in bytes.
        length_bytes: u64,
        /// The logical size of the simulated device, in bytes.
        logical_bytes: u64,
    },
    /// The file (after device selection, if any) contains no I/O records.
    Empty {
        /// The trace file.
        path: PathBuf,
    },
    /// An invalid setting was passed to this crate (for example a zero chunk
    /// size or a zero logical device size).
    Config {
        /// What is wrong with the setting.
        message: String,
    },
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TraceError::Io { path, message } => write!(f, "{}: {}", path.display(), message),
            TraceError::Parse { path, line, message } => {
                write!(f, "{}:{}: {}", path.display(), line, message)
            }
            TraceError::UnknownFormat { path, message } => {
                write!(f, "{}: {}", path.display(), message)
            }
            TraceError::OutOfRange { path, line, offset_bytes, length_bytes, logical_bytes } => {
                write!(
                    f,
                    "{}:{}: request at byte offset {} (length {} bytes) does not fit in the \
                 device's logical space of {} bytes; set workload.fit = \"fold\" or \
                 \"compact\", or use a larger device",
                    path.display(),
                    line,
                    offset_bytes,
                    length_bytes,
                    logical_bytes
                )
            }
            TraceError::Empty { path } => write!(
                f,
                "{}: the trace contains no I/O records (after device selection, if any)",
                path.display()
            ),
            TraceError::Config { message } => write!(f, "invalid trace setting: {message}"),
        }
    }
}

impl std::error::Error for TraceError {}
