//! AddressFit in Error / Fold / Compact modes, and compact_footprint_bytes.

mod common;

use std::path::Path;

use common::write_tmp;
use nandlab_trace::{
    compact_footprint_bytes, AddressFit, FitMode, TraceError, TraceOp, TraceOptions, TraceRecord,
};

const KIB: u64 = 1024;
const MIB: u64 = 1024 * 1024;

fn rec(device: u64, offset: u64, length: u64, line: u64) -> TraceRecord {
    TraceRecord {
        op: TraceOp::Write,
        offset_bytes: offset,
        length_bytes: length,
        time_ns: 0,
        device,
        line,
    }
}

fn map(fit: &mut AddressFit, r: &TraceRecord) -> Result<Vec<(u64, u64)>, TraceError> {
    let mut out = Vec::new();
    fit.map(Path::new("trace.csv"), r, &mut out)?;
    Ok(out)
}

#[test]
fn error_mode_passes_through_or_fails() {
    let mut fit = AddressFit::new(FitMode::Error, MIB, false);
    assert_eq!(map(&mut fit, &rec(3, 4096, 8192, 1)).unwrap(), vec![(4096, 8192)]);
    assert_eq!(map(&mut fit, &rec(0, MIB - 512, 512, 2)).unwrap(), vec![(MIB - 512, 512)]);
    let e = map(&mut fit, &rec(0, MIB - 512, 1024, 17)).unwrap_err();
    assert_eq!(
        e,
        TraceError::OutOfRange {
            path: "trace.csv".into(),
            line: 17,
            offset_bytes: MIB - 512,
            length_bytes: 1024,
            logical_bytes: MIB,
        }
    );
    assert_eq!(
        e.to_string(),
        "trace.csv:17: request at byte offset 1048064 (length 1024 bytes) does not fit in the \
         device's logical space of 1048576 bytes; set workload.fit = \"fold\" or \"compact\", \
         or use a larger device"
    );
}

#[test]
fn fold_mode_wraps_start_and_clamps_end() {
    let mut fit = AddressFit::new(FitMode::Fold, MIB, true);
    assert_eq!(map(&mut fit, &rec(0, 4096, 4096, 1)).unwrap(), vec![(4096, 4096)]);
    assert_eq!(map(&mut fit, &rec(0, 5 * MIB + 8192, 4096, 2)).unwrap(), vec![(8192, 4096)]);
    // Crossing the end after folding: clamped, not split.
    assert_eq!(
        map(&mut fit, &rec(9, 3 * MIB - 4096, 16 * KIB, 3)).unwrap(),
        vec![(MIB - 4096, 4096)]
    );
    // Device is ignored in Fold mode.
    assert_eq!(map(&mut fit, &rec(7, 4096, 4096, 4)).unwrap(), vec![(4096, 4096)]);
}

#[test]
fn compact_mode_dense_chunks_in_first_touch_order() {
    let chunk = 4096;
    let mut fit = AddressFit::new(FitMode::Compact { chunk_bytes: chunk }, 5 * chunk, false);
    // First touch: chunk 1_000_000 -> index 0, inner offset kept.
    let far = 1_000_000 * chunk;
    assert_eq!(map(&mut fit, &rec(0, far + 100, 200, 1)).unwrap(), vec![(100, 200)]);
    // A request spanning two new chunks (5 and 6) -> indices 1 and 2, which
    // are adjacent, so the pieces merge into one extent.
    assert_eq!(
        map(&mut fit, &rec(0, 5 * chunk + 4000, 200, 2)).unwrap(),
        vec![(chunk + 4000, 200)]
    );
    // A request spanning a new chunk (999_999 -> index 3) and a known one
    // (1_000_000 -> index 0): two extents.
    assert_eq!(
        map(&mut fit, &rec(0, far - 96, 200, 3)).unwrap(),
        vec![(3 * chunk + 4000, 96), (0, 104)]
    );
    // Re-touching known chunks maps to the same place.
    assert_eq!(map(&mut fit, &rec(0, 6 * chunk, 10, 4)).unwrap(), vec![(2 * chunk, 10)]);
    assert_eq!(fit.chunks_used(), 4);
    // Index 4 still fits (5 chunks of space), index 5 does not.
    assert_eq!(map(&mut fit, &rec(0, 77 * chunk, chunk, 5)).unwrap(), vec![(4 * chunk, chunk)]);
    let e = map(&mut fit, &rec(0, 78 * chunk, 1, 6)).unwrap_err();
    assert!(matches!(e, TraceError::OutOfRange { line: 6, offset_bytes, logical_bytes, .. }
        if offset_bytes == 78 * chunk && logical_bytes == 5 * chunk));
    assert_eq!(fit.chunks_used(), 5);
}

