//! Goal: synthetic workloads have the lengths, address ranges and locality they claim.
//! Method: generate from small resolved configs and count.

use super::{Synthetic, WorkItem};
use crate::config::Config;
use crate::request::RequestKind;

fn synth(overrides: &[&str]) -> (Synthetic, u64) {
    let mut o = vec!["device.blocks=64", "device.pages_per_block=16"];
    o.extend_from_slice(overrides);
    let r = Config::from_overrides(&o).unwrap().resolve().unwrap();
    (Synthetic::new(&r.workload), r.geometry.logical_pages)
}

#[test]
fn prefill_then_warmup_then_measurement() {
    let (w, lp) = synth(&["workload.warmup_passes=1", "workload.passes=2"]);
    let items: Vec<WorkItem> = w.collect();
    let marker = items.iter().position(|i| *i == WorkItem::StartMeasurement).unwrap();
    assert_eq!(marker as u64, 2 * lp + 1, "prefill, its end, one warm-up pass come first");
    assert_eq!(items[lp as usize], WorkItem::PrefillDone, "the prefill's end follows it");
    assert_eq!(items.iter().filter(|i| **i == WorkItem::PrefillDone).count(), 1);
    assert_eq!(items.len() as u64, 2 + 4 * lp);
    // The prefill writes every page once in order.
    for (i, item) in items[..lp as usize].iter().enumerate() {
        let WorkItem::Request(r) = item else { panic!() };
        assert_eq!(r.offset_bytes, i as u64 * 4096);
        assert_eq!(r.arrival_ns, None);
    }
}

#[test]
fn hotcold_locality() {
    let (w, lp) = synth(&[
        "workload.kind=hotcold",
        "workload.prefill=false",
        "workload.warmup_passes=0",
        "workload.passes=200",
        "workload.hot_access_fraction=0.8",
        "workload.hot_data_fraction=0.2",
    ]);
    let hot_pages = (lp as f64 * 0.2).round() as u64;
    let (mut hot, mut all) = (0u64, 0u64);
    for item in w {
        if let WorkItem::Request(r) = item {
            all += 1;
            hot += u64::from(r.offset_bytes / 4096 < hot_pages);
            assert!(r.offset_bytes / 4096 < lp);
        }
    }
    let frac = hot as f64 / all as f64;
    assert!((frac - 0.8).abs() < 0.01, "hot fraction {frac}");
}

#[test]
fn poisson_duration_spreads_arrivals() {
    let (w, _) = synth(&[
        "workload.prefill=false",
        "workload.warmup_passes=0",
        "workload.passes=20",
        "workload.arrival=poisson",
        "workload.duration_s=1000",
        "workload.read_fraction=0.25",
    ]);
    let mut last = 0;
    let mut reads = 0u64;
    let mut n = 0u64;
    for item in w {
        if let WorkItem::Request(r) = item {
            let a = r.arrival_ns.unwrap();
            assert!(a >= last);
            last = a;
            n += 1;
            reads += u64::from(r.kind == RequestKind::Read);
        }
    }
    let span_s = last as f64 / 1e9;
    assert!((span_s / 1000.0 - 1.0).abs() < 0.05, "span {span_s}");
    assert!((reads as f64 / n as f64 - 0.25).abs() < 0.02);
}

#[test]
fn default_phases_are_the_four_phase_run() {
    let (w, lp) = synth(&["workload.kind=phases", "workload.warmup_passes=0"]);
    let writes = w.filter(|i| matches!(i, WorkItem::Request(_))).count() as u64;
    let expected = lp + 4 * (40.0 / 21.6 * lp as f64).round() as u64;
    assert_eq!(writes, expected);
}
