//! SYSTOR '17 virtual-desktop traces (SNIA IOTTA set 4964), format name
//! `systor`.
//!
//! CSV with the header line `Timestamp,Response,IOType,LUN,Offset,Size`
//! (matched case-insensitively and skipped wherever it appears), then exactly
//! 6 fields per line:
//!
//! ```text
//! 1456095145.133076000,0.000806000,R,0,899056122368,131072
//! ```
//!
//! * `Timestamp`: Unix seconds with a fraction; the fraction is read as exact
//!   integer nanoseconds (never through `f64`, which would lose precision at
//!   this magnitude).
//! * `Response`: seconds; validated when present (may be empty), ignored.
//! * `IOType`: `R` or `W` (case-insensitive; `Read`/`Write` also accepted).
//! * `LUN`: the record's `device`.
//! * `Offset`, `Size`: bytes.

use super::{eq_ic, excerpt, Fields, ParseResult, Parsed, Raw};
use crate::TraceOp;

const HEADER: [&[u8]; 6] = [b"Timestamp", b"Response", b"IOType", b"LUN", b"Offset", b"Size"];

pub(crate) fn is_header(line: &[u8]) -> bool {
    if !line.first().is_some_and(u8::is_ascii_alphabetic) {
        return false; // fast path for data lines
    }
    let f = Fields::csv(line);
    f.len() == HEADER.len() && HEADER.iter().enumerate().all(|(i, h)| eq_ic(f.get(i), h))
}

pub(crate) fn parse(line: &[u8]) -> ParseResult {
    let f = Fields::csv(line);
    f.expect_exactly(6, "comma-separated")?;
    let time_ns = f.decimal_scaled(0, 9, "Timestamp (seconds)")?;
    if !f.get(1).is_empty() {
        f.decimal_scaled(1, 9, "Response (seconds)")?;
    }
    let ty = f.get(2);
    let op = if eq_ic(ty, b"R") || eq_ic(ty, b"Read") {
        TraceOp::Read
    } else if eq_ic(ty, b"W") || eq_ic(ty, b"Write") {
        TraceOp::Write
    } else {
        return Err(format!("field 3 (IOType): expected R or W, found \"{}\"", excerpt(ty, 40)));
    };
    let device = f.u64(3, "LUN")?;
    let offset_bytes = f.u64(4, "Offset")?;
    let length_bytes = f.u64(5, "Size")?;
    Ok(Parsed::Record(Raw { op, offset_bytes, length_bytes, time_ns, device }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_and_lines() {
        assert!(is_header(b"Timestamp,Response,IOType,LUN,Offset,Size"));
        assert!(is_header(b"timestamp, response, iotype, lun, offset, size"));
        assert!(!is_header(b"Timestamp,Response,IOType,LUN,Offset"));
        assert_eq!(
            parse(b"1456095145.133076001,,W,2,899056122368,4096").unwrap(),
            Parsed::Record(Raw {
                op: TraceOp::Write,
                offset_bytes: 899_056_122_368,
                length_bytes: 4096,
                time_ns: 1_456_095_145_133_076_001,
                device: 2
            })
        );
        assert!(parse(b"1.0,0.1,X,0,1,2").unwrap_err().contains("field 3 (IOType)"));
    }
}
