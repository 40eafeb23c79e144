//! Alibaba Cloud block traces (the `alibaba-block-traces` release of Li et al., "An In-Depth
//! Analysis of Cloud Block Storage Workloads in Large-Scale Production", IISWC 2020; the schema
//! SepBIT's trace simulator reads), format name `alibaba`.
//!
//! CSV without a header, exactly 5 fields per line:
//!
//! ```text
//! device_id,opcode,offset,length,timestamp
//! 419,W,7471104,4096,1577808000000009
//! ```
//!
//! * `device_id`: the volume (virtual disk), the record's `device`; `workload.device` keeps one.
//! * `opcode`: `R` (read) or `W` (write), either case.
//! * `offset`, `length`: bytes.
//! * `timestamp`: microseconds (Unix time in the release; any origin works, times are relative
//!   to the first record).
//!
//! The release holds about 1,000 volumes in one file ordered by time, so selecting one volume is
//! the usual way to replay it; the reference generator of placement traces writes the same
//! schema with volume 0 (`../shared/reference/placement_traces.c`).

use super::{eq_ic, excerpt, Fields, ParseResult, Parsed, Plain, Raw};
use crate::TraceOp;

pub(crate) fn parse(line: &[u8]) -> ParseResult {
    fast(line).map_or_else(|| general(line), |raw| Ok(Parsed::Record(raw)))
}

/// The plain form, `digits,R|W|r|w,digits,digits,digits` with no spaces (see `Plain`); anything
/// else goes to `general`.
#[inline]
fn fast(line: &[u8]) -> Option<Raw> {
    let mut p = Plain::new(line);
    let device = p.digits()?;
    p.byte(b',')?;
    let op = match p.any()? {
        b'R' | b'r' => TraceOp::Read,
        b'W' | b'w' => TraceOp::Write,
        _ => return None,
    };
    p.byte(b',')?;
    let offset_bytes = p.digits()?;
    p.byte(b',')?;
    let length_bytes = p.digits()?;
    p.byte(b',')?;
    let micros = p.digits()?;
    p.done().then_some(Raw {
        op,
        offset_bytes,
        length_bytes,
        time_ns: u128::from(micros) * 1000,
        device,
    })
}

fn general(line: &[u8]) -> ParseResult {
    let f = Fields::csv(line);
    f.expect_exactly(5, "comma-separated")?;
    let device = f.u64(0, "device_id")?;
    let opcode = f.get(1);
    let op = if eq_ic(opcode, b"R") {
        TraceOp::Read
    } else if eq_ic(opcode, b"W") {
        TraceOp::Write
    } else {
        return Err(format!(
            "field 2 (opcode): expected R or W, found \"{}\"",
            excerpt(opcode, 40)
        ));
    };
    let offset_bytes = f.u64(2, "offset (bytes)")?;
    let length_bytes = f.u64(3, "length (bytes)")?;
    let micros = f.u64(4, "timestamp (microseconds)")?;
    Ok(Parsed::Record(Raw {
        op,
        offset_bytes,
        length_bytes,
        time_ns: u128::from(micros) * 1000,
        device,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast path accepts only lines the general parser reads the same way.
    #[test]
    fn fast_path_agrees_with_the_general_parser() {
        let lines: &[&[u8]] = &[
            b"419,W,7471104,4096,1577808000000009",
            b"0,r,0,512,1",
            b"0, W,0,512,1",
            b"0,W ,0,512,1",
            b"0,Write,0,512,1",
            b"0,X,0,512,1",
            b"0,W,0,512",
            b"0,W,0,512,1,2",
            b"+0,W,0,512,1",
            b"0,W,18446744073709551616,512,1",
            b"0,W,0,512,1.5",
        ];
        for line in lines {
            let general = general(line);
            if let Some(raw) = fast(line) {
                assert_eq!(Ok(Parsed::Record(raw)), general, "{line:?}");
            }
            assert_eq!(parse(line), general, "{line:?}");
        }
        assert!(fast(b"419,W,7471104,4096,1577808000000009").is_some());
    }

    #[test]
    fn parses_lines() {
        assert_eq!(
            parse(b"419,W,7471104,4096,1577808000000009").unwrap(),
            Parsed::Record(Raw {
                op: TraceOp::Write,
                offset_bytes: 7_471_104,
                length_bytes: 4096,
                time_ns: 1_577_808_000_000_009_000,
                device: 419
            })
        );
        let Parsed::Record(r) = parse(b"3, r ,512,8192,7").unwrap() else { panic!() };
        assert_eq!(
            (r.op, r.offset_bytes, r.length_bytes, r.time_ns),
            (TraceOp::Read, 512, 8192, 7000)
        );
        assert!(parse(b"1,T,0,4096,1").unwrap_err().contains("field 2 (opcode)"));
        assert!(parse(b"1,W,0,4096").unwrap_err().contains("expected 5 comma-separated fields"));
        assert!(parse(b"x,W,0,4096,1").unwrap_err().contains("field 1 (device_id)"));
        assert!(parse(b"1,W,-4,4096,1").unwrap_err().contains("field 3 (offset (bytes))"));
        assert!(parse(b"1,W,0,4096,1.5").unwrap_err().contains("field 5 (timestamp"));
    }
}
