//! Listener, accept loop, the tick thread, and the shutdown sequence.
//!
//! Threads: the caller's thread runs the accept loop (non-blocking accept
//! polled every few milliseconds so a shutdown flag set by a handle or a
//! signal is noticed) and, every [`SWEEP_PERIOD`], the sweep of [`crate::track`] that closes
//! handshakes past their deadline and stalled transfers; each connection gets a reader thread
//! (negotiation, then request parsing, running the [`Engine`] under one lock) and a writer
//! thread; a tick thread calls [`Engine::tick`] periodically.
//!
//! Every accepted connection is served: it counts against `ServeOptions::max_handshakes`
//! (evicting the oldest handshake when that is full) until it completes negotiation, then takes
//! one of the `max_connections` transmission slots or has its `NBD_OPT_GO` refused (see
//! [`crate::track`]). So threads number at most `2 × max_connections + max_handshakes`, plus
//! evicted connections on their way out.
//!
//! Shutdown: stop accepting and remove a Unix socket file; half-close every
//! connection for reading so readers see end-of-file; wait (up to a grace
//! period) until writers have sent every in-flight reply; force-close what
//! is left; then stop the tick thread, deliver the completion reports still
//! queued and call [`Engine::shutdown`].

use crate::budget::Budgets;
use crate::conn::{self, Shared, MAX_INFLIGHT};
use crate::stream::{bind_unix, Listener};
use crate::tls::TlsMode;
use crate::track::Limits;
use crate::{BoundAddress, Engine, ExportInfo, Listen, ServeOptions, ServeReport, ShutdownHandle};
use signal_hook::consts::{SIGINT, SIGTERM};
use std::io;
use std::net::{Shutdown, TcpListener};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// How often the accept loop looks for new connections and the shutdown flag.
const ACCEPT_POLL: Duration = Duration::from_millis(5);
/// How long shutdown waits for in-flight replies before force-closing.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);
/// Smallest tick period.
const MIN_TICK: Duration = Duration::from_millis(1);
/// How often the accept loop sweeps for handshakes past their deadline and stalled transfers:
/// the precision of both timeouts.
pub(crate) const SWEEP_PERIOD: Duration = Duration::from_millis(25);

/// Binds the listener (non-blocking) and reports the real address. Errors name the address.
pub(crate) fn bind(listen: &Listen) -> io::Result<(Listener, BoundAddress)> {
    let named = |what: String, e: io::Error| io::Error::new(e.kind(), format!("{what}: {e}"));
    match listen {
        Listen::Tcp(addr) => {
            let what = || format!("cannot listen on {addr}");
            let l = TcpListener::bind(addr).map_err(|e| named(what(), e))?;
            l.set_nonblocking(true).map_err(|e| named(what(), e))?;
            let bound = BoundAddress::Tcp(l.local_addr().map_err(|e| named(what(), e))?);
            Ok((Listener::Tcp(l), bound))
        }
        Listen::Unix(path) => {
            let what = || format!("cannot listen on Unix socket {}", path.display());
            let l = bind_unix(path).map_err(|e| named(what(), e))?;
            // Owned by a `Listener` at once, so an error below still removes the socket file.
            let listener = Listener::Unix(l, Some(path.clone()));
            if let Listener::Unix(l, _) = &listener {
                l.set_nonblocking(true).map_err(|e| named(what(), e))?;
            }
            Ok((listener, BoundAddress::Unix(path.clone())))
        }
    }
}

/// Checks the export against the protocol's block size rules.
pub(crate) fn validate_export(e: &ExportInfo) -> io::Result<()> {
    let bad = |m: String| Err(io::Error::new(io::ErrorKind::InvalidInput, m));
    let (min, pref, max) = (e.min_block_bytes, e.preferred_block_bytes, e.max_block_bytes);
    if !min.is_power_of_two() || min > 65536 {
        return bad(format!("min_block_bytes {min} must be a power of two <= 65536"));
    }
    if !pref.is_power_of_two() || pref < min.max(512) {
        return bad(format!(
            "preferred_block_bytes {pref} must be a power of two >= max(min_block_bytes, 512)"
        ));
    }
    if max != u32::MAX && (max % min != 0 || max < pref) {
        return bad(format!(
            "max_block_bytes {max} must be a multiple of min_block_bytes and >= preferred_block_bytes (or u32::MAX)"
        ));
    }
    if e.name.len() > 4096
        || e.description.len() > 4096
        || e.name.contains('\0')
        || e.description.contains('\0')
    {
        return bad("export name and description must be at most 4096 bytes without NUL".into());
    }
    Ok(())
}

