//! Line parsers, one module per trace format, plus the shared helpers they
//! use: allocation-free field splitting and exact integer / decimal parsing.
//!
//! A parser takes one line (already stripped of its line ending and of
//! surrounding whitespace; never blank, never a `#` comment) and returns a
//! [`Parsed`] value or a human-readable reason. The reader in `reader.rs` adds
//! the file name, line number and quoted line text to the reason.
//!
//! Times are returned as *absolute* nanoseconds in the trace's own clock
//! (`u128`, so no format can overflow); the reader turns them into times
//! relative to the first record.

pub(crate) mod alibaba;
pub(crate) mod blkparse;
pub(crate) mod cloudphysics;
pub(crate) mod disksim;
pub(crate) mod mqsim;
pub(crate) mod msr;
pub(crate) mod spc;
pub(crate) mod srt;
pub(crate) mod systor;
pub(crate) mod tencent;

use crate::{TraceFormat, TraceOp};

/// One request as read from a line, before time normalisation and filtering.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Raw {
    pub op: TraceOp,
    pub offset_bytes: u64,
    pub length_bytes: u64,
    /// Absolute time in the trace's clock, in nanoseconds.
    pub time_ns: u128,
    pub device: u64,
}

/// What a line turned out to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Parsed {
    /// An I/O request.
    Record(Raw),
    /// A well-formed line that carries no request (e.g. a blkparse queue event).
    Skip,
    /// The start of a trailer section (blkparse summary): stop reading.
    End,
}

pub(crate) type ParseResult = Result<Parsed, String>;

/// Parses one line in `format`.
pub(crate) fn parse_line(format: TraceFormat, line: &[u8]) -> ParseResult {
    match format {
        TraceFormat::Msr => msr::parse(line),
        TraceFormat::Spc => spc::parse(line),
        TraceFormat::Disksim => disksim::parse(line),
        TraceFormat::Mqsim => mqsim::parse(line),
        TraceFormat::Blkparse => blkparse::parse(line),
        TraceFormat::Tencent => tencent::parse(line),
        TraceFormat::Systor => systor::parse(line),
        TraceFormat::Cloudphysics => cloudphysics::parse(line),
        TraceFormat::Alibaba => alibaba::parse(line),
        // Binary: read record by record (`srt::SrtReader`), never line by line.
        TraceFormat::Srt => Err("an SRT trace is binary: its records are not lines".into()),
    }
}

/// Whether `line` is the header line of `format` (only SYSTOR and
/// CloudPhysics files have one).
pub(crate) fn is_header(format: TraceFormat, line: &[u8]) -> bool {
    match format {
        TraceFormat::Systor => systor::is_header(line),
        TraceFormat::Cloudphysics => cloudphysics::is_header(line),
        _ => false,
    }
}

/// Bytes per sector in every sector-addressed format.
pub(crate) const SECTOR: u64 = 512;

/// How many fields [`Fields`] keeps; further fields are only counted.
const MAX_FIELDS: usize = 16;

/// The fields of one line, as sub-slices of it (no allocation).
pub(crate) struct Fields<'a> {
    items: [&'a [u8]; MAX_FIELDS],
    /// Total number of fields on the line (may exceed `MAX_FIELDS`).
    count: usize,
}

impl<'a> Fields<'a> {
    /// Splits on commas; every field is trimmed of spaces and tabs.
    pub(crate) fn csv(line: &'a [u8]) -> Self {
        let mut f = Fields { items: [&[]; MAX_FIELDS], count: 0 };
        for part in line.split(|&b| b == b',') {
            if f.count < MAX_FIELDS {
                f.items[f.count] = trim(part);
            }
            f.count += 1;
        }
        f
    }

    /// Splits on runs of spaces and tabs.
    pub(crate) fn whitespace(line: &'a [u8]) -> Self {
        let mut f = Fields { items: [&[]; MAX_FIELDS], count: 0 };
        for part in line.split(|&b| b == b' ' || b == b'\t').filter(|p| !p.is_empty()) {
            if f.count < MAX_FIELDS {
                f.items[f.count] = part;
            }
            f.count += 1;
        }
        f
    }

    pub(crate) fn len(&self) -> usize {
        self.count
    }

