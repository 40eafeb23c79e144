//! Goal: `nandlab pbr` replays a trace's writes one at a time and reports each write's
//! Per-Byte-Response exactly on the simulator (hand-worked times), and through `nandlab
//! serve` over NBD (wall-clock replies that carry at least the simulated latency); bad targets
//! are refused with a clear message.
//! Method: a hand-made MSR trace; `nandlab pbr sim:` with generic timing (read 25 us, transfer
//! 10.24 us, program 200 us) on a prefilled device; then a served drive on a Unix socket.

use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use nandlab_testkit::Scratch;

/// A scratch directory of the test's own, removed when it drops.
fn dir(name: &str) -> Scratch {
    Scratch::new(&format!("nandlab-pbr-{name}"))
}

/// Writes: 4 KiB aligned; 4 KiB at +512 (two partial pages: two read-modify-writes); 8 KiB
/// aligned; one read (skipped); 4 KiB past the end of a 1 MiB device (wraps to offset 0).
fn trace(d: &Path) -> PathBuf {
    let p = d.join("t.csv");
    let lines = [
        "128166385295514663,h,0,Write,0,4096,0",
        "128166385295524663,h,0,Write,8704,4096,0",
        "128166385295534663,h,0,Write,16384,8192,0",
        "128166385295544663,h,0,Read,0,4096,0",
        "128166385295554663,h,0,Write,1048576,4096,0",
    ];
    std::fs::write(&p, lines.join("\n") + "\n").unwrap();
    p
}

const DEVICE: [&str; 6] = [
    "--set",
    "device.blocks=64",
    "--set",
    "device.pages_per_block=16",
    "--set",
    "device.logical_bytes=1048576",
];

fn csv_responses(path: &Path) -> Vec<(u64, u64, u64)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[1].parse().unwrap(), f[2].parse().unwrap(), f[3].parse().unwrap())
        })
        .collect()
}

#[test]
fn pbr_on_the_simulator_gives_hand_worked_response_times() {
    let d = dir("sim");
    let t = trace(&d);
    let out = Command::new(env!("CARGO_BIN_EXE_nandlab"))
        .args(["pbr", "sim:", "--trace"])
        .arg(&t)
        .args(DEVICE)
        .arg("--out")
        .arg(d.join("out"))
        .args(["--json", "-"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["writes"], 4);
    assert_eq!(summary["skipped"], 1);
    assert_eq!(summary["wrapped"], 1);
    assert_eq!(summary["simulated"], true);
    assert!(summary["config"]["device"]["blocks"].is_number());
    let program = 210_240;
    let rmw = 35_240 + 210_240;
    assert_eq!(
        csv_responses(&d.join("out/pbr.csv")),
        vec![
            (0, 4096, program),
            (8704, 4096, 2 * rmw),
            (16384, 8192, 2 * program),
            (0, 4096, program)
        ]
    );
    for f in ["summary.json", "pbr_index.svg", "pbr_lba.svg"] {
        assert!(d.join("out").join(f).exists(), "{f}");
    }
}

#[test]
#[cfg_attr(not(feature = "serve"), ignore = "needs the serve feature")]
fn pbr_through_nandlab_serve_carries_the_simulated_latency() {
    let d = dir("serve");
    let t = trace(&d);
    let sock = d.join("s.sock");
    let mut child = Command::new(env!("CARGO_BIN_EXE_nandlab"))
        .args(["serve", "--image"])
        .arg(d.join("image"))
        .arg("--unix")
        .arg(&sock)
        .args(DEVICE)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while UnixStream::connect(&sock).is_err() {
        assert!(child.try_wait().unwrap().is_none(), "server exited early");
        assert!(Instant::now() < deadline, "server did not start");
        std::thread::sleep(Duration::from_millis(5));
    }
    let target = format!("nbd+unix:///?socket={}", sock.display());
    let out = Command::new(env!("CARGO_BIN_EXE_nandlab"))
        .args(["pbr", &target, "--trace"])
        .arg(&t)
        .arg("--out")
        .arg(d.join("out"))
        .arg("--quiet")
        .output()
        .unwrap();
    Command::new("kill").arg(child.id().to_string()).status().unwrap();
    child.wait().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let r = csv_responses(&d.join("out/pbr.csv"));
    assert_eq!(r.len(), 4);
    // The served drive releases each reply at its simulated completion: a fresh image has no
    // data, so the unaligned write merges with nothing read from flash — at least one page
    // program per page written.
    for &(offset, len, ns) in &r {
        assert!(ns >= 210_240 * len.div_ceil(4096), "{offset} {len}: {ns} ns");
    }
}

#[test]
fn bad_targets_are_refused_clearly() {
    let d = dir("bad");
    let t = trace(&d);
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_nandlab")).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let tr = t.to_str().unwrap();
    assert!(run(&["pbr", "http://x", "--trace", tr]).contains("unknown target"));
    assert!(run(&["pbr", "sim:"]).contains("--trace"));
    let e = run(&["pbr", "nbd+unix:///?socket=/nonexistent.sock", "--trace", tr]);
    assert!(e.contains("nonexistent.sock"), "{e}");
    let e = run(&["pbr", "nbd://localhost:1", "--set", "a=b", "--trace", tr]);
    assert!(e.contains("--set"), "{e}");
}

#[test]
fn pbr_on_a_file_target_measures_wall_clock_times() {
    let d = dir("file");
    let t = trace(&d);
    let disk = d.join("disk.img");
    std::fs::File::create(&disk).unwrap().set_len(1 << 20).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_nandlab"))
        .args(["pbr"])
        .arg(&disk)
        .arg("--trace")
        .arg(&t)
        .args(["--json", "-"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["simulated"], false);
    assert_eq!(summary["writes"], 4);
    assert_eq!(summary["wrapped"], 1);
    // Not a block device or file: refused with the path named.
    let out = Command::new(env!("CARGO_BIN_EXE_nandlab"))
        .args(["pbr"])
        .arg(&*d)
        .arg("--trace")
        .arg(&t)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a block device or file"));
}
