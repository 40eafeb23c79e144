//! Detection and `scan` statistics on the real samples in /work/shared/traces
//! (read in place, never copied). Expected values are the ones published in
//! each sample's SOURCE.md. Each test is skipped, with a note, when the
//! samples are not available.

mod common;

use std::collections::HashSet;

use common::shared_trace;
use nandlab_trace::{
    compact_footprint_bytes, detect_format, open, scan, TraceFormat, TraceOptions, TraceSummary,
};

struct Expected {
    file: &'static str,
    format: TraceFormat,
    records: u64,
    reads: u64,
    writes: u64,
    bytes_read: u64,
    bytes_written: u64,
    min_offset: u64,
    max_end: u64,
    devices: usize,
    /// Distinct 4 KiB pages touched, counted per device.
    footprint_pages: u64,
}

const SAMPLES: &[Expected] = &[
    Expected {
        file: "msr-cambridge-hm0-excerpt/msr-cambridge1-sample.csv",
        format: TraceFormat::Msr,
        records: 1_000,
        reads: 508,
        writes: 492,
        bytes_read: 6_108_672,
        bytes_written: 3_580_928,
        min_offset: 17_625_088,
        max_end: 13_575_029_248,
        devices: 1,
        footprint_pages: 1_917,
    },
    Expected {
        file: "postmark-disksim-ssd/ssd-postmark-aligned2.trace.gz",
        format: TraceFormat::Disksim,
        records: 62_257,
        reads: 51_780,
        writes: 10_477,
        bytes_read: 5_236_285_440,
        bytes_written: 8_936_939_520,
        min_offset: 0,
        max_end: 22_892_470_272,
        devices: 1,
        footprint_pages: 1_533_388,
    },
    Expected {
        file: "iozone-disksim-ssd/ssd-iozone-aligned2-100K.trace.gz",
        format: TraceFormat::Disksim,
        records: 100_000,
        reads: 0,
        writes: 100_000,
        bytes_read: 0,
        bytes_written: 36_855_717_888,
        min_offset: 97_828_864,
        max_end: 17_255_907_328,
        devices: 1,
        footprint_pages: 271_320,
    },
    Expected {
        file: "tpcc-mqsim/tpcc-small.trace.gz",
        format: TraceFormat::Mqsim,
        records: 6_999,
        reads: 4_381,
        writes: 2_618,
        bytes_read: 36_315_136,
        bytes_written: 23_403_520,
        min_offset: 361_823_744,
        max_end: 232_713_410_560,
        devices: 16,
        footprint_pages: 20_470,
    },
    Expected {
        file: "umass-websearch-mqsim/wsrch-small.trace.gz",
        format: TraceFormat::Mqsim,
        records: 24_783,
        reads: 24_779,
        writes: 4,
        bytes_read: 382_085_120,
        bytes_written: 32_768,
        min_offset: 0,
        max_end: 17_902_723_072,
        devices: 6,
        footprint_pages: 93_029,
    },
    Expected {
        file: "tencent-cbs-excerpt/cloud_storage-sample.csv.gz",
        format: TraceFormat::Tencent,
        records: 50_000,
        reads: 24_521,
        writes: 25_479,
        bytes_read: 646_755_328,
        bytes_written: 871_636_992,
        min_offset: 0,
        max_end: 1_669_048_770_560,
        devices: 2038,
        footprint_pages: 348_239,
    },
    Expected {
        file: "cloudphysics-vscsi-excerpt/cloudPhysicsIO.csv.gz",
        format: TraceFormat::Cloudphysics,
        records: 113_872,
        reads: 46_974,
        writes: 66_898,
        bytes_read: 1_797_412_352,
        bytes_written: 2_408_565_760,
        min_offset: 8_162_816,
        max_end: 33_584_938_496,
        devices: 1,
        footprint_pages: 269_210,
    },
];

fn check(e: &Expected, s: &TraceSummary) {
    let got = (
        s.format,
        s.records,
        s.reads,
        s.writes,
        s.bytes_read,
        s.bytes_written,
        s.min_offset_bytes,
        s.max_end_bytes,
        s.devices.len(),
    );
    let want = (
        e.format,
        e.records,
        e.reads,
        e.writes,
        e.bytes_read,
        e.bytes_written,
        e.min_offset,
        e.max_end,
        e.devices,
    );
    assert_eq!(got, want, "{}", e.file);
    assert_eq!((s.trims, s.flushes), (0, 0), "{}", e.file);
}

