//! SIGTERM triggers a clean shutdown: in-flight requests are answered, the
//! engine's `shutdown` runs, `serve` returns its report. In its own test
//! binary because the signal goes to the whole process.

mod common;
use common::*;
use nandlab_nbd::{spawn, Listen, MemoryEngine, ServeOptions};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

#[test]
fn sigterm_shuts_down_cleanly() {
    let eng = MemoryEngine::new("disk", 1 << 20).with_latency(Duration::from_millis(200));
    let probe = eng.probe();
    let opts = ServeOptions {
        listen: Listen::Tcp("127.0.0.1:0".parse().unwrap()),
        tick: Duration::from_millis(10),
        handle_signals: true,
        ..ServeOptions::default()
    };
    let (handle, join, bound) = spawn(Box::new(eng), opts).unwrap();
    let srv = Server { handle, join: Some(join), bound };
    let mut c = srv.connect();
    c.open(false);
    c.request(0, CMD_WRITE, 9, 0, 4, b"sig!");
    std::thread::sleep(Duration::from_millis(20));
    let t0 = Instant::now();
    signal_hook::low_level::raise(signal_hook::consts::SIGTERM).unwrap();
    assert_eq!(c.simple(), (0, 9), "in-flight write answered");
    assert!(c.closed());
    let mut srv = srv;
    let report = srv.join.take().unwrap().join().unwrap().unwrap();
    assert!(srv.handle.is_shutdown());
    assert!(t0.elapsed() < Duration::from_secs(5));
    assert_eq!(report.requests, 1);
    assert!(probe.shut_down.load(Ordering::SeqCst));
    assert_eq!(probe.completions().len(), 1);
}
