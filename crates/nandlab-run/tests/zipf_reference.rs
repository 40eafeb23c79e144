//! Goal: `workload.kind = "zipf"` is the workload of the project's reference generator of
//! placement traces (`../shared/reference/placement_traces.c`: `zipf`, and `zipfdrift` = drift
//! fraction 0.2 every n/100 writes), so the same device cleans the same amount under both; and
//! the generator's Alibaba-schema output replays through `workload.format = "alibaba"`.
//! Method: compile the generator with the system C compiler, write a 4096-block trace of each
//! kind (fill, then 20 × n random writes), replay it closed-loop on a 16 MiB device, and run the
//! `zipf` kind on the same device (prefill, then 20 passes). The trace's draws and nandlab's are
//! different random streams, so the GC copies agree statistically: within 2 %. The fill writes
//! copy nothing (the device is empty while they run), so the copies compare one to one.
//! Skipped with a note when ../shared/reference or a C compiler is absent.

use std::path::{Path, PathBuf};
use std::process::Command;

use nandlab_run::{load_config, run_config};

const DEVICE: [&str; 3] =
    ["device.blocks=80", "device.pages_per_block=64", "device.logical_bytes=16777216"];

fn generator() -> Option<PathBuf> {
    let source =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/reference/placement_traces.c");
    if !source.is_file() {
        eprintln!("note: {} not found; skipping", source.display());
        return None;
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("zipf-reference");
    std::fs::create_dir_all(&dir).unwrap();
    let binary = dir.join("placement_traces");
    let built = Command::new("cc")
        .args(["-O2", "-o"])
        .arg(&binary)
        .arg(&source)
        .arg("-lm")
        .status()
        .is_ok_and(|s| s.success());
    if !built {
        eprintln!("note: cannot compile {} with cc; skipping", source.display());
        return None;
    }
    Some(binary)
}

fn gc_copies(overrides: &[String]) -> u64 {
    let config = load_config(None, overrides).unwrap_or_else(|e| panic!("{e}"));
    let report = run_config(&config, &mut |_, _| {}).unwrap_or_else(|e| panic!("{e}"));
    report.metrics.gc_copied_pages
}

#[test]
fn zipf_kind_cleans_like_the_reference_traces() {
    let Some(binary) = generator() else { return };
    let dir = binary.parent().unwrap();
    let device: Vec<String> = DEVICE.iter().map(|s| (*s).to_string()).collect();
    for (kind, drift) in [("zipf", "0"), ("zipfdrift", "0.2")] {
        let prefix = dir.join(kind);
        let status =
            Command::new(&binary).args([kind, "4096", "20", "7", "1.0"]).arg(&prefix).status();
        assert!(status.is_ok_and(|s| s.success()), "{kind}: the generator failed");
        let mut trace = device.clone();
        trace.extend([
            "workload.kind=trace".to_string(),
            format!("workload.path={}.ali.csv", prefix.display()),
            "workload.format=alibaba".to_string(),
            "workload.device=0".to_string(),
            "workload.trace_timing=closed".to_string(),
        ]);
        let mut zipf = device.clone();
        zipf.extend([
            "workload.kind=zipf".to_string(),
            "workload.zipf_exponent=1.0".to_string(),
            format!("workload.zipf_drift_fraction={drift}"),
            "workload.warmup_passes=0".to_string(),
            "workload.passes=20".to_string(),
        ]);
        let (from_trace, from_kind) = (gc_copies(&trace), gc_copies(&zipf));
        let ratio = from_kind as f64 / from_trace as f64;
        eprintln!("{kind}: GC copies {from_trace} (reference trace) vs {from_kind} (zipf kind)");
        assert!((ratio - 1.0).abs() < 0.02, "{kind}: {from_kind} vs {from_trace}");
    }
}
