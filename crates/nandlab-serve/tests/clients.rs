//! Goal: the real simulator behind the NBD server works with real clients and persists across a
//! clean restart: qemu-io pattern writes / reads, write-zeroes, discard and flush; an nbdcopy
//! round trip (also with 4 connections) compared with `cmp`; after shutdown and reopen, the
//! patterns read back.
//! Method: `SimEngine` on a temp image, served on a free port; clients run as processes. Skipped
//! with a note when a client binary is missing.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use nandlab_core::Config;
use nandlab_serve::{resolve, spawn, Listen, ServeOptions, SimEngine};

use nandlab_testkit::Scratch;

fn have(bin: &str) -> bool {
    Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {bin}"))
        .output()
        .is_ok_and(|o| o.status.success())
}

fn start(
    image: &Path,
) -> (
    nandlab_serve::ShutdownHandle,
    std::thread::JoinHandle<std::io::Result<nandlab_serve::ServeReport>>,
    String,
) {
    let config = Config::from_overrides(&[
        "device.blocks=512",
        "device.pages_per_block=32",
        "device.utilization=0.75",
        "serve.emulate_latency=false",
        "ftl.placement=dac",
    ])
    .unwrap();
    let resolved = resolve(&config, image).unwrap();
    let engine = SimEngine::open(resolved, image, None).unwrap();
    let options = ServeOptions {
        listen: Listen::Tcp("127.0.0.1:0".parse().unwrap()),
        tick: Duration::from_millis(50),
        handle_signals: false,
        ..ServeOptions::default()
    };
    let (handle, join, bound) = spawn(Box::new(engine), options).unwrap();
    (handle, join, bound.uri())
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{cmd:?} failed: {text}");
    text
}

#[test]
fn qemu_io_nbdcopy_and_restart() {
    if !have("qemu-io") || !have("nbdcopy") {
        eprintln!("note: qemu-io or nbdcopy missing; skipping the real-client test");
        return;
    }
    let dir = Scratch::new("nandlab-serve-clients");
    let image = dir.join("disk.img");
    let _ = std::fs::remove_file(&image);
    let (handle, join, uri) = start(&image);
    run(Command::new("qemu-io").args(["-f", "raw", &uri]).args([
        "-c",
        "write -P 0x5a 0 1M",
        "-c",
        "read -P 0x5a 0 1M",
        "-c",
        "write -P 0x33 3M 12k",
        "-c",
        "write -z 1M 64k",
        "-c",
        "read -P 0 1M 64k",
        "-c",
        "discard 2M 64k",
        "-c",
        "flush",
    ]));
    // nbdcopy round trip of 8 MiB of random data at offset 4 MiB, with 1 and 4 connections.
    let src = dir.join("random.bin");
    let data: Vec<u8> =
        (0..8u64 << 20).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    std::fs::write(&src, &data).unwrap();
    for conns in ["1", "4"] {
        let back = dir.join(format!("back{conns}.bin"));
        run(Command::new("nbdcopy").arg(format!("--connections={conns}")).arg(&src).arg(&uri));
        run(Command::new("nbdcopy").arg(format!("--connections={conns}")).arg(&uri).arg(&back));
        let got = std::fs::read(&back).unwrap();
        assert!(got[..8 << 20] == data[..], "nbdcopy round trip differs ({conns} connections)");
    }
    // The disk now holds the random data over the first 8 MiB; re-write the patterns.
    run(Command::new("qemu-io").args(["-f", "raw", &uri]).args([
        "-c",
        "write -P 0x77 9M 1M",
        "-c",
        "write -P 0x21 10M 4k",
        "-c",
        "flush",
    ]));
    handle.shutdown();
    join.join().unwrap().unwrap();
    // Restart on the same image: the tables are rebuilt from the OOB records.
    let (handle, join, uri) = start(&image);
    run(Command::new("qemu-io").args(["-f", "raw", &uri]).args([
        "-c",
        "read -P 0x77 9M 1M",
        "-c",
        "read -P 0x21 10M 4k",
    ]));
    let back = dir.join("after-restart.bin");
    run(Command::new("nbdcopy").arg(&uri).arg(&back));
    assert!(std::fs::read(&back).unwrap()[..8 << 20] == data[..], "data lost across restart");
    handle.shutdown();
    join.join().unwrap().unwrap();
}

/// fio's nbd engine: random 4 KiB writes at queue depth 32 with crc32c verification of every
/// block read back, against the simulator (64 MiB written: the device's whole physical size,
/// so the cleaner runs).
#[test]
fn fio_randwrite_with_verify() {
    if !have("fio") {
        eprintln!("note: fio missing; skipping");
        return;
    }
    let help = Command::new("fio").arg("--enghelp").output().unwrap();
    if !String::from_utf8_lossy(&help.stdout).contains("nbd") {
        eprintln!("note: fio has no nbd engine; skipping");
        return;
    }
    let dir = Scratch::new("nandlab-serve-fio");
    let image = dir.join("fio.img");
    let _ = std::fs::remove_file(&image);
    let (handle, join, uri) = start(&image);
    let out = run(Command::new("fio").args([
        "--name=nandlab",
        "--ioengine=nbd",
        &format!("--uri={uri}"),
        "--rw=randwrite",
        "--bs=4k",
        "--iodepth=32",
        "--verify=crc32c",
        "--size=8m",
        "--loops=8",
    ]));
    assert!(out.contains("err= 0"), "{out}");
    handle.shutdown();
    join.join().unwrap().unwrap();
}
