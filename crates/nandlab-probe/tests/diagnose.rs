//! Goal: the diagnosis names the paper's symptom on simulated devices built to have it, and
//! "none" on healthy ones (benchmarks paper, Figures 1–3; thresholds in `nandlab_probe::diagnose`).
//! Method: suite traces (`nandlab_trace::suites`) replayed with PBR on prefilled `sim:` devices:
//! - buffer: a 256 KiB FAB in front of the page FTL, 4 KiB aligned writes rewriting recent data;
//! - mapping: BAST with 4 log blocks under the Mapping suite's writes over a 2 GiB device;
//! - GC: greedy cleaning at 90 % utilization under the GC suite (hot and cold rewrites);
//! - none: the same GC trace at 50 % utilization, and the Transfer suite.

use std::path::Path;

use nandlab_probe::diagnose::Symptom;
use nandlab_probe::pbr::{replay_records, PbrResult};
use nandlab_probe::target::SimTarget;
use nandlab_trace::suites::{SuiteGenerator, SuiteKind, SuiteParams};

fn suite(kind: SuiteKind, set: &[(&str, &str)]) -> SuiteParams {
    let mut p = SuiteParams::new(kind);
    for (k, v) in set {
        p.set(k, v).unwrap();
    }
    p
}

fn replay(p: SuiteParams, device: &[&str]) -> PbrResult {
    let overrides: Vec<String> = device.iter().map(|s| (*s).to_string()).collect();
    let mut target = SimTarget::new(None, &overrides, true).unwrap();
    let records = SuiteGenerator::new(p).unwrap().map(Ok);
    replay_records(&mut target, records, Path::new("suite"), None, &mut |_| {}).unwrap()
}

fn gc_trace() -> SuiteParams {
    suite(SuiteKind::Gc, &[("write_bytes", "67108864"), ("area_bytes", "268435456")])
}

#[test]
fn a_tiny_buffer_is_diagnosed_as_a_suboptimal_write_buffer() {
    let p = suite(
        SuiteKind::Buffer,
        &[
            ("write_bytes", "33554432"),
            ("area_bytes", "268435456"),
            ("alignment_ratio", "1"),
            ("partition_offset_bytes", "0"),
        ],
    );
    let r = replay(
        p,
        &[
            "device.logical_bytes=268435456",
            "device.utilization=0.5",
            "buffer.kind=fab",
            "buffer.size_bytes=262144",
        ],
    );
    let d = r.diagnose();
    assert_eq!(d.symptom, Symptom::Buffer, "{d:#?}");
    assert!(d.evidence.gap >= 200.0 && d.evidence.low_share >= 0.1);
}

#[test]
fn bast_with_few_log_blocks_under_wide_random_writes_is_suboptimal_mapping() {
    let p = suite(SuiteKind::Mapping, &[("write_bytes", "67108864")]);
    let r = replay(p, &["ftl.kind=bast", "ftl.log_blocks=4", "device.logical_bytes=2147483648"]);
    let d = r.diagnose();
    assert_eq!(d.symptom, Symptom::Mapping, "{d:#?}");
    assert!(d.evidence.high_share >= 0.25 && d.evidence.high_lba_spread >= 0.5);
}

#[test]
fn greedy_cleaning_on_hot_and_cold_data_at_high_utilization_is_suboptimal_gc() {
    let r = replay(gc_trace(), &["device.logical_bytes=268435456", "device.utilization=0.9"]);
    let d = r.diagnose();
    assert_eq!(d.symptom, Symptom::Gc, "{d:#?}");
    assert!(d.evidence.high_share < 0.25, "{d:#?}");
}

#[test]
fn healthy_devices_show_no_symptom() {
    let r = replay(gc_trace(), &["device.logical_bytes=268435456", "device.utilization=0.5"]);
    let d = r.diagnose();
    assert_eq!(d.symptom, Symptom::None, "{d:#?}");
    let p = suite(SuiteKind::Transfer, &[("write_bytes", "67108864")]);
    let r = replay(p, &["device.logical_bytes=268435456", "device.utilization=0.5"]);
    assert_eq!(r.diagnose().symptom, Symptom::None);
}
