//! Serves a RAM disk over NBD, for trying clients by hand.
//!
//! `cargo run -p nandlab-nbd --example memserver -- [ADDR|/path.sock] [SIZE_MIB] [LATENCY_US]`
//! (defaults: 127.0.0.1:10809, 64 MiB, 0 µs). Stops cleanly on Ctrl-C / SIGTERM.

use nandlab_nbd::{serve, Listen, MemoryEngine, ServeOptions};
use std::time::Duration;

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let addr = args.first().map(String::as_str).unwrap_or("127.0.0.1:10809");
    let size_mib: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(64);
    let latency_us: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(0);
    let listen = if addr.starts_with('/') || addr.starts_with('.') {
        Listen::Unix(addr.into())
    } else {
        Listen::Tcp(
            addr.parse().map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?,
        )
    };
    let engine = MemoryEngine::new("memdisk", size_mib << 20)
        .with_latency(Duration::from_micros(latency_us));
    let probe = engine.probe();
    eprintln!("memserver: serving {size_mib} MiB on {addr} (latency {latency_us} us)");
    let report = serve(
        Box::new(engine),
        ServeOptions {
            listen,
            tick: Duration::from_secs(1),
            handle_signals: true,
            ..ServeOptions::default()
        },
    )?;
    eprintln!("memserver: {report:?}");
    let done = probe.completions();
    if !done.is_empty() {
        let mut late: Vec<Duration> = done.iter().map(|c| c.replied - c.release_at).collect();
        let mut total: Vec<Duration> = done.iter().map(|c| c.replied - c.received).collect();
        late.sort();
        total.sort();
        let pct = |v: &[Duration], p: usize| v[(v.len() - 1) * p / 100];
        eprintln!(
            "memserver: {} replies; received->replied median {:?} p99 {:?}; \
             replied-release_at median {:?} p99 {:?} max {:?}",
            done.len(),
            pct(&total, 50),
            pct(&total, 99),
            pct(&late, 50),
            pct(&late, 99),
            late[late.len() - 1]
        );
    }
    Ok(())
}
