//! An entry point for coverage-guided fuzzing (`fuzz/` at the workspace root), behind the
//! `fuzzing` cargo feature and hidden from the documentation: the negotiation and transmission
//! phases of **one** connection, fed from a byte string, with no listener, tick thread or
//! signal handling. The connection is a Unix socket pair inside this process, so the code under
//! test is exactly what a TCP or Unix client reaches (`conn::handle`), reader and writer
//! threads included.

use crate::budget::{Budgets, Gauge};
use crate::conn::{self, Shared, MAX_INFLIGHT};
use crate::server::{fit_to_budget, validate_export, SWEEP_PERIOD};
use crate::stream::Conn;
use crate::track::Limits;
use crate::Engine;
use std::io::{self, Read, Write};
use std::net::Shutdown;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

/// How the one connection is served.
#[derive(Clone, Copy, Debug)]
pub struct ConnectionOptions {
    /// `ServeOptions::read_only`.
    pub read_only: bool,
    /// `ServeOptions::connection_budget_bytes`.
    pub connection_budget_bytes: usize,
    /// `ServeOptions::total_budget_bytes`.
    pub total_budget_bytes: usize,
    /// `ServeOptions::negotiation_timeout`.
    pub negotiation_timeout: Duration,
}

impl Default for ConnectionOptions {
    fn default() -> Self {
        ConnectionOptions {
            read_only: false,
            connection_budget_bytes: crate::DEFAULT_CONNECTION_BUDGET_BYTES,
            total_budget_bytes: crate::DEFAULT_TOTAL_BUDGET_BYTES,
            negotiation_timeout: crate::DEFAULT_NEGOTIATION_TIMEOUT,
        }
    }
}

/// What happened on the connection.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConnectionReport {
    /// Transmission-phase requests read (`ServeReport::requests`).
    pub requests: u64,
    /// The connection ended on a protocol error (`ServeReport::protocol_errors`).
    pub protocol_errors: u64,
    /// The engine panicked.
    pub engine_failed: bool,
    /// Bytes the server sent (greeting, option replies, replies).
    pub reply_bytes: u64,
    /// Most payload bytes in flight at once.
    pub peak_inflight_bytes: u64,
}