#[test]
fn compact_keys_by_device_only_when_multi_device() {
    let mut multi = AddressFit::new(FitMode::Compact { chunk_bytes: 4096 }, MIB, true);
    assert_eq!(map(&mut multi, &rec(0, 8192, 4096, 1)).unwrap(), vec![(0, 4096)]);
    assert_eq!(map(&mut multi, &rec(1, 8192, 4096, 2)).unwrap(), vec![(4096, 4096)]);
    let mut single = AddressFit::new(FitMode::Compact { chunk_bytes: 4096 }, MIB, false);
    assert_eq!(map(&mut single, &rec(0, 8192, 4096, 1)).unwrap(), vec![(0, 4096)]);
    assert_eq!(map(&mut single, &rec(1, 8192, 4096, 2)).unwrap(), vec![(0, 4096)]);
}

#[test]
fn map_appends_flush_maps_to_nothing_and_bad_settings_are_errors() {
    let mut fit = AddressFit::new(FitMode::Error, MIB, false);
    let mut out = vec![(1, 1)];
    fit.map(Path::new("t"), &rec(0, 0, 512, 1), &mut out).unwrap();
    assert_eq!(out, vec![(1, 1), (0, 512)]);
    let flush = TraceRecord { op: TraceOp::Flush, ..rec(0, 0, 0, 2) };
    for mode in [FitMode::Error, FitMode::Fold, FitMode::Compact { chunk_bytes: 4096 }] {
        let mut fit = AddressFit::new(mode, MIB, false);
        assert_eq!(map(&mut fit, &flush).unwrap(), vec![], "{mode:?}");
    }
    let mut zero_chunk = AddressFit::new(FitMode::Compact { chunk_bytes: 0 }, MIB, false);
    assert!(matches!(map(&mut zero_chunk, &rec(0, 0, 1, 1)), Err(TraceError::Config { .. })));
    let mut zero_dev = AddressFit::new(FitMode::Fold, 0, false);
    assert!(matches!(map(&mut zero_dev, &rec(0, 0, 1, 1)), Err(TraceError::Config { .. })));
    assert_eq!(FitMode::Compact { chunk_bytes: 1 }.name(), "compact");
}

#[test]
fn compact_footprint_counts_device_chunks() {
    // MSR lines: disk 0 touches chunks {0}, {1,2} and {0} again; disk 1 chunk {0}.
    let p = write_tmp(
        "fit-footprint.csv",
        b"1,h,0,Write,0,4096,1\n2,h,0,Read,4096,8192,1\n3,h,0,Write,100,10,1\n4,h,1,Write,0,512,1\n",
    );
    let all = TraceOptions::default();
    assert_eq!(compact_footprint_bytes(&p, &all, 4096).unwrap(), 4 * 4096);
    let dev0 = TraceOptions { format: None, device: Some(0) };
    assert_eq!(compact_footprint_bytes(&p, &dev0, 4096).unwrap(), 3 * 4096);
    assert_eq!(compact_footprint_bytes(&p, &all, 1 << 20).unwrap(), 2 << 20);
    assert!(matches!(compact_footprint_bytes(&p, &all, 0), Err(TraceError::Config { .. })));
    // A device sized by the footprint fits the whole trace under Compact.
    let size = compact_footprint_bytes(&p, &all, 4096).unwrap();
    let mut fit = AddressFit::new(FitMode::Compact { chunk_bytes: 4096 }, size, true);
    let mut out = Vec::new();
    for r in nandlab_trace::open(&p, &all).unwrap() {
        fit.map(&p, &r.unwrap(), &mut out).unwrap();
    }
    assert_eq!(out, vec![(0, 4096), (4096, 8192), (100, 10), (3 * 4096, 512)]);
}
