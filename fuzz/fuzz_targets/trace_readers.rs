//! Every trace format reader on arbitrary content: detection, reading with each explicit format
//! (and with a device selected), `scan`, and address fitting (error, fold, compact onto a small
//! device, and `compact_footprint_bytes`). Any `Err` is fine; a panic, a hang (libFuzzer
//! `-timeout`) or unbounded memory (`-rss_limit_mb`) is a finding.
//!
//! Input: byte 0 = selector, then the file content.
//!   selector & 0x0f: 0..=9 the format in `TraceFormat::ALL` order, 10..=15 detection.
//!   selector & 0x10: keep only device 0 (`TraceOptions::device`).
//!   selector & 0x20: gzip the content first; with 0x40 also cut the compressed stream short.
//!   selector & 0x80: `multi_device` for compact fitting.
#![no_main]

use std::io::Write;

use libfuzzer_sys::fuzz_target;
use nandlab_fuzz::scratch_dir;
use nandlab_trace::{
    compact_footprint_bytes, detect_format, open, scan, AddressFit, FitMode, TraceFormat,
    TraceOptions,
};

/// Records read per execution at most (a 1 MiB input has fewer lines than this anyway).
const MAX_RECORDS: usize = 1 << 20;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, content)) = data.split_first() else { return };
    let path = scratch_dir().join("trace");
    let body: Vec<u8> = if selector & 0x20 != 0 {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(content).unwrap();
        let mut z = gz.finish().unwrap();
        if selector & 0x40 != 0 && !z.is_empty() {
            let cut = usize::from(content.first().copied().unwrap_or(1)) % z.len() + 1;
            z.truncate(z.len() - cut.min(z.len() - 1));
        }
        z
    } else {
        content.to_vec()
    };
    std::fs::write(&path, &body).unwrap();

    let detected = detect_format(&path).ok();
    let format = match selector & 0x0f {
        i @ 0..=9 => Some(TraceFormat::ALL[usize::from(i)]),
        _ => detected,
    };
    let Some(format) = format else { return };
    let device = (selector & 0x10 != 0).then_some(0);
    let options = TraceOptions { format: Some(format), device };
    let multi_device = selector & 0x80 != 0;

    let page = 512u64;
    let logical = 64 * page;
    let mut fits = [
        AddressFit::new(FitMode::Error, logical, multi_device),
        AddressFit::new(FitMode::Fold, logical, multi_device),
        AddressFit::new(FitMode::Compact { chunk_bytes: 4 * page }, logical, multi_device),
        AddressFit::new(FitMode::Compact { chunk_bytes: page }, logical, multi_device),
    ];
    let mut failed = [false; 4];
    let mut extents = Vec::new();
    let mut records = 0u64;
    let mut last_time = 0u64;
    let Ok(reader) = open(&path, &options) else { return };
    for rec in reader.take(MAX_RECORDS) {
        let Ok(rec) = rec else { break };
        records += 1;
        // Documented invariants of `TraceRecord`.
        assert!(rec.time_ns >= last_time, "time went backwards: {rec:?}");
        last_time = rec.time_ns;
        assert!(rec.offset_bytes.checked_add(rec.length_bytes).is_some(), "{rec:?}");
        if let Some(d) = device {
            assert_eq!(rec.device, d, "device selection let another device through");
        }
        for (fit, failed) in fits.iter_mut().zip(failed.iter_mut()) {
            if *failed {
                continue;
            }
            extents.clear();
            match fit.map(&path, &rec, &mut extents) {
                Ok(()) => {
                    for &(off, len) in &extents {
                        assert!(len > 0, "an empty extent for {rec:?}");
                        assert!(
                            off.checked_add(len).is_some_and(|end| end <= logical),
                            "extent {off}+{len} beyond the device ({logical}) for {rec:?} ({:?})",
                            fit.mode()
                        );
                    }
                    // Error and compact map every byte; fold clamps at the end.
                    let total: u64 = extents.iter().map(|e| e.1).sum();
                    match fit.mode() {
                        FitMode::Fold => assert!(total <= rec.length_bytes, "{rec:?}"),
                        _ => assert_eq!(total, rec.length_bytes, "{rec:?} ({:?})", fit.mode()),
                    }
                }
                Err(_) => *failed = true,
            }
        }
    }

    if let Ok(summary) = scan(&path, &options) {
        assert_eq!(summary.format, format);
        assert_eq!(summary.records, records, "scan and the reader disagree on the count");
    }
    let _ = compact_footprint_bytes(&path, &options, page);
});
