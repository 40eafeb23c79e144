//! Trace analysis on hand-made traces whose figures are worked out by hand (module doc of
//! `nandlab_trace::analyze` for the definitions).

use nandlab_trace::analyze::{analyze_records, AnalyzeOptions, Suite};
use nandlab_trace::{TraceError, TraceOp, TraceRecord};

fn rec(op: TraceOp, offset_bytes: u64, length_bytes: u64, time_ns: u64) -> TraceRecord {
    TraceRecord { op, offset_bytes, length_bytes, time_ns, device: 0, line: 0 }
}

fn w(offset: u64, len: u64, t: u64) -> Result<TraceRecord, TraceError> {
    Ok(rec(TraceOp::Write, offset, len, t))
}

const MS: u64 = 1_000_000;

#[test]
fn hand_worked_trace_gives_every_figure() {
    let trace = vec![
        w(0, 4096, 0),         // new: pages 0
        w(4096, 4096, MS),     // sequential (W0 ended at 4096); new page 1
        w(0, 8192, 2 * MS),    // rewrites 8192 B: page 0 after 2 ms, page 1 after 1 ms
        w(8704, 1024, 3 * MS), // unaligned; page 2 sectors 1-2
        Ok(rec(TraceOp::Read, 0, 4096, 3 * MS)),
        w(8192, 1024, 4_000 * MS), // sequential (W2 ended at 8192); sector 1 again: 512 B
        Ok(rec(TraceOp::Flush, 0, 0, 4_000 * MS)),
    ];
    let a = analyze_records(trace, &AnalyzeOptions::default()).unwrap();
    assert_eq!(a.requests, 7);
    assert_eq!((a.read_requests, a.write_requests, a.flush_requests), (1, 5, 1));
    assert_eq!(a.read_bytes, 4096);
    assert_eq!(a.write_bytes, 4096 + 4096 + 8192 + 1024 + 1024);
    assert_eq!(a.data_transferred_bytes(), 18432 + 4096);
    assert_eq!(a.rewrite_bytes, 8192 + 512);
    assert!((a.rewrite_ratio() - 8704.0 / 18432.0).abs() < 1e-12);
    assert_eq!(a.sequential_writes, 2);
    assert!((a.sequential_ratio() - 0.4).abs() < 1e-12);
    assert_eq!(a.aligned_writes, 3);
    assert!((a.alignment_ratio() - 0.6).abs() < 1e-12);
    // 4096 and 1024 occur twice each: the longer is typical.
    assert_eq!(a.write_lengths_top, vec![(4096, 2), (1024, 2), (8192, 1)]);
    assert_eq!(a.request_bytes_typical(), 4096);
    assert_eq!(a.written_pages, 3);
    assert_eq!((a.write_min_offset_bytes, a.write_max_end_bytes), (0, 9728));
    assert_eq!(a.duration_ns, 4_000 * MS);
    // Life cycles: 2 ms and 1 ms (page 0, 1), 3997 ms (page 2); only the first two are short.
    assert_eq!(a.rewrite_bytes_short, 8192);
    assert_eq!(a.life_cycle_ns.total(), 3);
    let bucket = |ns: u64| (64 - ns.leading_zeros()) as usize;
    assert_eq!(a.life_cycle_ns.counts[bucket(MS)], 1);
    assert_eq!(a.life_cycle_ns.counts[bucket(2 * MS)], 1);
    assert_eq!(a.life_cycle_ns.counts[bucket(3_997 * MS)], 1);
    // Seeks after the first write: 0, -8192, +512, -1536.
    let seeks: Vec<i64> = a.seek_series.points.iter().map(|p| p.seek_bytes).collect();
    assert_eq!(seeks, vec![0, -8192, 512, -1536]);
    assert_eq!(a.seek_bytes.counts[0], 1);
    assert_eq!(a.lba_series.points.len(), 5);
    // 44 % of the written bytes rewrite data under 1 s old, rewrite ratio 47 %: Buffer.
    assert!((a.short_rewrite_share() - 8192.0 / 18432.0).abs() < 1e-12);
    assert_eq!(a.suite().0, Suite::Buffer);
}

