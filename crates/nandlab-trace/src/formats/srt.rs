//! HP SRT binary I/O traces (`$$TR_IOREC` files: HP Labs' cello and hplajw disk traces of
//! HP-UX systems, Ruemmler and Wilkes, "UNIX disk access patterns", USENIX Winter 1993), format
//! name `srt`, as DiskSim reads them (its `hpl` trace format: `disksim_iotrace.c` and the record
//! layout of `disksim_hptrace.h`, which DiskSim took from HP Labs' SRTlite).
//!
//! The only binary format here, so it has its own record reader rather than a line parser; the
//! checks every record then passes (device selection, lengths, times) are the shared ones of
//! `reader.rs`.
//!
//! **Layout assumed** (DiskSim's; no other source available here describes it):
//!
//! * A text header starting with `$$TR_IOREC` (the version, comments, a `tracedate` line) and
//!   ending with a form feed (0x0C); at most 64 KiB. DiskSim uses `tracedate` only to line up
//!   several files; here times are relative to the first record, so it is not read.
//! * Then records of big-endian 32-bit words, back to back:
//!   `size` (bytes of the whole record), `id` (record version << 16 | record type), `sec`,
//!   `usec` (the time the request was issued), `start`, `stop` (µs from enqueue to start and to
//!   completion), `bytes` (the length, a multiple of 512), `sectno` (the first 512-byte sector),
//!   `devno` (the HP-UX device number), `drivertype`, `cylno`, `ioflags` (bit 0: read, else
//!   write), `info`; version 4 adds `queuelen`, a suspect-I/O record (type 4) adds `susflags`.
//!   So a record is 52 bytes, 56 for version 4, 4 more for a suspect record.
//! * As DiskSim does: versions 1 to 4 only, types short I/O (1, replayed) and suspect I/O (4,
//!   skipped); any other version or type, a size other than the one the version and type give,
//!   or a length that is not whole sectors is an error (DiskSim stops there too).
//! * Differences from DiskSim: `device` is the whole 32-bit `devno` (DiskSim keeps bits 8–15,
//!   which can merge disks); times are exact (sec × 10^9 + usec × 1000 ns, where DiskSim uses
//!   floating-point milliseconds); `hpl2` files (combined by `hplcomb`, no header) are not read.
//!
//! Files that call their records "shortIO_v7" (version 7, 88 bytes) exist, but no source at hand
//! gives that version's field positions, so such a file is refused naming the version rather
//! than read with guessed offsets.
//!
//! Errors name the file and the record: `path:N: SRT record N at byte B: ...`, where N (1-based)
//! stands in the line number of the text formats.

use std::io::{BufRead, ErrorKind, Read};
use std::path::{Path, PathBuf};

use super::Raw;
use crate::input::open_input;
use crate::{TraceError, TraceOp};

/// How an SRT file begins.
pub(crate) const MAGIC: &[u8] = b"$$TR_IOREC";

/// The longest header accepted before its form feed.
const HEADER_MAX_BYTES: u64 = 64 * 1024;
const FORM_FEED: u8 = 0x0C;

/// Record types (HP Labs' numbering, as in DiskSim).
const SHORT_IO: u32 = 1;
const SUSPECT_IO: u32 = 4;

/// `ioflags` bit of a read (HP-UX 8.0's `B_READ`).
const READ_FLAG: u32 = 0x1;

const SECTOR: u64 = 512;

/// Words of a version 1–3 short I/O record.
const BASE_WORDS: u32 = 13;
/// The longest record accepted (version 4, suspect I/O).
const MAX_RECORD_BYTES: usize = 4 * (BASE_WORDS as usize + 2);

/// Reads the records of an SRT file one by one into a fixed buffer.
pub(crate) struct SrtReader {
    path: PathBuf,
    input: Box<dyn BufRead + Send>,
    gzip: bool,
    /// 1-based number of the record last read (0 before the first).
    record: u64,
    /// Byte offset of the record last read, in the (decompressed) file.
    at: u64,
    /// Byte offset of the next record.
    next_at: u64,
    buf: [u8; MAX_RECORD_BYTES],
}

