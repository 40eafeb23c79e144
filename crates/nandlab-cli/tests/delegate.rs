//! Goal: the subcommands written in Python (`sweep`, `report`, `run --report`) are handed to
//! `$NANDLAB_PYTHON -m nandlab ...` with their arguments verbatim (`run --report FILE.html`:
//! `report - --out FILE.html` with the run's JSON as its input) and the child's exit status
//! returned; an interpreter that is missing or lacks the package is one clear error line and
//! exit status 2, before any run.
//! Method: run the built binary with NANDLAB_PYTHON pointing at a missing file or at a small
//! shell script standing in for Python: it passes the `-c "import nandlab._native"` check
//! (unless told to fail it), prints its arguments one per line, copies its standard input when
//! asked, and exits with $FAKE_STATUS.

use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_nandlab");

const FAKE_PYTHON: &str = r#"#!/bin/sh
if [ "$1" = "-c" ]; then
    if [ -n "$FAKE_NO_NANDLAB" ]; then
        echo "Traceback (most recent call last):" >&2
        echo "ModuleNotFoundError: No module named 'nandlab'" >&2
        exit 1
    fi
    exit 0
fi
for a in "$@"; do printf '%s\n' "$a"; done
# `-m nandlab report - --out FILE.html`: keep the JSON given on standard input.
if [ -n "$FAKE_COPY" ]; then cat > "$FAKE_COPY"; fi
exit "${FAKE_STATUS:-7}"
"#;

struct Outcome {
    code: i32,
    stdout: String,
    stderr: String,
}

/// A fresh directory holding the fake interpreter `python`.
fn dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("delegate-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let python = d.join("python");
    std::fs::write(&python, FAKE_PYTHON).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&python, std::fs::Permissions::from_mode(0o755)).unwrap();
    d
}

fn nandlab(python: &Path, args: &[&str], env: &[(&str, &str)]) -> Outcome {
    let out = Command::new(BIN)
        .args(args)
        .env("NANDLAB_PYTHON", python)
        .env_remove("FAKE_STATUS")
        .env_remove("FAKE_COPY")
        .env_remove("FAKE_NO_NANDLAB")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    Outcome {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

const SMALL: &[&str] =
    &["--set", "device.blocks=64", "--set", "device.pages_per_block=16", "--quiet"];

/// The one-line error for an unusable interpreter, naming what to do.
fn assert_clear_python_error(o: &Outcome, what: &str) {
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert_eq!(o.stderr.lines().count(), 1, "{}", o.stderr);
    for needle in [what, "runs in Python", "make python", "pip install .", "NANDLAB_PYTHON"] {
        assert!(o.stderr.contains(needle), "{needle:?} missing from {}", o.stderr);
    }
    assert!(o.stdout.is_empty(), "{}", o.stdout);
}

#[test]
fn a_missing_interpreter_is_a_clear_error() {
    let d = dir("missing");
    let missing = d.join("no-such-python");
    for sub in ["sweep", "report"] {
        let o = nandlab(&missing, &[sub, "--out", "x"], &[]);
        assert_clear_python_error(&o, &format!("`nandlab {sub}`"));
        assert!(o.stderr.contains("no-such-python"), "{}", o.stderr);
    }
}

#[test]
fn an_interpreter_without_the_package_is_a_clear_error() {
    let d = dir("no-package");
    let o = nandlab(&d.join("python"), &["sweep", "--grid", "a=1"], &[("FAKE_NO_NANDLAB", "1")]);
    assert_clear_python_error(&o, "`nandlab sweep`");
    assert!(o.stderr.contains("No module named 'nandlab'"), "{}", o.stderr);
}

#[test]
fn sweep_and_report_pass_their_arguments_verbatim_and_return_the_status() {
    let d = dir("verbatim");
    let python = d.join("python");
    // Flags Rust's own parser would refuse or consume (`--json`, `--help`, `--set`), an empty
    // argument and one with spaces must all arrive as given.
    let rest = [
        "base.toml",
        "--set",
        "workload.kind=hotcold",
        "--grid",
        "ftl.cleaning=greedy,cat",
        "--seeds",
        "1-3",
        "--json",
        "",
        "--title",
        "two words",
        "--help",
    ];
    for (sub, status) in [("sweep", "7"), ("report", "0"), ("report", "3")] {
        let mut args = vec![sub];
        args.extend_from_slice(&rest);
        let o = nandlab(&python, &args, &[("FAKE_STATUS", status)]);
        assert_eq!(o.code.to_string(), status, "{}", o.stderr);
        let mut expected = vec!["-m", "nandlab", sub];
        expected.extend_from_slice(&rest);
        assert_eq!(o.stdout.lines().collect::<Vec<_>>(), expected);
        assert!(o.stderr.is_empty(), "{}", o.stderr);
    }
}

#[test]
fn run_report_hands_the_result_json_to_the_python_report() {
    let d = dir("run-report");
    let python = d.join("python");
    let copy = d.join("seen.json");
    let html = d.join("out.html");
    let mut args = vec!["run", "--report", html.to_str().unwrap()];
    args.extend_from_slice(SMALL);
    let env = [("FAKE_STATUS", "0"), ("FAKE_COPY", copy.to_str().unwrap())];
    let o = nandlab(&python, &args, &env);
    assert_eq!(o.code, 0, "{}", o.stderr);
    // The summary first, then the fake report's arguments: `-m nandlab report - --out HTML`.
    let lines: Vec<&str> = o.stdout.lines().collect();
    let tail = &lines[lines.len() - 6..];
    assert_eq!(tail, &["-m", "nandlab", "report", "-", "--out", html.to_str().unwrap()]);
    assert!(o.stdout.contains("write amplification"), "{}", o.stdout);
    // The result JSON came on standard input.
    let seen: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&copy).unwrap()).unwrap();
    assert_eq!(seen["config"]["device"]["blocks"], 64);
    assert!(seen["metrics"]["erases"].is_u64());
}

#[test]
fn run_report_with_json_to_stdout_keeps_stdout_one_document() {
    let d = dir("run-report-json");
    let html = d.join("out.html");
    let mut args = vec!["run", "--json", "-", "--report", html.to_str().unwrap()];
    args.extend_from_slice(SMALL);
    let o = nandlab(&d.join("python"), &args, &[("FAKE_STATUS", "0")]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(v["seed"], 1);
    // The report's output went to stderr instead.
    assert!(o.stderr.contains("--out\n"), "{}", o.stderr);
}

#[test]
fn run_report_checks_the_interpreter_before_running() {
    let d = dir("run-report-missing");
    let html = d.join("out.html");
    let mut args = vec!["run", "--report", html.to_str().unwrap()];
    args.extend_from_slice(SMALL);
    let o = nandlab(&d.join("no-such-python"), &args, &[]);
    assert_clear_python_error(&o, "`nandlab run --report`");
}

#[test]
fn a_failed_report_fails_the_run_command() {
    let d = dir("run-report-fails");
    let html = d.join("out.html");
    let mut args = vec!["run", "--report", html.to_str().unwrap()];
    args.extend_from_slice(SMALL);
    let o = nandlab(&d.join("python"), &args, &[("FAKE_STATUS", "1")]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("was not written") && o.stderr.contains("status 1"), "{}", o.stderr);
}

#[test]
fn report_is_only_a_run_flag() {
    let d = dir("report-flag");
    let o = nandlab(&d.join("python"), &["presets", "--report", "x.html"], &[]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("error: unexpected argument '--report'"), "{}", o.stderr);
    // Refused by the parser: Python was never asked.
    assert!(o.stdout.is_empty(), "{}", o.stdout);
}
