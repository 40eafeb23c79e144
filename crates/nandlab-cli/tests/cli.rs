//! Goal: the command-line contract: `run --json -` emits metrics/config/seed/version, bad
//! configuration exits 2 naming the key, `print-config` and `presets` work.
//! Method: run the built binary.

use std::process::Command;

fn nandlab(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_nandlab")).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const SMALL: &[&str] =
    &["--set", "device.blocks=64", "--set", "device.pages_per_block=16", "--quiet"];

#[test]
fn run_json_has_the_contract_fields() {
    let mut args = vec!["run", "--json", "-"];
    args.extend_from_slice(SMALL);
    let (code, stdout, stderr) = nandlab(&args);
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    for key in [
        "host_write_pages",
        "gc_copied_pages",
        "erases",
        "write_amplification",
        "cleaning_cost",
        "wear_mean",
        "wear_stddev",
        "wear_max",
        "flash_busy_ns",
        "wall_seconds",
    ] {
        assert!(v["metrics"].get(key).is_some(), "missing metric {key}");
    }
    assert_eq!(v["seed"], 1);
    assert_eq!(v["config"]["device"]["blocks"], 64);
    assert!(v["version"].is_string());
}

#[test]
fn wear_samples_are_counted_in_the_summary_and_listed_in_json() {
    let mut args = vec!["run", "--set", "run.sample_every_bytes=1048576"];
    args.extend_from_slice(SMALL);
    let (code, stdout, stderr) = nandlab(&args);
    assert_eq!(code, 0, "{stderr}");
    // 819 logical pages × 4 passes × 4 KiB = 12.8 MiB: 12 samples and the end one.
    assert!(stdout.contains("wear samples") && stdout.contains("13 (in the --json report)"));
    assert!(!stdout.contains("wear_leveling_erases"), "{stdout}");
    args.extend_from_slice(&["--json", "-"]);
    let (code, stdout, stderr) = nandlab(&args);
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let samples = v["metrics"]["wear_samples"].as_array().unwrap();
    assert_eq!(samples.len(), 13);
    assert_eq!(samples[0]["host_write_bytes"], 1_048_576);
    assert!(samples[12]["wear_stddev"].is_f64());
}

#[test]
fn bad_config_exits_2_naming_the_key() {
    let (code, _, stderr) = nandlab(&["run", "--set", "ftl.cleaning=lru", "--quiet"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("ftl.cleaning"), "{stderr}");
    let (code, _, stderr) = nandlab(&["run", "--set", "device.utilisation=0.5"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("utilisation"), "{stderr}");
    let (code, _, stderr) = nandlab(&["run", "/nonexistent.toml"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("/nonexistent.toml"), "{stderr}");
    let (code, _, _) = nandlab(&["frobnicate"]);
    assert_eq!(code, 2);
}

#[test]
fn print_config_and_presets() {
    let (code, stdout, _) = nandlab(&["print-config", "--set", "ftl.placement=dac"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("regions = 4"), "{stdout}");
    let (code, stdout, _) = nandlab(&["presets"]);
    assert_eq!(code, 0);
    for p in ["generic", "nor1999", "slc2006", "mlc2007", "mlc2011", "gp5086"] {
        assert!(stdout.contains(p));
    }
}
