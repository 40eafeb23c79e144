//! The NBD server's side of one connection: the fixed-newstyle handshake, option negotiation
//! and the transmission phase (request parsing, validation, replies from the writer thread),
//! fed with the fuzz input as everything the client sends, a `MemoryEngine` behind it
//! (`nandlab_nbd::fuzzing::serve_bytes`, feature `fuzzing`). The connection must end when the
//! input does, without a panic in any thread (libfuzzer-sys's panic hook aborts the process
//! whichever thread panics), an engine failure, or a hang.
//!
//! Input: byte 0 = settings, then the client's bytes.
//!   bits 0-1: minimum block size 1, 512, 4096 (or 1); bit 2: read-only; bit 3: a tiny
//!   per-connection budget (4 KiB, so requests wait for replies); bits 4-5: maximum block size
//!   64 KiB, 1 MiB, 32 MiB, u32::MAX.
#![no_main]

use std::sync::atomic::Ordering;
use std::sync::Once;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use nandlab_nbd::fuzzing::{serve_bytes, ConnectionOptions};
use nandlab_nbd::MemoryEngine;

/// Export size: small, so reads and the RAM disk stay cheap.
const EXPORT_BYTES: u64 = 256 << 10;

fn init() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // libFuzzer's main, not Rust's, runs this process: SIGPIPE still has its default
        // action (terminate), and a write to a closed socket must be an EPIPE error instead.
        // SAFETY: setting a signal disposition to SIG_IGN at start-up.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        }
    });
}

fuzz_target!(|data: &[u8]| {
    init();
    let Some((&settings, input)) = data.split_first() else { return };
    let min = [1u32, 512, 4096, 1][usize::from(settings & 3)];
    let max = [64u32 << 10, 1 << 20, 32 << 20, u32::MAX][usize::from((settings >> 4) & 3)];
    let engine = MemoryEngine::new("fuzz", EXPORT_BYTES).with_block_sizes(min, 4096.max(min), max);
    let probe = engine.probe();
    let options = ConnectionOptions {
        read_only: settings & 4 != 0,
        connection_budget_bytes: if settings & 8 != 0 { 4096 } else { 8 << 20 },
        total_budget_bytes: 16 << 20,
        negotiation_timeout: Duration::from_secs(30),
    };
    let report = serve_bytes(Box::new(engine), options, input).expect("a valid export");
    assert!(!report.engine_failed, "the engine failed: {report:?}");
    assert!(probe.shut_down.load(Ordering::SeqCst), "the engine was not shut down");
    assert!(report.protocol_errors <= 1, "{report:?}");
});
