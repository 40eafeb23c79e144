//! Goal: through the runner, `workload.repeat` multiplies a trace's measured replays (repeat 2
//! is the same run as passes 2), repeats generated workloads (the oracle's look-ahead sees every
//! repetition), progress expectations count the repetitions, and `run.sample_every_bytes`
//! reaches the report.
//! Method: a tiny MSR trace written to a temp dir and small synthetic configs; exact counts.

use std::path::PathBuf;

use nandlab_run::{load_config, run_config, RunReport};

use nandlab_testkit::Scratch;

/// Runs and returns the report with the last progress call (requests done, expected).
fn run(overrides: &[String]) -> (RunReport, (u64, u64)) {
    let config = load_config(None, overrides).unwrap();
    let mut last = (0, 0);
    let report = run_config(&config, &mut |done, expected| last = (done, expected)).unwrap();
    (report, last)
}

/// The file `name` holding `text`, in a scratch directory of the test's own, removed when the
/// guard drops.
fn temp_file(name: &str, text: &str) -> (Scratch, PathBuf) {
    let dir = Scratch::new("nandlab-run-repeat");
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    (dir, p)
}

/// 8 one-page writes 1 MiB apart, then 2 one-page reads (MSR Cambridge format).
fn tiny_trace() -> (Scratch, PathBuf) {
    let mut text = String::new();
    for i in 0..8u64 {
        text += &format!("{},hm,0,Write,{},4096,10\n", 128_166_385_295_514_878 + 1000 * i, i << 20);
    }
    for i in 0..2u64 {
        text += &format!("{},hm,0,Read,{},4096,10\n", 128_166_385_295_600_000 + 1000 * i, i << 20);
    }
    temp_file("tiny-repeat.csv", &text)
}

/// The simulated (not wall-clock) figures of a run.
fn simulated(r: &RunReport) -> Vec<u64> {
    let m = &r.metrics;
    vec![
        m.host_write_pages,
        m.host_read_pages,
        m.host_write_requests,
        m.flash_program_pages,
        m.erases,
        m.sim_time_ns,
        m.write_latency_ns.max,
        m.read_latency_ns.p50,
    ]
}

#[test]
fn trace_repeat_two_is_passes_two() {
    let (_dir, path) = tiny_trace();
    let base = |extra: &[&str]| -> Vec<String> {
        let mut o =
            vec!["workload.kind=trace".to_string(), format!("workload.path={}", path.display())];
        o.extend(extra.iter().map(|s| (*s).to_string()));
        o
    };
    let (once, _) = run(&base(&[]));
    let (repeated, progress) = run(&base(&["workload.repeat=2"]));
    let (passes, _) = run(&base(&["workload.passes=2"]));
    assert_eq!(once.metrics.host_write_pages, 8);
    assert_eq!(repeated.metrics.host_write_pages, 16);
    assert_eq!(repeated.metrics.host_read_pages, 4);
    assert_eq!(simulated(&repeated), simulated(&passes));
    assert_eq!(repeated.config.workload.repeat, 2);
    // Progress: prefill + 2 replays of 10 records, expected exactly.
    assert_eq!(progress.0, progress.1);

    let (warm, _) = run(&base(&["workload.warmup_passes=1", "workload.repeat=3"]));
    assert_eq!(warm.metrics.host_write_pages, 24, "warm-up once, 3 measured replays");
}

#[test]
fn generated_workloads_repeat_through_the_runner_with_the_oracle() {
    let base = ["device.blocks=64", "device.pages_per_block=16", "workload.kind=hotcold"];
    let with = |extra: &[&str]| -> Vec<String> {
        base.iter().chain(extra).map(|s| (*s).to_string()).collect()
    };
    let (one, _) = run(&with(&[]));
    for placement in ["none", "oracle"] {
        let p = format!("ftl.placement={placement}");
        let (three, progress) = run(&with(&["workload.repeat=3", &p]));
        assert_eq!(three.metrics.host_write_pages, 3 * one.metrics.host_write_pages, "{placement}");
        assert_eq!(progress.0, progress.1, "{placement}: the estimate counts every repetition");
    }
}

#[test]
fn wear_samples_reach_the_report() {
    let o: Vec<String> =
        ["device.blocks=64", "device.pages_per_block=16", "run.sample_every_bytes=1048576"]
            .iter()
            .map(|s| (*s).to_string())
            .collect();
    let (r, _) = run(&o);
    // 819 logical pages × 4 (prefill, warm-up, 2 passes) × 4 KiB = 12.8 MiB: 12 crossings + end.
    let s = &r.metrics.wear_samples;
    assert_eq!(s.len(), 13);
    assert_eq!(s.last().unwrap().host_write_bytes, 4 * 819 * 4096);
    let json = r.to_json();
    assert!(json.contains("\"wear_samples\"") && json.contains("\"wear_stddev\""));
    assert_eq!(r.config.run.sample_every_bytes, Some(1_048_576));
}