/// Lowers the export's maximum block size to what the budgets can ever admit (rounded down to
/// the preferred block size), so that a valid request never waits forever; an error when that
/// leaves less than the preferred block size.
pub(crate) fn fit_to_budget(export: &mut ExportInfo, budgets: &Budgets) -> io::Result<()> {
    let largest = budgets.largest_request_bytes();
    let pref = export.preferred_block_bytes as usize;
    if largest < pref {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "total_budget_bytes admits requests of at most {largest} bytes, less than the \
                 export's preferred block size ({pref} bytes): raise it"
            ),
        ));
    }
    // Beyond 4 GiB every 32-bit length fits: no limit to add.
    let fit = u32::try_from(largest - largest % pref).unwrap_or(u32::MAX);
    export.max_block_bytes = export.max_block_bytes.min(fit);
    Ok(())
}

/// SIGTERM/SIGINT handling for the lifetime of one server: the first
/// signal sets the shutdown flag, a second one exits at once (status
/// 128 + signal). Dropping the guard removes both actions and leaves an
/// emulation of the default action (terminate) in place, since the signal
/// registry cannot reinstate the original handler.
pub(crate) struct SignalGuard {
    ids: Vec<signal_hook::SigId>,
}

impl SignalGuard {
    /// No signal handling.
    pub(crate) fn none() -> SignalGuard {
        SignalGuard { ids: Vec::new() }
    }

    /// Registers the handlers (before the server thread starts, so a signal
    /// sent right after `spawn` returns is never lost).
    pub(crate) fn register(flag: &Arc<AtomicBool>) -> io::Result<SignalGuard> {
        let mut guard = SignalGuard::none();
        for sig in [SIGTERM, SIGINT] {
            guard.ids.push(signal_hook::flag::register_conditional_shutdown(
                sig,
                128 + sig,
                Arc::clone(flag),
            )?);
            guard.ids.push(signal_hook::flag::register(sig, Arc::clone(flag))?);
        }
        Ok(guard)
    }
}

impl Drop for SignalGuard {
    fn drop(&mut self) {
        if self.ids.is_empty() {
            return;
        }
        for id in self.ids.drain(..) {
            signal_hook::low_level::unregister(id);
        }
        let always = Arc::new(AtomicBool::new(true));
        for sig in [SIGTERM, SIGINT] {
            let _ = signal_hook::flag::register_conditional_default(sig, Arc::clone(&always));
        }
    }
}

/// Serves until the handle's flag is set. Consumes the listener; the
/// signal guard lives until the server is done.
pub(crate) fn run(
    engine: Box<dyn Engine>,
    options: ServeOptions,
    mut listener: Listener,
    handle: ShutdownHandle,
    signals: SignalGuard,
) -> io::Result<ServeReport> {
    let started = shared_state(engine, &options, &handle).and_then(|shared| {
        let ticker = Ticker::spawn(&shared, options.tick.max(MIN_TICK))?;
        Ok((shared, ticker))
    });
    let (shared, ticker) = match started {
        Ok(started) => started,
        Err(e) => {
            listener.cleanup();
            return Err(e);
        }
    };
    let (threads, mut failure) = accept_until_shutdown(&mut listener, &shared, &handle, &ticker);
    // Stop accepting; no new connection after this point.
    listener.cleanup();
    drop(listener);
    close_connections(&shared, threads);
    if ticker.stop().is_err() && failure.is_none() {
        failure = Some(io::Error::other("nbd tick thread panicked"));
    }
    {
        let mut slot = shared.engine.lock().unwrap_or_else(PoisonError::into_inner);
        if !slot.shut_down {
            slot.deliver(&shared);
            slot.shut_down = true;
            // A failed engine is not shut down: its state may be inconsistent, and writing a
            // checkpoint of it could make a damaged image look clean.
            slot.call(&shared, &|| "Engine::shutdown".to_string(), |e| e.shutdown());
        }
    }
    drop(signals);
    let peak = handle.gauge.peak_bytes.load(Ordering::Relaxed);
    match failure {
        Some(e) => Err(e),
        None => Ok(shared.stats.report(peak)),
    }
}