impl SrtReader {
    /// Opens `path` (gunzipping it if it is gzip) and reads its header.
    pub(crate) fn open(path: &Path) -> Result<Self, TraceError> {
        let (input, gzip) = open_input(path)?;
        let mut r = SrtReader {
            path: path.to_path_buf(),
            input,
            gzip,
            record: 0,
            at: 0,
            next_at: 0,
            buf: [0; MAX_RECORD_BYTES],
        };
        r.skip_header()?;
        Ok(r)
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn gzip(&self) -> bool {
        self.gzip
    }

    /// 1-based number of the record last read.
    pub(crate) fn record(&self) -> u64 {
        self.record
    }

    fn skip_header(&mut self) -> Result<(), TraceError> {
        let mut header = Vec::with_capacity(512);
        let n = (&mut self.input)
            .take(HEADER_MAX_BYTES)
            .read_until(FORM_FEED, &mut header)
            .map_err(|e| self.io_error(e))?;
        let not_srt = |why: String| TraceError::UnknownFormat {
            path: self.path.clone(),
            message: format!("not an SRT trace: {why}"),
        };
        if !header.starts_with(MAGIC) {
            return Err(not_srt(format!(
                "it does not begin with \"$$TR_IOREC\" (found \"{}\")",
                super::excerpt(&header[..header.len().min(16)], 16)
            )));
        }
        if header.last() != Some(&FORM_FEED) {
            return Err(not_srt(format!(
                "no form feed (0x0C) ends the text header within its first {} bytes",
                n.min(HEADER_MAX_BYTES as usize)
            )));
        }
        self.next_at = n as u64;
        Ok(())
    }

    fn io_error(&self, e: std::io::Error) -> TraceError {
        TraceError::Io {
            path: self.path.clone(),
            message: format!(
                "read error in SRT record {} of the {}: {e}",
                self.record + 1,
                if self.gzip { "gzip-decompressed stream" } else { "file" }
            ),
        }
    }

    /// A Parse error for the record last read.
    pub(crate) fn error(&self, reason: &str) -> TraceError {
        TraceError::Parse {
            path: self.path.clone(),
            line: self.record,
            message: format!("SRT record {} at byte {}: {reason}", self.record, self.at),
        }
    }

    /// Fills `self.buf[from..to]`; the bytes read (fewer only at the end of the file).
    fn fill(&mut self, from: usize, to: usize) -> Result<usize, TraceError> {
        let mut done = from;
        while done < to {
            match self.input.read(&mut self.buf[done..to]) {
                Ok(0) => break,
                Ok(k) => done += k,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(self.io_error(e)),
            }
        }
        Ok(done - from)
    }

    fn word(&self, i: usize) -> u32 {
        u32::from_be_bytes([
            self.buf[4 * i],
            self.buf[4 * i + 1],
            self.buf[4 * i + 2],
            self.buf[4 * i + 3],
        ])
    }

    /// The next short I/O record, or `None` at the end of the file.
    pub(crate) fn next_raw(&mut self) -> Result<Option<Raw>, TraceError> {
        loop {
            self.at = self.next_at;
            let got = self.fill(0, 16)?;
            if got == 0 {
                return Ok(None);
            }
            self.record += 1;
            if got < 16 {
                return Err(self.error(&format!("truncated: {got} of the 16 bytes of its header")));
            }
            let (size, id) = (self.word(0), self.word(1));
            let (version, kind) = (id >> 16, id & 0xFFFF);
            if !(1..=4).contains(&version) {
                return Err(self.error(&format!(
                    "record version {version} (id 0x{id:08x}); the layout known (DiskSim's) is \
                     that of versions 1 to 4"
                )));
            }
            if kind != SHORT_IO && kind != SUSPECT_IO {
                return Err(self.error(&format!(
                    "record type {kind}; expected 1 (short I/O) or 4 (suspect I/O)"
                )));
            }
            let words = BASE_WORDS + u32::from(version == 4) + u32::from(kind == SUSPECT_IO);
            if size != 4 * words {
                return Err(self.error(&format!(
                    "size field {size}; a version {version} type {kind} record is {} bytes",
                    4 * words
                )));
            }
            let size = size as usize;
            let got = self.fill(16, size)?;
            if got < size - 16 {
                return Err(self.error(&format!("truncated: {} of its {size} bytes", 16 + got)));
            }
            self.next_at += size as u64;
            if kind == SUSPECT_IO {
                continue;
            }
            return self.short_io().map(Some);
        }
    }

    /// The request of the short I/O record in `buf`.
    fn short_io(&self) -> Result<Raw, TraceError> {
        let (sec, usec) = (self.word(2), self.word(3));
        let length_bytes = u64::from(self.word(6));
        if length_bytes % SECTOR != 0 {
            return Err(self.error(&format!(
                "length {length_bytes} bytes is not a multiple of 512 (DiskSim refuses it too)"
            )));
        }
        let offset_bytes = u64::from(self.word(7)) * SECTOR;
        let device = u64::from(self.word(8));
        let op = if self.word(11) & READ_FLAG != 0 { TraceOp::Read } else { TraceOp::Write };
        let time_ns = u128::from(sec) * 1_000_000_000 + u128::from(usec) * 1000;
        Ok(Raw { op, offset_bytes, length_bytes, time_ns, device })
    }
}