#[test]
fn a_sequential_copy_is_a_transfer_workload() {
    let trace: Vec<_> = (0..1000).map(|i| w(i * 65536, 65536, i * MS)).collect();
    let a = analyze_records(trace, &AnalyzeOptions::default()).unwrap();
    assert_eq!(a.sequential_writes, 999);
    assert_eq!(a.rewrite_bytes, 0);
    assert_eq!(a.request_bytes_typical(), 65536);
    assert_eq!(a.alignment_ratio(), 1.0);
    let (suite, reason) = a.suite();
    assert_eq!(suite, Suite::Transfer, "{reason}");
    assert!(reason.contains("99.9 %"), "{reason}");
}

#[test]
fn the_sequential_window_finds_interleaved_streams() {
    // Two streams far apart, alternating: each write continues the write two back.
    let trace = |n: u64| -> Vec<_> {
        (0..n).map(|i| w(if i % 2 == 0 { 0 } else { 1 << 30 } + (i / 2) * 4096, 4096, i)).collect()
    };
    let with = |window: usize| AnalyzeOptions { sequential_window: window, ..Default::default() };
    let a = analyze_records(trace(100), &with(10)).unwrap();
    assert_eq!(a.sequential_writes, 98);
    let a = analyze_records(trace(100), &with(1)).unwrap();
    assert_eq!(a.sequential_writes, 0);
    let a = analyze_records(trace(100), &with(0)).unwrap();
    assert_eq!(a.sequential_writes, 0);
}

#[test]
fn one_page_updated_over_and_over_is_a_gc_workload() {
    let trace: Vec<_> = (0..100).map(|i| w(4096, 4096, i * 10_000 * MS)).collect();
    let a = analyze_records(trace, &AnalyzeOptions::default()).unwrap();
    assert_eq!(a.rewrite_bytes, 99 * 4096);
    assert_eq!(a.rewrite_bytes_short, 0);
    assert_eq!(a.written_pages, 1);
    assert_eq!(a.suite().0, Suite::Gc);
}

#[test]
fn scattered_new_writes_are_a_mapping_workload() {
    // Every 4 KiB page of 1 GiB once, in a scattered order (multiplication by an odd number
    // modulo a power of two is a permutation).
    let pages = 1u64 << 18;
    let trace: Vec<_> =
        (0..pages).map(|i| w(((i * 0x9E37_79B1) % pages) * 4096, 4096, i * MS)).collect();
    let a = analyze_records(trace, &AnalyzeOptions::default()).unwrap();
    assert_eq!(a.rewrite_bytes, 0);
    assert_eq!(a.written_pages, pages);
    assert!(a.sequential_ratio() < 0.01, "{}", a.sequential_ratio());
    assert_eq!(a.suite().0, Suite::Mapping);
}

#[test]
fn devices_do_not_share_addresses() {
    let mut r = rec(TraceOp::Write, 0, 4096, 0);
    let mut trace = vec![Ok(r.clone())];
    r.device = 7;
    trace.push(Ok(r.clone()));
    let a = analyze_records(trace, &AnalyzeOptions::default()).unwrap();
    assert_eq!(a.rewrite_bytes, 0);
    assert_eq!(a.written_pages, 2);
    // The second device's first write has no seek.
    assert_eq!(a.seek_bytes.total(), 0);
}

#[test]
fn a_read_only_trace_has_no_suite() {
    let trace = vec![Ok(rec(TraceOp::Read, 0, 4096, 0))];
    let a = analyze_records(trace, &AnalyzeOptions::default()).unwrap();
    assert_eq!(a.suite().0, Suite::None);
    assert_eq!(a.rewrite_ratio(), 0.0);
    assert_eq!(a.request_bytes_typical(), 0);
}

#[test]
fn sampled_series_stay_bounded_and_evenly_spread() {
    let options = AnalyzeOptions { sample_points: 10, ..Default::default() };
    let trace: Vec<_> = (0..1000).map(|i| w(i * 4096, 4096, i)).collect();
    let a = analyze_records(trace, &options).unwrap();
    let s = &a.lba_series;
    assert!(s.points.len() <= 10 && s.points.len() >= 5, "{}", s.points.len());
    assert_eq!(s.stride, 128);
    for (k, p) in s.points.iter().enumerate() {
        assert_eq!(p.write_index, k as u64 * s.stride);
    }
}

#[test]
fn an_error_stops_the_analysis() {
    let trace = vec![w(0, 4096, 0), Err(TraceError::Empty { path: "x".into() }), w(4096, 4096, 1)];
    assert!(analyze_records(trace, &AnalyzeOptions::default()).is_err());
}
