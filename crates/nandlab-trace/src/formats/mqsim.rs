//! MQSim ASCII traces (the `traces/*.trace` files shipped with MQSim), format
//! name `mqsim`.
//!
//! Exactly 5 whitespace-separated fields per line:
//!
//! ```text
//! time devno start_lba size_sectors type
//! 938828000 3 197570570 16 0
//! ```
//!
//! * `time`: arrival time in **nanoseconds**, an integer.
//! * `devno`: the record's `device`.
//! * `start_lba`, `size_sectors`: 512-byte sectors.
//! * `type`: `0` = write, `1` = read; anything else is an error.
//!
//! Same shape as DiskSim; see the crate documentation for the detection rule.

use super::{excerpt, sectors_to_bytes, Fields, ParseResult, Parsed, Plain, Raw, SECTOR};
use crate::TraceOp;

pub(crate) fn parse(line: &[u8]) -> ParseResult {
    fast(line).map_or_else(|| general(line), |raw| Ok(Parsed::Record(raw)))
}

/// The plain form, five runs of digits separated by spaces or tabs, the type one digit (see
/// `Plain`); anything else goes to `general`.
#[inline]
fn fast(line: &[u8]) -> Option<Raw> {
    let mut p = Plain::new(line);
    let time_ns = p.digits()?;
    p.blanks()?;
    let device = p.digits()?;
    p.blanks()?;
    let offset_bytes = p.digits()?.checked_mul(SECTOR)?;
    p.blanks()?;
    let length_bytes = p.digits()?.checked_mul(SECTOR)?;
    p.blanks()?;
    let op = match p.any()? {
        b'0' => TraceOp::Write,
        b'1' => TraceOp::Read,
        _ => return None,
    };
    p.done().then_some(Raw { op, offset_bytes, length_bytes, time_ns: u128::from(time_ns), device })
}

fn general(line: &[u8]) -> ParseResult {
    let f = Fields::whitespace(line);
    f.expect_exactly(5, "whitespace-separated")?;
    let time_ns = u128::from(f.u64(0, "time (ns)")?);
    let device = f.u64(1, "devno")?;
    let start = f.u64(2, "start LBA")?;
    let offset_bytes = sectors_to_bytes(start, 2, "start LBA")?;
    let size = f.u64(3, "size (sectors)")?;
    let length_bytes = sectors_to_bytes(size, 3, "size (sectors)")?;
    let op = match f.get(4) {
        b"0" => TraceOp::Write,
        b"1" => TraceOp::Read,
        other => {
            return Err(format!(
                "field 5 (type): expected 0 (write) or 1 (read), found \"{}\"",
                excerpt(other, 40)
            ))
        }
    };
    Ok(Parsed::Record(Raw { op, offset_bytes, length_bytes, time_ns, device }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lines() {
        assert_eq!(
            parse(b"938828000 3 197570570 16 0").unwrap(),
            Parsed::Record(Raw {
                op: TraceOp::Write,
                offset_bytes: 197_570_570 * 512,
                length_bytes: 8192,
                time_ns: 938_828_000,
                device: 3
            })
        );
        assert!(parse(b"1.5 3 1 16 0").unwrap_err().contains("field 1 (time (ns))"));
        assert!(parse(b"1 3 1 16 2").unwrap_err().contains("field 5 (type)"));
    }

    /// The fast path accepts only lines the general parser reads the same way.
    #[test]
    fn fast_path_agrees_with_the_general_parser() {
        let lines: &[&[u8]] = &[
            b"938828000 3 197570570 16 0",
            b"1\t2\t3\t4\t1",
            b"1  2   3 4 1",
            b"+1 2 3 4 0",
            b"1 2 3 4 00",
            b"1 2 3 4 0 5",
            b"1 2 3 4",
            b"1 2 3 4 2",
            b"18446744073709551615 0 0 1 0",
            b"18446744073709551616 0 0 1 0",
            b"0 0 36028797018963968 1 0",
            b"0 0 36028797018963967 1 0",
            b"1 2 3 4 0x",
        ];
        for line in lines {
            let general = general(line);
            if let Some(raw) = fast(line) {
                assert_eq!(Ok(Parsed::Record(raw)), general, "{line:?}");
            }
            assert_eq!(parse(line), general, "{line:?}");
        }
        assert!(fast(b"938828000 3 197570570 16 0").is_some());
    }
}
