//! DiskSim ASCII traces (also the format of the Microsoft SSD extension's
//! validation traces), format name `disksim`.
//!
//! Exactly 5 whitespace-separated fields per line:
//!
//! ```text
//! time devno start_sector size_sectors flags
//! 5265.703 0 6307768 8 0
//! ```
//!
//! * `time`: arrival time in **milliseconds**, a decimal number (converted to
//!   ns exactly, without floating point).
//! * `devno`: the record's `device`.
//! * `start_sector`, `size_sectors`: 512-byte sectors.
//! * `flags`: integer; bit 0 set = read, clear = write (other bits ignored).
//!
//! DiskSim and MQSim lines have the same shape; see the crate documentation
//! for how detection tells them apart (a `.` in the time column means
//! DiskSim).

use super::{sectors_to_bytes, Fields, ParseResult, Parsed, Raw};
use crate::TraceOp;

pub(crate) fn parse(line: &[u8]) -> ParseResult {
    let f = Fields::whitespace(line);
    f.expect_exactly(5, "whitespace-separated")?;
    let time_ns = f.decimal_scaled(0, 6, "time (ms)")?;
    let device = f.u64(1, "devno")?;
    let start = f.u64(2, "start sector")?;
    let offset_bytes = sectors_to_bytes(start, 2, "start sector")?;
    let size = f.u64(3, "size (sectors)")?;
    let length_bytes = sectors_to_bytes(size, 3, "size (sectors)")?;
    let flags = f.u64(4, "flags")?;
    let op = if flags & 1 == 1 { TraceOp::Read } else { TraceOp::Write };
    Ok(Parsed::Record(Raw { op, offset_bytes, length_bytes, time_ns, device }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lines() {
        assert_eq!(
            parse(b"5265.703 0 6307768 8 0").unwrap(),
            Parsed::Record(Raw {
                op: TraceOp::Write,
                offset_bytes: 6_307_768 * 512,
                length_bytes: 4096,
                time_ns: 5_265_703_000,
                device: 0
            })
        );
        assert_eq!(
            parse(b"1\t2 3 4 3").unwrap(),
            Parsed::Record(Raw {
                op: TraceOp::Read,
                offset_bytes: 1536,
                length_bytes: 2048,
                time_ns: 1_000_000,
                device: 2
            })
        );
        assert!(parse(b"1.0 0 3 4").unwrap_err().contains("expected 5"));
        assert!(parse(b"1.0 0 3 4 r").unwrap_err().contains("field 5 (flags)"));
    }
}
