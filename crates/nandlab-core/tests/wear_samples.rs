//! Goal: `run.sample_every_bytes` records the device's wear each time the host has written
//! another interval's worth of bytes (whole run, prefill included) and once at the end; the
//! samples are cumulative device state that ends exactly where the flash counters and the
//! end-of-run wear summary end; sampling changes nothing else.
//! Method: tiny closed-loop runs with single-page writes, so every sample's host byte count is
//! known exactly; compare the last sample with the flash counters and `WearSummary`.

use nandlab_core::media::FlashCounters;
use nandlab_core::{Config, Device, Metrics, Resolved, WorkItem, Workload};
use nandlab_core::{WearSample, WearSummary};

const PAGE: u64 = 4096;

fn resolve(overrides: &[&str]) -> Resolved {
    let mut o = vec!["device.blocks=64", "device.pages_per_block=16"];
    o.extend_from_slice(overrides);
    Config::from_overrides(&o).unwrap().resolve().unwrap()
}

fn run(overrides: &[&str]) -> (Metrics, Device) {
    let r = resolve(overrides);
    let mut d = Device::new(&r, None).unwrap();
    let items = Workload::new(&r.workload).unwrap().map(Ok::<_, std::convert::Infallible>);
    let options =
        nandlab_core::RunOptions { check_every_requests: 997, ..nandlab_core::RunOptions::of(&r) };
    let m = nandlab_core::run(&mut d, items, options, &mut |_| {}).unwrap();
    (m, d)
}

/// The last sample is the device at the end of the run.
fn check_last(samples: &[WearSample], d: &Device) {
    let last = samples.last().unwrap();
    let c = &d.ftl().flash().counters;
    assert_eq!(last.host_write_bytes, d.host_write_bytes());
    assert_eq!(last.erases, FlashCounters::total(&c.erases), "all erases, prefill included");
    assert_eq!(last.flash_program_pages, FlashCounters::total(&c.programs));
    assert_eq!(last.wear_leveling_erases, c.erases[2]);
    assert_eq!(last.wear_leveling_copies, c.copies[2]);
    let w = WearSummary::from_counts(d.ftl().erase_counts());
    assert_eq!(
        (last.wear_mean, last.wear_stddev, last.wear_min, last.wear_max),
        (w.mean, w.stddev, w.min, w.max)
    );
    assert!(samples.windows(2).all(|p| p[0].host_write_bytes < p[1].host_write_bytes));
    assert!(samples.windows(2).all(|p| p[0].erases <= p[1].erases));
    assert!(samples.windows(2).all(|p| p[0].flash_program_pages <= p[1].flash_program_pages));
}

#[test]
fn one_sample_per_interval_and_one_at_the_end() {
    // 819 logical pages; prefill + 1 warm-up pass + 2 measured passes = 3276 page writes.
    let (m, d) = run(&["run.sample_every_bytes=20480"]);
    let total = d.host_write_bytes();
    assert_eq!(total, 4 * 819 * PAGE);
    let interval = 5 * PAGE;
    let s = &m.wear_samples;
    assert_eq!(s.len() as u64, total / interval + 1);
    for (i, sample) in s[..s.len() - 1].iter().enumerate() {
        assert_eq!(sample.host_write_bytes, (i as u64 + 1) * interval);
    }
    assert!(m.erases > 0, "the cleaner ran");
    assert!(s.last().unwrap().erases >= m.erases, "samples count from the start, not the window");
    check_last(s, &d);
}

#[test]
fn a_run_ending_on_a_multiple_ends_with_the_end_sample_only() {
    // 3276 pages = 819 × 4: the sample at the last multiple is replaced by the end-of-run one.
    let (m, d) = run(&["run.sample_every_bytes=16384"]);
    assert_eq!(m.wear_samples.len(), 819);
    check_last(&m.wear_samples, &d);
}

#[test]
fn a_request_spanning_several_multiples_gives_one_sample() {
    let o = ["run.sample_every_bytes=4096", "workload.request_bytes=16384"];
    let (m, d) = run(&o);
    // Every write (up to 4 pages) passes one to four multiples: one sample each, host bytes
    // stay distinct, and the last request's sample is the end sample.
    let writes =
        Workload::new(&resolve(&o).workload).unwrap().filter(|i| matches!(i, WorkItem::Request(_)));
    assert_eq!(m.wear_samples.len(), writes.count());
    check_last(&m.wear_samples, &d);
}

#[test]
fn the_end_sample_follows_the_buffer_write_back_and_hybrid_ftls_sample_too() {
    for case in [
        &["buffer.kind=lru", "buffer.size_bytes=131072"][..],
        &["ftl.kind=bast", "device.blocks=128", "device.utilization=0.75"][..],
    ] {
        let mut o = case.to_vec();
        o.push("run.sample_every_bytes=65536");
        let (m, d) = run(&o);
        assert!(m.wear_samples.len() > 2, "{case:?}");
        check_last(&m.wear_samples, &d);
    }
}

#[test]
fn sampling_changes_nothing_else_and_is_off_by_default() {
    let (plain, _) = run(&[]);
    assert!(plain.wear_samples.is_empty());
    let (mut sampled, _) = run(&["run.sample_every_bytes=8192"]);
    assert!(!sampled.wear_samples.is_empty());
    sampled.wear_samples.clear();
    assert_eq!(sampled, plain);
}

#[test]
fn a_zero_interval_is_rejected_naming_the_key() {
    let e = Config::from_overrides(&["run.sample_every_bytes=0"]).unwrap().resolve().unwrap_err();
    assert_eq!(e.key, "run.sample_every_bytes", "{e}");
    assert_eq!(resolve(&[]).config.run.sample_every_bytes, None);
    assert_eq!(nandlab_core::RunOptions::of(&resolve(&[])).sample_every_bytes, 0);
}
