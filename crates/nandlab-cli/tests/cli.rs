//! Goal: the command-line contract: `run --json -` emits metrics/config/seed/version, bad
//! configuration exits 2 naming the key, `print-config` and `presets` work.
//! Method: run the built binary.

use std::process::Command;

use nandlab_testkit::Scratch;

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

#[test]
fn analyze_prints_the_table_and_the_contract_json() {
    let dir = Scratch::new("nandlab-cli-analyze");
    let trace = dir.join("t.csv");
    // MSR: two sequential 4 KiB writes, a rewrite of both, a read.
    std::fs::write(
        &trace,
        "128166385295514663,hm,0,Write,0,4096,1\n\
         128166385295524663,hm,0,Write,4096,4096,1\n\
         128166385295534663,hm,0,Write,0,8192,1\n\
         128166385295544663,hm,0,Read,0,4096,1\n",
    )
    .unwrap();
    let t = trace.to_str().unwrap();
    let (code, stdout, stderr) = nandlab(&["analyze", t, "--json", "-", "--quiet"]);
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["rewrite_ratio"], 0.5);
    assert_eq!(v["sequential_ratio"].as_f64().unwrap(), 1.0 / 3.0);
    assert_eq!(v["alignment_ratio"], 1.0);
    assert_eq!(v["write_bytes"], 16384);
    assert_eq!(v["read_bytes"], 4096);
    assert_eq!(v["request_bytes_typical"], 4096);
    assert_eq!(v["suite"], "gc"); // rewrite ratio 50 % >= 50 %
    assert_eq!(v["format"], "msr");
    assert!(v["version"].as_str().unwrap().starts_with("nandlab "));
    let plots = dir.join("plots");
    let (code, stdout, stderr) =
        nandlab(&["analyze", t, "--plots", plots.to_str().unwrap(), "--quiet"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("rewrite ratio") && stdout.contains("50.0 %"), "{stdout}");
    for f in ["lba.svg", "life_cycle.svg", "seek.svg"] {
        let svg = std::fs::read_to_string(plots.join(f)).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("<circle"), "{f}");
    }
    // Errors: a bad line names the file and line; an unknown format is named.
    std::fs::write(&trace, "128166385295514663,hm,0,Write,0,4096,1\nnot a trace\n").unwrap();
    let (code, _, stderr) = nandlab(&["analyze", t, "--format", "msr", "--quiet"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("t.csv:2"), "{stderr}");
    let (code, _, stderr) = nandlab(&["analyze", t, "--format", "nope"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("unknown trace format \"nope\""), "{stderr}");
    let (code, _, stderr) = nandlab(&["analyze"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("TRACE"), "{stderr}");
    // A flag of another subcommand: clap's usage error, naming the flag.
    let (code, _, stderr) = nandlab(&["run", "--plots", "x"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("error: unexpected argument '--plots'"), "{stderr}");
    assert!(stderr.contains("Usage: nandlab run"), "{stderr}");
}
