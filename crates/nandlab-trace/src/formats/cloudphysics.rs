//! CloudPhysics VMware virtual-disk (VSCSI) traces in the CSV form used by
//! libCacheSim (`data/cloudPhysicsIO.csv`), format name `cloudphysics`.
//!
//! CSV with the header line `version,time,op,size,lbn` (matched
//! case-insensitively and skipped wherever it appears; detection requires it),
//! then exactly 5 fields per line:
//!
//! ```text
//! 1,5633898,2a,512,42932745
//! ```
//!
//! * `version`: an integer, ignored.
//! * `time`: microseconds.
//! * `op`: SCSI opcode in hex (optional `0x` prefix, any case):
//!   `08` READ(6), `28` READ(10), `a8` READ(12), `88` READ(16) -> Read;
//!   `0a` WRITE(6), `2a` WRITE(10), `aa` WRITE(12), `8a` WRITE(16) -> Write;
//!   `35` SYNCHRONIZE CACHE(10), `91` SYNCHRONIZE CACHE(16) -> Flush
//!   (offset and length 0); `42` UNMAP -> Trim. Any other opcode is an error
//!   naming it.
//! * `size`: bytes.
//! * `lbn`: starting 512-byte logical block.

use super::{eq_ic, excerpt, sectors_to_bytes, Fields, ParseResult, Parsed, Raw};
use crate::TraceOp;

const HEADER: [&[u8]; 5] = [b"version", b"time", b"op", b"size", b"lbn"];

pub(crate) fn is_header(line: &[u8]) -> bool {
    if !line.first().is_some_and(u8::is_ascii_alphabetic) {
        return false; // fast path for data lines
    }
    let f = Fields::csv(line);
    f.len() == HEADER.len() && HEADER.iter().enumerate().all(|(i, h)| eq_ic(f.get(i), h))
}

fn parse_hex_u8(s: &[u8]) -> Option<u8> {
    let s = s.strip_prefix(b"0x").or_else(|| s.strip_prefix(b"0X")).unwrap_or(s);
    if s.is_empty() || s.len() > 2 {
        return None;
    }
    let mut v: u8 = 0;
    for &b in s {
        let d = (b as char).to_digit(16)?;
        v = v * 16 + d as u8;
    }
    Some(v)
}

pub(crate) fn parse(line: &[u8]) -> ParseResult {
    let f = Fields::csv(line);
    f.expect_exactly(5, "comma-separated")?;
    f.u64(0, "version")?;
    let micros = f.u64(1, "time (us)")?;
    let code = f.get(2);
    let opcode = parse_hex_u8(code).ok_or_else(|| {
        format!("field 3 (op): expected a hexadecimal SCSI opcode, found \"{}\"", excerpt(code, 40))
    })?;
    let op = match opcode {
        0x08 | 0x28 | 0xa8 | 0x88 => TraceOp::Read,
        0x0a | 0x2a | 0xaa | 0x8a => TraceOp::Write,
        0x35 | 0x91 => TraceOp::Flush,
        0x42 => TraceOp::Trim,
        other => {
            return Err(format!(
                "field 3 (op): unsupported SCSI opcode 0x{other:02x} (supported: READ \
                 08/28/a8/88, WRITE 0a/2a/aa/8a, SYNCHRONIZE CACHE 35/91, UNMAP 42)"
            ))
        }
    };
    let size = f.u64(3, "size")?;
    let lbn = f.u64(4, "lbn")?;
    let (offset_bytes, length_bytes) =
        if op == TraceOp::Flush { (0, 0) } else { (sectors_to_bytes(lbn, 4, "lbn")?, size) };
    Ok(Parsed::Record(Raw {
        op,
        offset_bytes,
        length_bytes,
        time_ns: u128::from(micros) * 1000,
        device: 0,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opcodes() {
        let rec = |l: &[u8]| match parse(l).unwrap() {
            Parsed::Record(r) => r,
            other => panic!("unexpected {other:?}"),
        };
        assert_eq!(rec(b"1,5633898,2a,512,42932745").op, TraceOp::Write);
        assert_eq!(rec(b"1,5633898,0x28,512,1").op, TraceOp::Read);
        assert_eq!(rec(b"1,5633898,AA,512,1").op, TraceOp::Write);
        assert_eq!(rec(b"1,5633898,42,4096,8").op, TraceOp::Trim);
        let fl = rec(b"1,7,35,0,99");
        assert_eq!((fl.op, fl.offset_bytes, fl.length_bytes), (TraceOp::Flush, 0, 0));
        assert_eq!(rec(b"1,7,28,4096,8").time_ns, 7000);
        assert!(parse(b"1,7,12,0,0").unwrap_err().contains("unsupported SCSI opcode 0x12"));
        assert!(parse(b"1,7,zz,0,0").unwrap_err().contains("field 3 (op)"));
        assert!(parse(b"1,7,123,0,0").unwrap_err().contains("field 3 (op)"));
        assert!(is_header(b"version,time,op,size,lbn"));
    }
}