/// Serves one connection whose client sends `input` and then closes its sending side; returns
/// when the server is done with it (end of input, a protocol error, or a disconnect), after
/// delivering completion reports and shutting the engine down as a server stopping would.
/// Only an engine whose export is invalid is an error.
pub fn serve_bytes(
    engine: Box<dyn Engine>,
    options: ConnectionOptions,
    input: &[u8],
) -> io::Result<ConnectionReport> {
    let mut export = engine.export();
    validate_export(&export)?;
    export.read_only |= options.read_only;
    let gauge = Arc::new(Gauge::default());
    // One connection: one slot, one handshake.
    let limits = Limits {
        max_handshakes: 1,
        max_connections: 1,
        negotiation_timeout: options.negotiation_timeout,
        stall_timeout: crate::DEFAULT_STALL_TIMEOUT,
        busy_poll: Duration::ZERO,
    };
    let budgets = Budgets::new(
        options.connection_budget_bytes,
        options.total_budget_bytes,
        limits.max_connections,
        MAX_INFLIGHT,
        Arc::clone(&gauge),
    );
    fit_to_budget(&mut export, &budgets)?;
    let shared = Arc::new(Shared::new(export, engine, None, budgets, limits));
    let (server, client) = UnixStream::pair()?;
    // As the accept loop does: the tracker's clone is shut down when the connection ends, so
    // the client side sees end-of-file (and a blocked feeder an error); and swept, so the
    // deadlines hold as in a server.
    let (activity, _) = shared.tracker.register(0, Conn::Unix(server.try_clone()?));
    let done = Arc::new(AtomicBool::new(false));
    let sweeper = {
        let (shared, done) = (Arc::clone(&shared), Arc::clone(&done));
        thread::Builder::new().name("fuzz-sweep".into()).spawn(move || {
            while !done.load(Ordering::SeqCst) {
                // Parked, not slept: the end of the connection wakes it at once (a sleep would
                // add up to a sweep period to every fuzz execution).
                thread::park_timeout(SWEEP_PERIOD);
                shared.count_swept(shared.tracker.sweep(Instant::now()));
            }
        })?
    };
    let mut feed = client.try_clone()?;
    let input = input.to_vec();
    let feeder = thread::Builder::new().name("fuzz-client-tx".into()).spawn(move || {
        let _ = feed.write_all(&input);
        let _ = feed.shutdown(Shutdown::Write);
    })?;
    let mut drain = client;
    let drainer = thread::Builder::new().name("fuzz-client-rx".into()).spawn(move || {
        let mut buf = vec![0u8; 64 * 1024];
        let mut total = 0u64;
        loop {
            match drain.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => total += n as u64,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        total
    })?;
    conn::handle(Conn::Unix(server), 0, Arc::clone(&shared), activity);
    done.store(true, Ordering::SeqCst);
    sweeper.thread().unpark();
    let _ = sweeper.join();
    let _ = feeder.join();
    let reply_bytes = drainer.join().unwrap_or(0);
    {
        let mut slot = shared.engine.lock().unwrap_or_else(PoisonError::into_inner);
        slot.deliver(&shared);
        slot.shut_down = true;
        slot.call(&shared, &|| "Engine::shutdown".to_string(), |e| e.shutdown());
    }
    let stats = shared.stats.report(gauge.peak_bytes.load(Ordering::Relaxed));
    Ok(ConnectionReport {
        requests: stats.requests,
        protocol_errors: stats.protocol_errors,
        engine_failed: stats.engine_failed,
        reply_bytes,
        peak_inflight_bytes: stats.peak_inflight_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemoryEngine;

    fn opt(option: u32, data: &[u8]) -> Vec<u8> {
        let mut m = crate::proto::IHAVEOPT.to_be_bytes().to_vec();
        m.extend_from_slice(&option.to_be_bytes());
        m.extend_from_slice(&(data.len() as u32).to_be_bytes());
        m.extend_from_slice(data);
        m
    }

    fn request(typ: u16, handle: u64, offset: u64, length: u32) -> Vec<u8> {
        let mut m = crate::proto::REQUEST_MAGIC.to_be_bytes().to_vec();
        m.extend_from_slice(&0u16.to_be_bytes());
        m.extend_from_slice(&typ.to_be_bytes());
        m.extend_from_slice(&handle.to_be_bytes());
        m.extend_from_slice(&offset.to_be_bytes());
        m.extend_from_slice(&length.to_be_bytes());
        m
    }

    #[test]
    fn a_session_from_bytes_is_served_and_ends_with_the_input() {
        let mut input = 3u32.to_be_bytes().to_vec(); // FIXED_NEWSTYLE | NO_ZEROES
        input.extend(opt(crate::proto::OPT_GO, &[0, 0, 0, 0, 0, 0]));
        input.extend(request(crate::proto::CMD_WRITE, 1, 0, 512));
        input.extend([0xab; 512]);
        input.extend(request(crate::proto::CMD_READ, 2, 0, 512));
        let engine = MemoryEngine::new("t", 1 << 20);
        let probe = engine.probe();
        let report = serve_bytes(Box::new(engine), ConnectionOptions::default(), &input).unwrap();
        assert_eq!((report.requests, report.protocol_errors), (2, 0), "{report:?}");
        assert!(report.reply_bytes > 512, "{report:?}");
        assert!(probe.shut_down.load(Ordering::SeqCst));

        // Garbage ends the connection with one protocol error, and no request.
        let engine = MemoryEngine::new("t", 1 << 20);
        let report = serve_bytes(Box::new(engine), ConnectionOptions::default(), b"junk").unwrap();
        assert_eq!((report.requests, report.protocol_errors), (0, 1), "{report:?}");
    }
}
