//! MSR Cambridge block traces (SNIA IOTTA set 388), format name `msr`.
//!
//! CSV without a header, exactly 7 fields per line:
//!
//! ```text
//! Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime
//! 128166385295514878,hm,0,Write,11855351808,512,2617
//! ```
//!
//! * `Timestamp`: Windows FILETIME, 100 ns ticks (`time_ns` = ticks x 100,
//!   relative to the first record).
//! * `Hostname`: any text, ignored.
//! * `DiskNumber`: the record's `device`.
//! * `Type`: `Read` or `Write` (case-insensitive).
//! * `Offset`, `Size`: bytes.
//! * `ResponseTime`: 100 ns ticks; validated as an integer, otherwise ignored.

use super::{eq_ic, excerpt, Fields, ParseResult, Parsed, Raw};
use crate::TraceOp;

pub(crate) fn parse(line: &[u8]) -> ParseResult {
    let f = Fields::csv(line);
    f.expect_exactly(7, "comma-separated")?;
    let ticks = f.u64(0, "Timestamp")?;
    let device = f.u64(2, "DiskNumber")?;
    let ty = f.get(3);
    let op = if eq_ic(ty, b"Read") {
        TraceOp::Read
    } else if eq_ic(ty, b"Write") {
        TraceOp::Write
    } else {
        return Err(format!(
            "field 4 (Type): expected Read or Write, found \"{}\"",
            excerpt(ty, 40)
        ));
    };
    let offset_bytes = f.u64(4, "Offset")?;
    let length_bytes = f.u64(5, "Size")?;
    f.u64(6, "ResponseTime")?;
    Ok(Parsed::Record(Raw {
        op,
        offset_bytes,
        length_bytes,
        time_ns: u128::from(ticks) * 100,
        device,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_line() {
        let p = parse(b"128166385295514878,hm,0,Write,11855351808,512,2617").unwrap();
        assert_eq!(
            p,
            Parsed::Record(Raw {
                op: TraceOp::Write,
                offset_bytes: 11_855_351_808,
                length_bytes: 512,
                time_ns: 12_816_638_529_551_487_800,
                device: 0
            })
        );
    }

    #[test]
    fn rejects_bad_lines() {
        assert!(parse(b"1,hm,0,Write,1,2")
            .unwrap_err()
            .contains("expected 7 comma-separated fields, found 6"));
        assert!(parse(b"1,hm,0,Erase,1,2,3")
            .unwrap_err()
            .contains("field 4 (Type): expected Read or Write"));
        assert!(parse(b"1,hm,0,Read,x,2,3").unwrap_err().contains("field 5 (Offset)"));
    }
}
