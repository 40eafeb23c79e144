//! Goal: `nandlab probe` detects a served drive's geometry over NBD (wall-clock replies released
//! at their simulated completion) as it does on the simulator, and reports configured against
//! detected for a `sim:` target.
//! Method: `nandlab serve` on a Unix socket with two channels per gang (8 KiB effective page),
//! 16 MiB mapping zones (one resident), two gangs of two chips, and slow times (reads 1 ms,
//! programs 3 ms): the parallel-units estimate divides the best throughput by the depth-1
//! throughput, whose latency includes the client's own round trip (tens of microseconds), so
//! it reads high by that round trip ÷ a read — a few percent here; then the probes.

use std::os::unix::net::UnixStream;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use nandlab_testkit::Scratch;

/// The served drive's replies are wall-clock: the tests of this file run one at a time, so the
/// other does not take the server's CPU.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// A scratch directory of the test's own, removed when it drops.
fn dir(name: &str) -> Scratch {
    Scratch::new(&format!("nandlab-probe-{name}"))
}

const DEVICE: [&str; 14] = [
    "--set",
    "device.logical_bytes=67108864",
    "--set",
    "device.channels_per_gang=2",
    "--set",
    "ftl.mapping_zone_bytes=16777216",
    "--set",
    "device.gangs=2",
    "--set",
    "device.chips_per_channel=2",
    "--set",
    "timing.read_page_ns=1000000",
    "--set",
    "timing.program_page_ns=3000000",
];

#[test]
#[cfg_attr(not(feature = "serve"), ignore = "needs the serve feature")]
fn probe_finds_a_served_drives_geometry() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let d = dir("serve");
    let (mut child, target) = serve(&d, &DEVICE);
    let out = Command::new(env!("CARGO_BIN_EXE_nandlab"))
        .args(["probe", &target, "--only", "page,zone,parallel", "--repeats", "3", "--json", "-"])
        .output()
        .unwrap();
    Command::new("kill").arg(child.id().to_string()).status().unwrap();
    child.wait().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["simulated"], false);
    assert_eq!(r["effective_page_bytes"], 8192, "{}", r["page"]);
    assert_eq!(r["zone_bytes"], 16_777_216, "{}", r["zone"]);
    assert_eq!(r["parallel_units"], 4, "{}", r["parallel"]);
}

/// Starts `nandlab serve` on a Unix socket in `d` with `device`; returns it and the target URI.
fn serve(d: &std::path::Path, device: &[&str]) -> (std::process::Child, String) {
    let sock = d.join("s.sock");
    let mut child = Command::new(env!("CARGO_BIN_EXE_nandlab"))
        .args(["serve", "--image"])
        .arg(d.join("image"))
        .arg("--unix")
        .arg(&sock)
        .args(device)
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
    (child, format!("nbd+unix:///?socket={}", sock.display()))
}

#[test]
#[cfg_attr(not(feature = "serve"), ignore = "needs the serve feature")]
fn the_block_probe_finds_a_served_drives_block() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let d = dir("block");
    // 128 KiB blocks; host writes and cleaner copies in separate logs (`host-gc`), so that a
    // request covering a block invalidates it whole. Erases of 10 ms (an MLC's, not the
    // preset's 1.5 ms): the probe counts them as spikes among single-page writes, and on a
    // loaded 2-core machine the client's and the server's hiccups reach a few milliseconds.
    let (mut child, target) = serve(
        &d,
        &[
            "--set",
            "device.logical_bytes=16777216",
            "--set",
            "device.pages_per_block=32",
            "--set",
            "ftl.placement=host-gc",
            "--set",
            "timing.erase_block_ns=10000000",
        ],
    );
    let out = Command::new(env!("CARGO_BIN_EXE_nandlab"))
        .args(["probe", &target, "--only", "block", "--json", "-"])
        .output()
        .unwrap();
    Command::new("kill").arg(child.id().to_string()).status().unwrap();
    child.wait().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["block_bytes"], 131_072, "{}", r["block"]);
}

#[test]
fn probe_on_the_simulator_reports_configured_and_detected() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let d = dir("sim");
    let mut args = vec!["probe", "sim:", "--only", "page,zone"];
    args.extend(DEVICE);
    let out = Command::new(env!("CARGO_BIN_EXE_nandlab"))
        .args(&args)
        .arg("--out")
        .arg(d.join("out"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("effective page") && text.contains("8192 B"), "{text}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("out/probe.json")).unwrap()).unwrap();
    assert_eq!(report["configured"]["effective_page_bytes"], 8192);
    assert_eq!(report["effective_page_bytes"], 8192);
    assert!(d.join("out/curve0.csv").exists() && d.join("out/curve0.svg").exists());
    // Bad selections are refused.
    let out = Command::new(env!("CARGO_BIN_EXE_nandlab"))
        .args(["probe", "sim:", "--only", "cache"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--only"));
}
