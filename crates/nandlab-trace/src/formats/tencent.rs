//! Tencent Cloud Block Storage traces (SNIA IOTTA set 27917), format name
//! `tencent`.
//!
//! CSV without a header, exactly 5 fields per line:
//!
//! ```text
//! Timestamp,Offset,Size,IOType,VolumeID
//! 1538323199,13896880,128,0,1063
//! ```
//!
//! * `Timestamp`: Unix time in whole seconds (so many records share a time,
//!   and the clock steps backwards by a second now and then: such times are
//!   clamped, see the crate documentation).
//! * `Offset`, `Size`: 512-byte sectors.
//! * `IOType`: `0` = read, `1` = write (note: the opposite of MQSim).
//! * `VolumeID`: the record's `device`.

use super::{excerpt, sectors_to_bytes, Fields, ParseResult, Parsed, Raw};
use crate::TraceOp;

pub(crate) fn parse(line: &[u8]) -> ParseResult {
    let f = Fields::csv(line);
    f.expect_exactly(5, "comma-separated")?;
    let secs = f.u64(0, "Timestamp")?;
    let offset = f.u64(1, "Offset (sectors)")?;
    let offset_bytes = sectors_to_bytes(offset, 1, "Offset (sectors)")?;
    let size = f.u64(2, "Size (sectors)")?;
    let length_bytes = sectors_to_bytes(size, 2, "Size (sectors)")?;
    let op = match f.get(3) {
        b"0" => TraceOp::Read,
        b"1" => TraceOp::Write,
        other => {
            return Err(format!(
                "field 4 (IOType): expected 0 (read) or 1 (write), found \"{}\"",
                excerpt(other, 40)
            ))
        }
    };
    let device = f.u64(4, "VolumeID")?;
    Ok(Parsed::Record(Raw {
        op,
        offset_bytes,
        length_bytes,
        time_ns: u128::from(secs) * 1_000_000_000,
        device,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lines() {
        assert_eq!(
            parse(b"1538323199,13896880,128,0,1063").unwrap(),
            Parsed::Record(Raw {
                op: TraceOp::Read,
                offset_bytes: 13_896_880 * 512,
                length_bytes: 65_536,
                time_ns: 1_538_323_199_000_000_000,
                device: 1063
            })
        );
        assert!(parse(b"1,2,3,R,4").unwrap_err().contains("field 4 (IOType)"));
    }
}