#[test]
fn detects_and_scans_every_sample() {
    for e in SAMPLES {
        let Some(path) = shared_trace(e.file) else {
            continue;
        };
        assert_eq!(detect_format(&path).unwrap(), e.format, "{}", e.file);
        let s = scan(&path, &TraceOptions::default()).unwrap();
        check(e, &s);
        // Forcing the right format gives the same totals.
        let forced = TraceOptions { format: Some(e.format), device: None };
        assert_eq!(scan(&path, &forced).unwrap(), s, "{}", e.file);
        println!(
            "{}: {} records, {} reads / {} writes, {} B read / {} B written, \
             range {}..{}, {} device(s), duration {} ns",
            e.file,
            s.records,
            s.reads,
            s.writes,
            s.bytes_read,
            s.bytes_written,
            s.min_offset_bytes,
            s.max_end_bytes,
            s.devices.len(),
            s.duration_ns
        );
    }
}

#[test]
fn compact_footprint_matches_source_page_counts() {
    for e in SAMPLES {
        let Some(path) = shared_trace(e.file) else {
            continue;
        };
        let bytes = compact_footprint_bytes(&path, &TraceOptions::default(), 4096).unwrap();
        assert_eq!(bytes, e.footprint_pages * 4096, "{}", e.file);
    }
}

#[test]
fn systor_two_files_combined() {
    let files = [
        "systor17-excerpt/systor17-traces-sample.csv.gz",
        "systor17-excerpt/systor17-additional-sample.csv.gz",
    ];
    let mut total = (0u64, 0u64, 0u64, 0u64, 0u64);
    let (mut min_off, mut max_end) = (u64::MAX, 0u64);
    let mut pages = HashSet::new();
    for f in files {
        let Some(path) = shared_trace(f) else {
            return;
        };
        assert_eq!(detect_format(&path).unwrap(), TraceFormat::Systor, "{f}");
        let s = scan(&path, &TraceOptions::default()).unwrap();
        assert_eq!(s.records, 999, "{f}");
        assert_eq!(s.devices, vec![0], "{f}");
        total.0 += s.records;
        total.1 += s.reads;
        total.2 += s.writes;
        total.3 += s.bytes_read;
        total.4 += s.bytes_written;
        min_off = min_off.min(s.min_offset_bytes);
        max_end = max_end.max(s.max_end_bytes);
        println!("{f}: {s:?}");
        for rec in open(&path, &TraceOptions::default()).unwrap() {
            let rec = rec.unwrap();
            let end = rec.offset_bytes + rec.length_bytes;
            for page in rec.offset_bytes / 4096..end.div_ceil(4096) {
                pages.insert((rec.device, page));
            }
        }
    }
    assert_eq!(total, (1_998, 1_526, 472, 54_761_984, 5_052_928));
    assert_eq!((min_off, max_end), (139_255_196_672, 5_029_321_633_280));
    assert_eq!(pages.len(), 15_280);
}

#[test]
fn real_times_are_relative_and_monotonic() {
    for e in SAMPLES {
        let Some(path) = shared_trace(e.file) else {
            continue;
        };
        let mut prev = 0;
        let mut first = true;
        for rec in open(&path, &TraceOptions::default()).unwrap() {
            let rec = rec.unwrap();
            if first {
                assert_eq!(rec.time_ns, 0, "{}", e.file);
                first = false;
            }
            assert!(rec.time_ns >= prev, "{}:{}", e.file, rec.line);
            prev = rec.time_ns;
        }
    }
}

#[test]
fn device_selection_on_multi_device_samples() {
    // tpcc: 16 devices; keeping one keeps exactly that device's records.
    let Some(path) = shared_trace("tpcc-mqsim/tpcc-small.trace.gz") else {
        return;
    };
    let all = scan(&path, &TraceOptions::default()).unwrap();
    let mut sum = 0;
    for &d in &all.devices {
        let s = scan(&path, &TraceOptions { format: None, device: Some(d) }).unwrap();
        assert_eq!(s.devices, vec![d]);
        sum += s.records;
    }
    assert_eq!(sum, all.records);
    let none = scan(&path, &TraceOptions { format: None, device: Some(999) });
    assert!(matches!(none, Err(nandlab_trace::TraceError::Empty { .. })));
}

#[test]
fn mobigen_syscall_trace_is_not_a_block_trace() {
    let Some(path) = shared_trace("android-mobigen/mobigen.out.facebook.gz") else {
        return;
    };
    let err = detect_format(&path).unwrap_err();
    assert!(matches!(err, nandlab_trace::TraceError::UnknownFormat { .. }), "{err}");
    assert!(err.to_string().contains("workload.format"));
}
