//! Goal: every block trace in ../shared/traces replays to completion through the whole runner
//! (detection, sizing from the trace, compact fitting, prefill, replay), and trace errors name
//! the file and line.
//! Method: run each real sample with default settings (skipped with a note when ../shared is
//! absent); write malformed and out-of-range traces to a temp dir and check the errors.

use std::path::{Path, PathBuf};

use nandlab_run::{load_config, run_config, Error};

use nandlab_testkit::Scratch;

fn shared_traces() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces");
    p.is_dir().then_some(p)
}

fn run(overrides: &[String]) -> Result<nandlab_run::RunReport, Error> {
    let config = load_config(None, overrides)?;
    run_config(&config, &mut |_, _| {})
}

const BLOCK_TRACES: &[(&str, &str)] = &[
    ("msr-cambridge-hm0-excerpt/msr-cambridge1-sample.csv", "msr"),
    ("postmark-disksim-ssd/ssd-postmark-aligned2.trace.gz", "disksim"),
    ("iozone-disksim-ssd/ssd-iozone-aligned2-100K.trace.gz", "disksim"),
    ("tpcc-mqsim/tpcc-small.trace.gz", "mqsim"),
    ("umass-websearch-mqsim/wsrch-small.trace.gz", "mqsim"),
    ("tencent-cbs-excerpt/cloud_storage-sample.csv.gz", "tencent"),
    ("systor17-excerpt/systor17-traces-sample.csv.gz", "systor"),
    ("systor17-excerpt/systor17-additional-sample.csv.gz", "systor"),
    ("cloudphysics-vscsi-excerpt/cloudPhysicsIO.csv.gz", "cloudphysics"),
];

#[test]
fn every_real_block_trace_replays() {
    let Some(dir) = shared_traces() else {
        eprintln!("note: ../shared/traces not found; skipping real-trace replay");
        return;
    };
    for (file, format) in BLOCK_TRACES {
        let path = dir.join(file);
        let report = run(&[
            "workload.kind=trace".into(),
            format!("workload.path={}", path.display()),
            "ftl.placement=dac".into(),
            "ftl.cleaning=cat".into(),
            "run.check_every_requests=20000".into(),
        ])
        .unwrap_or_else(|e| panic!("{file}: {e}"));
        let t = report.trace.as_ref().unwrap();
        assert_eq!(t.format, *format, "{file}");
        assert!(t.sized_from_trace);
        let m = &report.metrics;
        assert!(m.host_write_pages + m.host_read_pages > 0, "{file}: nothing replayed");
        assert!(m.write_amplification == 0.0 || m.write_amplification >= 1.0);
        eprintln!(
            "{file}: {} records, {} writes, {} reads, WA {:.3}, erases {}",
            t.records, m.host_write_pages, m.host_read_pages, m.write_amplification, m.erases
        );
    }
}

#[test]
fn volume_selection_and_replays() {
    let Some(dir) = shared_traces() else { return };
    let path = dir.join("tpcc-mqsim/tpcc-small.trace.gz");
    let one = run(&[
        "workload.kind=trace".into(),
        format!("workload.path={}", path.display()),
        "workload.device=3".into(),
        "workload.passes=2".into(),
    ])
    .unwrap();
    let all =
        run(&["workload.kind=trace".into(), format!("workload.path={}", path.display())]).unwrap();
    let t = one.trace.unwrap();
    assert!(t.records < all.trace.unwrap().records);
    assert!(one.metrics.host_write_requests > 0);
}

/// The file `name` holding `text`, in a scratch directory of the test's own, removed when the
/// guard drops.
fn temp_file(name: &str, text: &str) -> (Scratch, PathBuf) {
    let dir = Scratch::new("nandlab-run-test");
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    (dir, p)
}

#[test]
fn malformed_line_names_file_and_line() {
    let (_dir, p) = temp_file(
        "bad.csv",
        "128166385295514878,hm,0,Write,4096,4096,10\n128166385295514879,hm,0,Write,oops,4096,10\n",
    );
    let e =
        run(&["workload.kind=trace".into(), format!("workload.path={}", p.display())]).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("bad.csv") && msg.contains(":2"), "{msg}");
}

#[test]
fn out_of_range_with_explicit_size_needs_a_fit_mode() {
    let (_dir, p) = temp_file(
        "far.csv",
        "128166385295514878,hm,0,Write,0,4096,10\n\
         128166385295514879,hm,0,Write,1099511627776,4096,10\n",
    );
    let base = vec![
        "workload.kind=trace".to_string(),
        format!("workload.path={}", p.display()),
        "device.blocks=64".into(),
        "device.pages_per_block=16".into(),
    ];
    let e = run(&base).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("far.csv") && msg.contains("fit"), "{msg}");
    for fit in ["fold", "compact"] {
        let mut o = base.clone();
        o.push(format!("workload.fit={fit}"));
        let r = run(&o).unwrap();
        assert_eq!(r.metrics.host_write_pages, 2, "{fit}");
    }
}

/// MSR lines: `n` writes of 4 KiB, 1 ms apart, over the first `pages` pages.
fn msr_writes(n: u64, pages: u64) -> String {
    (0..n)
        .map(|i| {
            format!(
                "{},hm,0,Write,{},4096,10\n",
                128166385295514878 + 10_000 * i,
                (i * 7 % pages) * 4096
            )
        })
        .collect()
}

fn sized(p: &Path) -> Vec<String> {
    vec![
        "workload.kind=trace".to_string(),
        format!("workload.path={}", p.display()),
        "device.blocks=64".into(),
        "device.pages_per_block=16".into(),
    ]
}