    /// Field `i` (0-based); empty if absent.
    pub(crate) fn get(&self, i: usize) -> &'a [u8] {
        if i < self.count.min(MAX_FIELDS) {
            self.items[i]
        } else {
            &[]
        }
    }

    /// Error unless the line has exactly `n` fields.
    pub(crate) fn expect_exactly(&self, n: usize, kind: &str) -> Result<(), String> {
        if self.count == n {
            Ok(())
        } else {
            Err(format!("expected {n} {kind} fields, found {}", self.count))
        }
    }

    /// Error unless the line has at least `n` fields.
    pub(crate) fn expect_at_least(&self, n: usize, kind: &str) -> Result<(), String> {
        if self.count >= n {
            Ok(())
        } else {
            Err(format!("expected at least {n} {kind} fields, found {}", self.count))
        }
    }

    /// Field `i` as a non-negative decimal integer; `name` is used in errors.
    pub(crate) fn u64(&self, i: usize, name: &str) -> Result<u64, String> {
        let s = self.get(i);
        parse_u64(s).ok_or_else(|| bad(i, name, "a non-negative integer", s))
    }

    /// Field `i` as a non-negative decimal number (`123`, `123.456`, `.5`)
    /// in a unit with `frac_digits` decimal digits per nanosecond-scaled unit:
    /// returns `value * 10^frac_digits` exactly, digits beyond `frac_digits`
    /// are truncated. E.g. seconds -> ns uses 9, milliseconds -> ns uses 6.
    pub(crate) fn decimal_scaled(
        &self,
        i: usize,
        frac_digits: u32,
        name: &str,
    ) -> Result<u128, String> {
        let s = self.get(i);
        parse_decimal_scaled(s, frac_digits)
            .ok_or_else(|| bad(i, name, "a non-negative decimal number", s))
    }
}

/// Error text for field `i` (reported 1-based).
pub(crate) fn bad(i: usize, name: &str, expected: &str, found: &[u8]) -> String {
    format!("field {} ({}): expected {}, found \"{}\"", i + 1, name, expected, excerpt(found, 40))
}

/// Lossy UTF-8 rendering of `s`, cut to `max` characters with an ellipsis.
pub(crate) fn excerpt(s: &[u8], max: usize) -> String {
    let text = String::from_utf8_lossy(s);
    let mut out = String::new();
    for (n, c) in text.chars().enumerate() {
        if n == max {
            out.push('…');
            break;
        }
        out.push(c);
    }
    out
}

/// Trims ASCII spaces, tabs, CR and LF on both sides.
pub(crate) fn trim(s: &[u8]) -> &[u8] {
    let is_ws = |b: &u8| matches!(*b, b' ' | b'\t' | b'\r' | b'\n');
    let start = s.iter().position(|b| !is_ws(b)).unwrap_or(s.len());
    let end = s.iter().rposition(|b| !is_ws(b)).map_or(start, |p| p + 1);
    &s[start..end]
}

/// A cursor over one line for the fast paths of the formats read at scale (`mqsim`, `alibaba`):
/// it accepts only the plain form of a line (digits, single-character separators as the format
/// allows), and the format falls back to its general parser, which has the error messages, for
/// anything else. The fast path must never accept a line the general parser would read
/// differently; each format's tests run both on the same lines.
pub(crate) struct Plain<'a> {
    line: &'a [u8],
    at: usize,
}

impl<'a> Plain<'a> {
    #[inline]
    pub(crate) fn new(line: &'a [u8]) -> Self {
        Plain { line, at: 0 }
    }

    /// A run of ASCII digits (at least one) as a `u64`, or `None` (no digit, or overflow).
    #[inline]
    pub(crate) fn digits(&mut self) -> Option<u64> {
        let start = self.at;
        let mut v: u64 = 0;
        while let Some(&b) = self.line.get(self.at) {
            if !b.is_ascii_digit() {
                break;
            }
            v = v.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
            self.at += 1;
        }
        (self.at > start).then_some(v)
    }

    /// One byte equal to `b`.
    #[inline]
    pub(crate) fn byte(&mut self, b: u8) -> Option<()> {
        (self.line.get(self.at) == Some(&b)).then(|| self.at += 1)
    }

    /// One byte, whatever it is.
    #[inline]
    pub(crate) fn any(&mut self) -> Option<u8> {
        let b = *self.line.get(self.at)?;
        self.at += 1;
        Some(b)
    }

    /// A run of spaces and tabs (at least one).
    #[inline]
    pub(crate) fn blanks(&mut self) -> Option<()> {
        let start = self.at;
        while matches!(self.line.get(self.at), Some(b' ' | b'\t')) {
            self.at += 1;
        }
        (self.at > start).then_some(())
    }

