//! Goal: results name the exact code. `nandlab --version` (and `-V`, `version`) prints
//! `nandlab X.Y.Z (COMMIT)`, COMMIT being a short git hash with an optional `-dirty`, or a
//! sentence starting `no git` for a build outside a checkout; a run's JSON `version` and its
//! summary carry exactly that string.
//! Method: run the built binary; the shape is checked by hand against the documented pattern
//! `^nandlab \d+\.\d+\.\d+ \(([0-9a-f]{7,40}(-dirty)?|no git.*)\)$` (no regex dependency).

use std::process::Command;

fn nandlab(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_nandlab")).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The one line `--version` prints, without its newline.
fn version_line() -> String {
    let (code, stdout, stderr) = nandlab(&["--version"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
    let line = stdout.strip_suffix('\n').expect("one line ending in a newline");
    assert!(!line.contains('\n'), "{stdout:?}");
    line.to_string()
}

/// `^nandlab \d+\.\d+\.\d+ \(([0-9a-f]{7,40}(-dirty)?|no git.*)\)$`
fn has_documented_shape(line: &str) -> bool {
    let Some(rest) = line.strip_prefix("nandlab ") else { return false };
    let Some((numbers, commit)) = rest.split_once(" (") else { return false };
    let numbers_ok = numbers.split('.').count() == 3
        && numbers.split('.').all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    let Some(commit) = commit.strip_suffix(')') else { return false };
    let hash = commit.strip_suffix("-dirty").unwrap_or(commit);
    let hash_ok = (7..=40).contains(&hash.len())
        && hash.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    numbers_ok && (hash_ok || commit.starts_with("no git"))
}

#[test]
fn the_shape_check_accepts_and_rejects_what_the_pattern_does() {
    for good in [
        "nandlab 0.1.0 (1a2b3c4d5e6f)",
        "nandlab 0.1.0 (1a2b3c4-dirty)",
        "nandlab 10.20.30 (no git commit: built outside a git checkout)",
    ] {
        assert!(has_documented_shape(good), "{good}");
    }
    for bad in [
        "nandlab 0.1.0",
        "nandlab 0.1 (1a2b3c4d5e6f)",
        "nandlab 0.1.0 (1A2B3C4D)",
        "nandlab 0.1.0 (1a2b3c)",
        "nandlab 0.1.0 (1a2b3c4d5e6f-clean)",
        "nandlab 0.1.0 (1a2b3c4d5e6f",
        "0.1.0 (1a2b3c4d5e6f)",
    ] {
        assert!(!has_documented_shape(bad), "{bad}");
    }
}

#[test]
fn version_prints_the_crate_version_and_commit() {
    let line = version_line();
    assert!(has_documented_shape(&line), "{line:?}");
    assert!(line.starts_with(&format!("nandlab {} (", env!("CARGO_PKG_VERSION"))), "{line}");
    for alias in ["-V", "version"] {
        let (code, stdout, stderr) = nandlab(&[alias]);
        assert_eq!(code, 0, "{alias}: {stderr}");
        assert_eq!(stdout, format!("{line}\n"), "{alias}");
    }
}

/// Built from this repository's checkout, the commit is the checkout's HEAD. Skipped when git
/// or the checkout is missing (then the string must say so instead).
#[test]
fn version_names_the_checkout_head() {
    let line = version_line();
    let head = Command::new("git")
        .args(["-C", env!("CARGO_MANIFEST_DIR"), "rev-parse", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    let Some(head) = head else {
        assert!(line.contains("(no git"), "no checkout here, yet {line:?}");
        return;
    };
    if line.contains("(no git") || std::env::var_os("NANDLAB_BUILD_COMMIT").is_some() {
        eprintln!("note: {line:?} was not built from this checkout's git; skipping");
        return;
    }
    let commit = line.rsplit_once(" (").unwrap().1.trim_end_matches(')');
    let hash = commit.strip_suffix("-dirty").unwrap_or(commit);
    // The build script reruns when HEAD moves, so the binary names the current HEAD.
    assert!(head.starts_with(hash), "{line:?} does not name HEAD {head}");
}

#[test]
fn a_run_records_the_version_string() {
    let line = version_line();
    let small = ["--set", "device.blocks=64", "--set", "device.pages_per_block=16", "--quiet"];
    let mut args = vec!["run", "--json", "-"];
    args.extend_from_slice(&small);
    let (code, stdout, stderr) = nandlab(&args);
    assert_eq!(code, 0, "{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    // The JSON `version` is the whole `--version` line, `nandlab ` included.
    assert_eq!(report["version"], line.as_str());
    let mut args = vec!["run"];
    args.extend_from_slice(&small);
    let (code, stdout, stderr) = nandlab(&args);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with(&format!("{line} · seed 1 · ")), "{stdout}");
}
