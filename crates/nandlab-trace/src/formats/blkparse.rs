//! Default text output of `blkparse` (blktrace), format name `blkparse`.
//!
//! Each event line starts with blkparse's fixed header
//! (`"%3d,%-3d %2d %8d %5d.%09lu %5u %2s %3s "`), then action-specific text:
//!
//! ```text
//!   8,0    3        1     0.000000000   697  Q   W 223490 + 8 [kjournald]
//!   8,0    1        2     0.000401733     0  C   W 223490 + 8 [0]
//! ```
//!
//! fields: `maj,min cpu seq seconds.nanoseconds pid action rwbs ...`.
//!
//! Rules:
//!
//! * Only completion events (action `C`) become records; every other action
//!   (Q, G, I, D, M, P, U, A, X, m, ...) is validated (device, cpu, sequence,
//!   time, pid) and skipped. A completion's text is `sector + nsectors [err]`,
//!   or `sector [err]` when it carries no sectors; a SCSI pass-through
//!   completion (`(cdb bytes) [err]`) is skipped.
//! * The op comes from the RWBS column: contains `D` -> Trim; otherwise `W` ->
//!   Write; otherwise `R` -> Read; otherwise (a leading `F` with `N`, i.e. a
//!   flush-only request) -> Flush. A `W` completion with zero sectors and an
//!   `F` in RWBS (an empty pre-flush write) is also a Flush. `N`-only
//!   completions carry no data and are skipped.
//! * `device` = `maj << 20 | min` (the kernel's `dev_t` packing).
//! * time is the event time (seconds since the trace started, exact ns).
//! * The summary blkparse prints after the events (`CPU0 (8,0):`,
//!   `Total (8,0):`, `Throughput (R/W): ...`, `Events (8,0): ...`,
//!   `Skips: ...`) ends the record stream: everything after it is ignored.

use super::{excerpt, parse_u64, sectors_to_bytes, Fields, ParseResult, Parsed, Raw};
use crate::TraceOp;

/// Whether `line` starts blkparse's trailing summary section.
fn is_summary(line: &[u8]) -> bool {
    if let Some(rest) = line.strip_prefix(b"CPU") {
        let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        return digits > 0 && rest[digits..].starts_with(b" (");
    }
    line.starts_with(b"Total (")
        || line.starts_with(b"Throughput (")
        || line.starts_with(b"Events (")
        || line.starts_with(b"Skips:")
}

/// Parses `maj,min` into `maj << 20 | min`.
pub(crate) fn parse_device(s: &[u8]) -> Option<u64> {
    let comma = s.iter().position(|&b| b == b',')?;
    let maj = parse_u64(&s[..comma])?;
    let min = parse_u64(&s[comma + 1..])?;
    if min >= 1 << 20 || maj >= 1 << 44 {
        return None;
    }
    Some(maj << 20 | min)
}

pub(crate) fn parse(line: &[u8]) -> ParseResult {
    let f = Fields::whitespace(line);
    let dev_field = f.get(0);
    let device = match parse_device(dev_field) {
        Some(d) => d,
        None if is_summary(line) => return Ok(Parsed::End),
        None => {
            return Err(format!(
                "field 1 (device): expected \"major,minor\" as printed by blkparse, found \"{}\"",
                excerpt(dev_field, 40)
            ))
        }
    };
    f.expect_at_least(7, "whitespace-separated")?;
    f.u64(1, "cpu")?;
    f.u64(2, "sequence")?;
    let time_ns = f.decimal_scaled(3, 9, "time (seconds)")?;
    f.u64(4, "pid")?;
    if f.get(5) != b"C" {
        return Ok(Parsed::Skip);
    }
    let rwbs = f.get(6);
    if !rwbs.iter().all(|b| b.is_ascii_uppercase()) {
        return Err(format!(
            "field 7 (RWBS): expected letters such as R, W, D, F, N, S, M, found \"{}\"",
            excerpt(rwbs, 40)
        ));
    }
    if f.get(7).starts_with(b"(") {
        return Ok(Parsed::Skip); // SCSI pass-through completion: no block range
    }
    f.expect_at_least(8, "whitespace-separated")?;
    let sector = f.u64(7, "sector")?;
    let nsectors = if f.get(8) == b"+" { f.u64(9, "sector count")? } else { 0 };
    let has = |c: u8| rwbs.contains(&c);
    let op = if has(b'D') {
        TraceOp::Trim
    } else if has(b'W') {
        if nsectors == 0 && has(b'F') {
            TraceOp::Flush
        } else {
            TraceOp::Write
        }
    } else if has(b'R') {
        TraceOp::Read
    } else if rwbs.first() == Some(&b'F') {
        TraceOp::Flush
    } else {
        return Ok(Parsed::Skip);
    };
    let (offset_bytes, length_bytes) = if op == TraceOp::Flush {
        (0, 0)
    } else {
        (sectors_to_bytes(sector, 7, "sector")?, sectors_to_bytes(nsectors, 9, "sector count")?)
    };
    Ok(Parsed::Record(Raw { op, offset_bytes, length_bytes, time_ns, device }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(l: &[u8]) -> Raw {
        match parse(l).unwrap() {
            Parsed::Record(r) => r,
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn completions() {
        let r = rec(b"  8,16   1        2     1.000401733     0  C   W 223490 + 8 [0]");
        assert_eq!(
            r,
            Raw {
                op: TraceOp::Write,
                offset_bytes: 223_490 * 512,
                length_bytes: 4096,
                time_ns: 1_000_401_733,
                device: 8 << 20 | 16
            }
        );
        assert_eq!(rec(b"8,0 0 3 0.1 0 C RM 10 + 2 [0]").op, TraceOp::Read);
        assert_eq!(rec(b"8,0 0 3 0.1 0 C DS 10 + 2 [0]").op, TraceOp::Trim);
        assert_eq!(rec(b"8,0 0 3 0.1 0 C FN 0 [0]").op, TraceOp::Flush);
        assert_eq!(rec(b"8,0 0 3 0.1 0 C FWS 0 [0]").op, TraceOp::Flush);
        assert_eq!(rec(b"8,0 0 3 0.1 0 C WS 8 + 8 (   120) [0]").length_bytes, 4096);
        assert_eq!(parse(b"8,0 0 3 0.1 0 C N (12 00 ..) [0]"), Ok(Parsed::Skip));
        assert_eq!(parse(b"8,0 0 3 0.1 0 C N 0 [0]"), Ok(Parsed::Skip));
        assert_eq!(parse(b"8,0 0 3 0.1 697 Q W 1 + 8 [dd]"), Ok(Parsed::Skip));
        assert_eq!(parse(b"8,0 0 3 0.1 697 P N [dd]"), Ok(Parsed::Skip));
    }

    #[test]
    fn summary_and_errors() {
        assert_eq!(parse(b"CPU0 (8,0):"), Ok(Parsed::End));
        assert_eq!(parse(b"Total (8,0):"), Ok(Parsed::End));
        assert!(parse(b"CPU (8,0):").is_err());
        assert!(parse(b"hello world").unwrap_err().contains("field 1 (device)"));
        assert!(parse(b"8,0 0 3 x 0 C W 1 + 8 [0]")
            .unwrap_err()
            .contains("field 4 (time (seconds))"));
        assert!(parse(b"8,0 0 3 0.1 0 C W x + 8 [0]").unwrap_err().contains("field 8 (sector)"));
        assert!(parse(b"8,0 0 3 0.1 0").unwrap_err().contains("at least 7"));
    }
}
