//! SPC / UMass trace format (Storage Performance Council, as used by the
//! UMass Trace Repository: Financial1/2, WebSearch1-3), format name `spc`.
//!
//! CSV without a header, at least 5 fields per line (further fields, present
//! in some files, are ignored):
//!
//! ```text
//! ASU,LBA,Size,Opcode,Timestamp
//! 0,20941264,8192,W,0.551706
//! ```
//!
//! * `ASU` (application storage unit): the record's `device`.
//! * `LBA`: 512-byte sectors (`offset_bytes` = LBA x 512).
//! * `Size`: bytes.
//! * `Opcode`: `r` or `w` (case-insensitive).
//! * `Timestamp`: seconds as a decimal number, converted to ns exactly (no
//!   floating point; digits beyond the 9th decimal are dropped).

use super::{eq_ic, excerpt, sectors_to_bytes, Fields, ParseResult, Parsed, Raw};
use crate::TraceOp;

pub(crate) fn parse(line: &[u8]) -> ParseResult {
    let f = Fields::csv(line);
    f.expect_at_least(5, "comma-separated")?;
    let device = f.u64(0, "ASU")?;
    let lba = f.u64(1, "LBA")?;
    let offset_bytes = sectors_to_bytes(lba, 1, "LBA")?;
    let length_bytes = f.u64(2, "Size")?;
    let code = f.get(3);
    let op = if eq_ic(code, b"r") {
        TraceOp::Read
    } else if eq_ic(code, b"w") {
        TraceOp::Write
    } else {
        return Err(format!("field 4 (Opcode): expected r or w, found \"{}\"", excerpt(code, 40)));
    };
    let time_ns = f.decimal_scaled(4, 9, "Timestamp (seconds)")?;
    Ok(Parsed::Record(Raw { op, offset_bytes, length_bytes, time_ns, device }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lines() {
        assert_eq!(
            parse(b"1,100,4096,R,1.5,extra").unwrap(),
            Parsed::Record(Raw {
                op: TraceOp::Read,
                offset_bytes: 51_200,
                length_bytes: 4096,
                time_ns: 1_500_000_000,
                device: 1
            })
        );
        assert!(parse(b"1,100,4096,x,1.5").unwrap_err().contains("field 4 (Opcode)"));
        assert!(parse(b"1,100,4096,w")
            .unwrap_err()
            .contains("expected at least 5 comma-separated fields, found 4"));
    }
}