/// With an explicit size the totals are counted while the replay runs: a parse error far
/// down the trace is still the run's error even when the replay meets an address out of range
/// first (what an up-front scan reported), and an empty trace is still refused.
#[test]
fn explicit_size_errors_are_the_up_front_scans() {
    let mut text = msr_writes(200_000, 512);
    text += "128166385295514878,hm,0,Write,1099511627776,4096,10\n";
    text += &msr_writes(200_000, 512);
    text += "128166385295514879,hm,0,Write,oops,4096,10\n";
    let (_dir, p) = temp_file("late.csv", &text);
    let msg = run(&sized(&p)).unwrap_err().to_string();
    assert!(msg.contains("late.csv:400002"), "{msg}");
    let (_dir2, empty) = temp_file("empty.csv", "# nothing here\n");
    let msg = run(&sized(&empty)).unwrap_err().to_string();
    assert!(msg.contains("empty.csv") && msg.contains("no I/O records"), "{msg}");
}

/// The totals counted during the run are the up-front scan's: the report's, and the time
/// shift of a second timed replay (same metrics as a run whose totals were known first).
#[test]
fn totals_counted_during_the_run_match_an_up_front_scan() {
    let (_dir, p) = temp_file("w.csv", &msr_writes(3000, 512));
    let mut during = sized(&p);
    during.push("workload.passes=2".into());
    let prepared = nandlab_run::prepare(&load_config(None, &during).unwrap()).unwrap();
    assert_eq!(prepared.trace.as_ref().unwrap().records, 0, "counted during the run");
    let a = nandlab_run::run(&prepared, &mut |_, _| {}).unwrap();
    // Compact fitting needs the totals first; on addresses inside the device it maps each
    // chunk where it is, so the requests are the same.
    let mut known = during.clone();
    known.push("workload.fit=compact".into());
    known.push(format!("workload.compact_chunk_bytes={}", 512 * 4096));
    let b = run(&known).unwrap();
    let (ta, tb) = (a.trace.unwrap(), b.trace.unwrap());
    assert_eq!((ta.records, ta.duration_ns, &ta.devices), (3000, 2_999_000_000, &vec![0]));
    assert_eq!(
        (ta.records, ta.duration_ns, &ta.devices),
        (tb.records, tb.duration_ns, &tb.devices)
    );
    assert_eq!(a.metrics.host_write_requests, 6000);
    assert_eq!(a.metrics.write_latency_ns.mean, b.metrics.write_latency_ns.mean);
    assert_eq!(a.metrics.erases, b.metrics.erases);
}

#[test]
fn missing_file_and_bad_format_name() {
    let e = run(&["workload.kind=trace".into(), "workload.path=/nonexistent/x.csv".into()])
        .unwrap_err();
    assert!(e.to_string().contains("/nonexistent/x.csv"), "{e}");
    let (_dir, p) = temp_file("ok.csv", "128166385295514878,hm,0,Write,0,4096,10\n");
    let e = run(&[
        "workload.kind=trace".into(),
        format!("workload.path={}", p.display()),
        "workload.format=nope".into(),
    ])
    .unwrap_err();
    assert!(e.to_string().contains("workload.format"), "{e}");
}

#[test]
fn oracle_runs_through_the_runner_and_beats_one_log() {
    let base = [
        "device.blocks=512",
        "device.pages_per_block=32",
        "device.utilization=0.85",
        "workload.kind=hotcold",
        "workload.warmup_passes=2",
        "workload.passes=3",
    ];
    let mut o: Vec<String> = base.iter().map(|s| (*s).to_string()).collect();
    let mixed = run(&o).unwrap().metrics.write_amplification;
    o.push("ftl.placement=oracle".into());
    let oracle = run(&o).unwrap().metrics.write_amplification;
    assert!(oracle < mixed * 0.8, "oracle {oracle} vs mixed {mixed}");
}

#[test]
fn a_tiny_trace_still_sizes_a_workable_device() {
    let (_dir, p) = temp_file(
        "tiny.csv",
        "128166385295514878,hm,0,Write,0,4096,10\n128166385295514879,hm,0,Write,0,4096,10\n",
    );
    for placement in ["none", "dac", "oracle"] {
        let r = run(&[
            "workload.kind=trace".into(),
            format!("workload.path={}", p.display()),
            format!("ftl.placement={placement}"),
            "device.utilization=0.95".into(),
        ])
        .unwrap_or_else(|e| panic!("{placement}: {e}"));
        assert_eq!(r.metrics.host_write_pages, 2);
    }
}

/// Hybrid FTLs on traces: the device sized from the trace has room for the log blocks and
/// whole SAST groups, for a tiny trace and for a real one.
#[test]
fn hybrid_ftls_size_their_device_from_the_trace() {
    let (_dir, p) = temp_file(
        "tiny-hybrid.csv",
        "128166385295514878,hm,0,Write,0,4096,10\n128166385295514879,hm,0,Write,8192,4096,10\n",
    );
    let mut paths = vec![p];
    if let Some(dir) = shared_traces() {
        paths.push(dir.join("tpcc-mqsim/tpcc-small.trace.gz"));
    }
    for path in &paths {
        for kind in ["bast", "sast", "fast"] {
            let r = run(&[
                "workload.kind=trace".into(),
                format!("workload.path={}", path.display()),
                format!("ftl.kind={kind}"),
                "device.utilization=0.95".into(),
            ])
            .unwrap_or_else(|e| panic!("{kind} on {}: {e}", path.display()));
            assert!(r.metrics.host_write_pages >= 2, "{kind}");
        }
    }
}
