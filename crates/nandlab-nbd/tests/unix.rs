//! Unix-domain socket listening: stale socket files are replaced, a live
//! one is refused, the file is removed on shutdown, and both the raw client
//! and real clients (nbdinfo, qemu-io) work over it.

mod common;
use common::*;
use nandlab_nbd::{spawn, Listen, MemoryEngine, ServeOptions};
use std::os::unix::net::{UnixListener, UnixStream};
use std::process::Command;
use std::time::Duration;

fn unix_client(path: &std::path::Path) -> Raw<UnixStream> {
    let s = UnixStream::connect(path).expect("connect unix");
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    Raw { s }
}

#[test]
fn unix_socket_raw_protocol_and_cleanup() {
    let path = tmp_path("raw.sock");
    // A stale socket file (nobody listening) is removed on bind.
    drop(UnixListener::bind(&path).unwrap());
    assert!(exists(&path));
    let srv = Server::start_on(MemoryEngine::new("disk", 1 << 20), Listen::Unix(path.clone()));
    assert_eq!(srv.uri(), format!("nbd+unix:///?socket={}", path.display()));

    // A second server on the same live socket is refused.
    let again = spawn(
        Box::new(MemoryEngine::new("x", 4096)),
        ServeOptions {
            listen: Listen::Unix(path.clone()),
            tick: Duration::from_secs(1),
            handle_signals: false,
            ..ServeOptions::default()
        },
    );
    assert_eq!(again.err().map(|e| e.kind()), Some(std::io::ErrorKind::AddrInUse));

    let mut c = unix_client(&path);
    c.open(true);
    c.request(FLAG_FUA, CMD_WRITE, 1, 4096, 4, b"unix");
    assert_eq!(c.chunk().handle, 1);
    c.request(0, CMD_READ, 2, 4096, 4, &[]);
    let ch = c.chunk();
    assert_eq!(&ch.payload[8..], b"unix");
    let mut g = unix_client(&path);
    g.open(false);
    use std::io::Write;
    g.s.write_all(&[0u8; 28]).unwrap();
    assert!(g.closed());
    c.request(0, CMD_DISC, 3, 0, 0, &[]);
    assert!(c.closed());
    let report = srv.stop();
    assert_eq!(
        report.connections, 3,
        "two clients and the liveness probe of the refused second bind"
    );
    assert_eq!(report.protocol_errors, 1);
    assert!(!exists(&path), "socket file removed on shutdown");
}

#[test]
fn regular_file_is_not_clobbered() {
    let path = tmp_path("regular.sock");
    std::fs::write(&path, b"keep me").unwrap();
    let r = spawn(
        Box::new(MemoryEngine::new("x", 4096)),
        ServeOptions {
            listen: Listen::Unix(path.clone()),
            tick: Duration::from_secs(1),
            handle_signals: false,
            ..ServeOptions::default()
        },
    );
    assert!(r.is_err());
    assert_eq!(std::fs::read(&path).unwrap(), b"keep me");
    let _ = std::fs::remove_file(&path);
}

#[test]
fn unix_socket_real_clients() {
    let path = tmp_path("clients.sock");
    let srv = Server::start_on(MemoryEngine::new("disk", 8 << 20), Listen::Unix(path.clone()));
    if have("nbdinfo") {
        let r = run(Command::new("nbdinfo").arg(srv.uri()), 60);
        assert!(r.ok && r.stdout.contains("export-size: 8388608"), "{}\n{}", r.stdout, r.stderr);
    }
    if have("qemu-io") {
        let r = run(
            Command::new("qemu-io").args(["-f", "raw", &srv.uri()]).args([
                "-c",
                "write -P 0xa5 0 256k",
                "-c",
                "read -P 0xa5 0 256k",
                "-c",
                "flush",
            ]),
            60,
        );
        assert!(r.ok && !r.stdout.contains("failed"), "{}\n{}", r.stdout, r.stderr);
    }
    assert_eq!(srv.stop().protocol_errors, 0);
    assert!(!exists(&path));
}