/// What every connection shares: the export as served (checked, read-only by option, its
/// limits fitted to the memory budget), the engine, TLS, budgets and limits.
fn shared_state(
    engine: Box<dyn Engine>,
    options: &ServeOptions,
    handle: &ShutdownHandle,
) -> io::Result<Arc<Shared>> {
    let mut export = engine.export();
    validate_export(&export)?;
    // A server-side override: the engine need not know it is served read-only.
    export.read_only |= options.read_only;
    let tls = options.tls.clone().filter(|t| t.mode() != TlsMode::Off);
    let limits = Limits {
        max_handshakes: options.max_handshakes.max(1),
        max_connections: options.max_connections.max(1),
        negotiation_timeout: options.negotiation_timeout,
        stall_timeout: options.stall_timeout,
        // One CPU polling is the one the client would run on.
        busy_poll: if std::thread::available_parallelism().map_or(1, |n| n.get()) > 1 {
            options.busy_poll
        } else {
            Duration::ZERO
        },
    };
    let budgets = Budgets::new(
        options.connection_budget_bytes,
        options.total_budget_bytes,
        limits.max_connections,
        MAX_INFLIGHT,
        Arc::clone(&handle.gauge),
    );
    fit_to_budget(&mut export, &budgets)?;
    Ok(Arc::new(Shared::new(export, engine, tls, budgets, limits)))
}

/// The thread of periodic engine work (stats file, checkpoints) and of completion delivery
/// when no connection asks.
struct Ticker {
    thread: JoinHandle<()>,
    stop: Arc<AtomicBool>,
}

impl Ticker {
    fn spawn(shared: &Arc<Shared>, tick: Duration) -> io::Result<Self> {
        let shared = Arc::clone(shared);
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = thread::Builder::new().name("nbd-tick".into()).spawn(move || {
            while !flag.load(Ordering::SeqCst) {
                thread::sleep(tick);
                let mut slot = shared.engine.lock().unwrap_or_else(PoisonError::into_inner);
                if slot.shut_down {
                    break;
                }
                slot.deliver(&shared);
                slot.call(&shared, &|| "Engine::tick".to_string(), |e| e.tick());
            }
        })?;
        Ok(Self { thread, stop })
    }

    fn stop(self) -> thread::Result<()> {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.join()
    }
}

/// Accepts connections, each on its own thread, until the handle's flag is set (or the tick
/// thread died: the returned failure). Returns the connection threads.
fn accept_until_shutdown(
    listener: &mut Listener,
    shared: &Arc<Shared>,
    handle: &ShutdownHandle,
    ticker: &Ticker,
) -> (Vec<JoinHandle<()>>, Option<io::Error>) {
    let mut threads: Vec<JoinHandle<()>> = Vec::new();
    let mut next_id: u64 = 0;
    let mut last_sweep = Instant::now();
    while !handle.is_shutdown() {
        if ticker.thread.is_finished() {
            let why = "nbd tick thread stopped unexpectedly (panic in the engine?)";
            return (threads, Some(io::Error::other(why)));
        }
        // Checked on every turn, not only when idle: a flood of connections keeps `accept`
        // busy, and it must not postpone the deadlines.
        let now = Instant::now();
        if now - last_sweep >= SWEEP_PERIOD {
            last_sweep = now;
            shared.count_swept(shared.tracker.sweep(now));
        }
        match listener.accept() {
            Ok(Some(c)) => {
                threads.retain(|t| !t.is_finished());
                shared.stats.connections.fetch_add(1, Ordering::Relaxed);
                // The tracker needs its own handle on the socket, to close it from outside the
                // connection's threads; without one the connection cannot be policed: drop it.
                let Ok(clone) = c.try_clone() else { continue };
                let id = next_id;
                next_id += 1;
                let (activity, evicted) = shared.tracker.register(id, clone);
                if evicted {
                    shared.stats.dropped_handshakes.fetch_add(1, Ordering::Relaxed);
                }
                let s = Arc::clone(shared);
                match thread::Builder::new()
                    .name(format!("nbd-conn-{id}"))
                    .spawn(move || conn::handle(c, id, s, activity))
                {
                    Ok(t) => threads.push(t),
                    // Could not start a thread: drop the connection.
                    Err(_) => shared.tracker.remove(id),
                }
            }
            Ok(None) => thread::sleep(ACCEPT_POLL),
            // Transient accept failures (EMFILE, ECONNABORTED...): back off and go on.
            Err(_) => thread::sleep(ACCEPT_POLL * 10),
        }
    }
    (threads, None)
}

/// Ends every connection: reads stop at once, and after a grace period for replies in flight
/// the sockets close.
fn close_connections(shared: &Shared, threads: Vec<JoinHandle<()>>) {
    shared.stopping.store(true, Ordering::SeqCst);
    shared.tracker.shutdown_all(Shutdown::Read);
    let deadline = Instant::now() + SHUTDOWN_GRACE;
    while threads.iter().any(|t| !t.is_finished()) && Instant::now() < deadline {
        thread::sleep(ACCEPT_POLL);
    }
    shared.tracker.shutdown_all(Shutdown::Both);
    for t in threads {
        let _ = t.join();
    }
}