    /// Whether the whole line was read.
    #[inline]
    pub(crate) fn done(&self) -> bool {
        self.at == self.line.len()
    }
}

/// Parses a plain decimal `u64` (digits only, optional leading `+`).
pub(crate) fn parse_u64(s: &[u8]) -> Option<u64> {
    let s = s.strip_prefix(b"+").unwrap_or(s);
    if s.is_empty() {
        return None;
    }
    let mut v: u64 = 0;
    for &b in s {
        if !b.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
    }
    Some(v)
}

/// See [`Fields::decimal_scaled`].
pub(crate) fn parse_decimal_scaled(s: &[u8], frac_digits: u32) -> Option<u128> {
    let s = s.strip_prefix(b"+").unwrap_or(s);
    let (int_part, frac_part) = match s.iter().position(|&b| b == b'.') {
        Some(p) => (&s[..p], &s[p + 1..]),
        None => (s, &s[s.len()..]),
    };
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    let mut v: u128 = 0;
    for &b in int_part {
        if !b.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u128::from(b - b'0'))?;
    }
    let mut frac: u128 = 0;
    let mut used = 0u32;
    for &b in frac_part {
        if !b.is_ascii_digit() {
            return None;
        }
        if used < frac_digits {
            frac = frac * 10 + u128::from(b - b'0');
            used += 1;
        }
    }
    while used < frac_digits {
        frac *= 10;
        used += 1;
    }
    v.checked_mul(10u128.checked_pow(frac_digits)?)?.checked_add(frac)
}

/// `sectors * 512`, or an error naming the field.
pub(crate) fn sectors_to_bytes(sectors: u64, i: usize, name: &str) -> Result<u64, String> {
    sectors.checked_mul(SECTOR).ok_or_else(|| {
        format!("field {} ({}): {} sectors overflow a 64-bit byte address", i + 1, name, sectors)
    })
}

/// Case-insensitive ASCII equality.
pub(crate) fn eq_ic(a: &[u8], b: &[u8]) -> bool {
    a.eq_ignore_ascii_case(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_csv_and_whitespace() {
        let f = Fields::csv(b"a, b ,c,,");
        assert_eq!(f.len(), 5);
        assert_eq!(f.get(1), b"b");
        assert_eq!(f.get(3), b"");
        assert_eq!(f.get(9), b"");
        let w = Fields::whitespace(b"  8,0   1 \t 2  ");
        assert_eq!(w.len(), 3);
        assert_eq!(w.get(0), b"8,0");
        assert_eq!(w.get(2), b"2");
        let many = Fields::csv(b"1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18");
        assert_eq!(many.len(), 18);
        assert_eq!(many.get(17), b"");
    }

    #[test]
    fn parses_integers() {
        assert_eq!(parse_u64(b"0"), Some(0));
        assert_eq!(parse_u64(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_u64(b"18446744073709551616"), None);
        assert_eq!(parse_u64(b"-1"), None);
        assert_eq!(parse_u64(b""), None);
        assert_eq!(parse_u64(b"1x"), None);
        assert_eq!(parse_u64(b"+7"), Some(7));
    }

    #[test]
    fn parses_decimals_exactly() {
        assert_eq!(
            parse_decimal_scaled(b"1456095145.133076000", 9),
            Some(1_456_095_145_133_076_000)
        );
        assert_eq!(parse_decimal_scaled(b"5265.703", 6), Some(5_265_703_000));
        assert_eq!(parse_decimal_scaled(b"0.1234567891", 9), Some(123_456_789));
        assert_eq!(parse_decimal_scaled(b".5", 9), Some(500_000_000));
        assert_eq!(parse_decimal_scaled(b"7.", 3), Some(7000));
        assert_eq!(parse_decimal_scaled(b"12", 0), Some(12));
        assert_eq!(parse_decimal_scaled(b".", 9), None);
        assert_eq!(parse_decimal_scaled(b"1.2.3", 9), None);
        assert_eq!(parse_decimal_scaled(b"1e5", 9), None);
        assert_eq!(parse_decimal_scaled(b"-1.0", 9), None);
        assert_eq!(parse_decimal_scaled(&[b'9'; 60], 9), None);
    }

    #[test]
    fn excerpt_truncates_on_char_boundaries() {
        assert_eq!(excerpt("héllo".as_bytes(), 3), "hél…");
        assert_eq!(excerpt(b"abc", 3), "abc");
    }
}
