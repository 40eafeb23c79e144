//! Format detection from file content.
//!
//! The first [`SAMPLE_LINES`] lines that are neither blank nor `#` comments
//! are sampled (after gunzipping, if the file is gzip). Then:
//!
//! 0. A file whose first line starts with `$$TR_IOREC` is an SRT trace (binary records after
//!    a text header); nothing else is sampled.
//! 1. If the first sampled line is a known header line -
//!    `Timestamp,Response,IOType,LUN,Offset,Size` (SYSTOR'17) or
//!    `version,time,op,size,lbn` (CloudPhysics) - that format is chosen.
//! 2. Otherwise every headerless format's own line parser is tried on the
//!    sampled lines in order; the candidates are the formats that accept the
//!    longest run of sampled lines from the start (normally all of them; if
//!    the file has a malformed line among the first 50, the format that got
//!    furthest is chosen and reading it later reports that line as a `Parse`
//!    error with its line number, which is more useful than "unknown"). The
//!    parsers are strict about field counts, separators and value shapes, so
//!    for instance MSR needs 7 comma-separated fields with `Read`/`Write` in
//!    the 4th, Tencent 5 comma-separated integers with `0`/`1` in the 4th,
//!    SPC `r`/`w` in the 4th of at least 5, SYSTOR (headerless) 6 fields with
//!    `R`/`W` in the 3rd, Alibaba 5 comma-separated fields with `R`/`W` in the 2nd,
//!    blkparse a `maj,min` first token. CloudPhysics is
//!    only detected by its header.
//! 3. DiskSim and MQSim lines have the same five whitespace-separated
//!    columns. MQSim's time column is integer nanoseconds and its 5th column
//!    is 0/1, so its parser rejects any line whose time contains a `.`: **a
//!    `.` in the time column of any sampled line means DiskSim
//!    (milliseconds); no `.` anywhere means MQSim (nanoseconds)**, unless the
//!    5th column holds a value other than 0/1, which only DiskSim (flags)
//!    allows.
//! 4. Exactly one candidate: detected. None (every format rejects the first
//!    data line), or several: `UnknownFormat`,
//!    listing each format tried and why it was rejected, and asking the user
//!    to set `workload.format`.

use std::path::Path;

use crate::formats::{self, Parsed};
use crate::reader::LineReader;
use crate::{TraceError, TraceFormat};

/// How many non-blank, non-comment lines detection looks at.
pub const SAMPLE_LINES: usize = 50;

/// Detects the format of the trace at `path` from its first
/// [`SAMPLE_LINES`] non-blank, non-comment lines (see the module rules).
pub fn detect_format(path: &Path) -> Result<TraceFormat, TraceError> {
    let mut lines = LineReader::open(path)?;
    let mut sample: Vec<(u64, Vec<u8>)> = Vec::with_capacity(SAMPLE_LINES);
    while sample.len() < SAMPLE_LINES && lines.advance()? {
        if !lines.is_ignorable() {
            // A binary SRT trace: its text header's first line is all there is to sample.
            if sample.is_empty() && lines.text().starts_with(formats::srt::MAGIC) {
                return Ok(TraceFormat::Srt);
            }
            sample.push((lines.line(), lines.text().to_vec()));
        }
    }
    detect_sample(path, &sample)
}

/// How far `format` gets through the sample: the number of data lines it
/// accepts before the first line it rejects, and that rejection (`None` when
/// it accepts the whole sample).
fn check(format: TraceFormat, sample: &[(u64, Vec<u8>)]) -> (usize, Option<(u64, String)>) {
    let mut data_lines = 0usize;
    for (line, text) in sample {
        if formats::is_header(format, text) {
            continue;
        }
        match formats::parse_line(format, text) {
            Ok(Parsed::Record(_)) | Ok(Parsed::Skip) => data_lines += 1,
            Ok(Parsed::End) => break,
            Err(reason) => return (data_lines, Some((*line, reason))),
        }
    }
    if data_lines == 0 {
        return (0, Some((sample[0].0, "no data lines".to_string())));
    }
    (data_lines, None)
}

pub(crate) fn detect_sample(
    path: &Path,
    sample: &[(u64, Vec<u8>)],
) -> Result<TraceFormat, TraceError> {
    let Some((_, first)) = sample.first() else {
        return Err(TraceError::Empty { path: path.to_path_buf() });
    };
    if let Some(f) = TraceFormat::ALL.into_iter().find(|&f| formats::is_header(f, first)) {
        return Ok(f);
    }
    let mut best = 0usize;
    let mut candidates = Vec::new();
    let mut reasons = Vec::new();
    for f in TraceFormat::ALL {
        if f == TraceFormat::Cloudphysics {
            reasons.push("cloudphysics: needs the header line \"version,time,op,size,lbn\"".into());
            continue;
        }
        if f == TraceFormat::Srt {
            reasons.push("srt: needs \"$$TR_IOREC\" at the start of the file".into());
            continue;
        }
        let (accepted, failure) = check(f, sample);
        if let Some((line, reason)) = failure {
            reasons.push(format!("{}: line {}: {}", f.name(), line, reason));
        }
        if accepted > 0 && accepted >= best {
            if accepted > best {
                candidates.clear();
                best = accepted;
            }
            candidates.push(f);
        }
    }
    if candidates.contains(&TraceFormat::Disksim) && candidates.contains(&TraceFormat::Mqsim) {
        candidates.retain(|&f| f != TraceFormat::Disksim);
    }
    let names: Vec<&str> = TraceFormat::ALL.iter().map(|f| f.name()).collect();
    match candidates.as_slice() {
        [one] => Ok(*one),
        [] => Err(TraceError::UnknownFormat {
            path: path.to_path_buf(),
            message: format!(
                "cannot detect the trace format from the first {} line{} (tried {}); set \
                 workload.format to one of: {}",
                sample.len(),
                if sample.len() == 1 { "" } else { "s" },
                reasons.join("; "),
                names.join(", ")
            ),
        }),
        many => Err(TraceError::UnknownFormat {
            path: path.to_path_buf(),
            message: format!(
                "ambiguous trace format: the first {} data lines are valid as {}; set \
                 workload.format to the right one",
                best,
                many.iter().map(|f| f.name()).collect::<Vec<_>>().join(" and ")
            ),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(lines: &[&str]) -> Vec<(u64, Vec<u8>)> {
        lines.iter().enumerate().map(|(i, l)| (i as u64 + 1, l.as_bytes().to_vec())).collect()
    }

    fn detect(lines: &[&str]) -> Result<TraceFormat, TraceError> {
        detect_sample(Path::new("t"), &sample(lines))
    }

    #[test]
    fn detects_each_shape() {
        use TraceFormat::*;
        assert_eq!(detect(&["128166385295514663,hm,0,Write,9056014336,2048,2833"]).unwrap(), Msr);
        assert_eq!(detect(&["0,20941264,8192,W,0.551706"]).unwrap(), Spc);
        assert_eq!(detect(&["5265.313 0 6357144 8 0", "5266 0 1 8 1"]).unwrap(), Disksim);
        assert_eq!(detect(&["938513000 4 264719034 16 0"]).unwrap(), Mqsim);
        assert_eq!(detect(&["10 4 264719034 16 2"]).unwrap(), Disksim);
        assert_eq!(
            detect(&["  8,0    3        1     0.000000000   697  Q   W 223490 + 8 [kjournald]"])
                .unwrap(),
            Blkparse
        );
        assert_eq!(detect(&["1538323200,4247200,128,1,1058"]).unwrap(), Tencent);
        assert_eq!(detect(&["Timestamp,Response,IOType,LUN,Offset,Size"]).unwrap(), Systor);
        assert_eq!(
            detect(&["1456095145.133076000,0.000806000,R,0,899056122368,131072"]).unwrap(),
            Systor
        );
        assert_eq!(
            detect(&["version,time,op,size,lbn", "1,5633898,2a,512,42932745"]).unwrap(),
            Cloudphysics
        );
        assert_eq!(detect(&["419,W,7471104,4096,1577808000000009"]).unwrap(), Alibaba);
    }

    #[test]
    fn unknown_lists_reasons() {
        let e = detect(&["1 0 write 36 4"]).unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, TraceError::UnknownFormat { .. }));
        assert!(msg.contains("set workload.format"), "{msg}");
        assert!(msg.contains("msr: line 1: expected 7 comma-separated fields, found 1"), "{msg}");
        assert!(msg.contains("disksim: line 1: field 3 (start sector)"), "{msg}");
        assert!(matches!(detect(&[]), Err(TraceError::Empty { .. })));
    }

    #[test]
    fn malformed_line_in_sample_picks_longest_prefix() {
        let lines = [
            "128166385295514663,hm,0,Write,9056014336,2048,2833",
            "128166385295514663,hm,0,Write,9056014336,2048,2833",
            "128166385295514663,hm,0",
        ];
        assert_eq!(detect(&lines).unwrap(), TraceFormat::Msr);
        // DiskSim/MQSim tie on the same prefix: MQSim (no '.' seen).
        assert_eq!(detect(&["10 4 1 16 0", "bad"]).unwrap(), TraceFormat::Mqsim);
        // A '.' later in the sample: MQSim stops there, DiskSim goes further.
        assert_eq!(detect(&["10 4 1 16 0", "10.5 4 1 16 0", "bad"]).unwrap(), TraceFormat::Disksim);
    }
}
