//! # nandlab-nbd: an NBD server in front of the nandlab simulator
//!
//! Exposes one block export over the Network Block Device protocol (fixed
//! newstyle handshake, simple and structured replies) so that real clients
//! (`qemu-io`, `qemu-img`, `nbdcopy`, `nbdinfo`, `fio --ioengine=nbd`, the
//! Linux `nbd-client`) can drive a simulated SSD. The protocol is our own
//! implementation, written from the public protocol description (`proto.md`
//! of the NBD project).
//!
//! The crate owns the network side only. The device behind it is an
//! [`Engine`]: the server validates every request against the
//! [`ExportInfo`] (range, alignment, maximum length, read-only, flags) and
//! forwards only valid requests to the engine, which runs on **one** engine
//! thread and sees requests strictly in the order they were received across
//! all connections. The engine answers each [`IoRequest`] with an
//! [`IoOutcome`] carrying a `release_at` instant; the connection's writer
//! holds the reply until then, which is how the simulator emulates device
//! latency. When the reply has been written the engine is told the achieved
//! latency through [`Engine::completed`].
//!
//! ```no_run
//! use nandlab_nbd::{serve, Listen, MemoryEngine, ServeOptions};
//! use std::time::Duration;
//!
//! let engine = MemoryEngine::new("disk", 64 << 20);
//! let report = serve(
//!     Box::new(engine),
//!     ServeOptions { listen: Listen::Tcp("127.0.0.1:10809".parse().unwrap()),
//!                    handle_signals: true, ..ServeOptions::default() },
//! ).unwrap();
//! println!("{} connections, {} requests", report.connections, report.requests);
//! ```
//!
//! See the crate's `README.md` for the supported protocol subset, the error
//! mapping, the concurrency model, how latency emulation releases replies,
//! TLS, memory budgets and connection limits.

mod budget;
mod conn;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod mem;
pub mod proto;
mod server;
mod stream;
mod tls;
mod track;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use mem::{Completion, MemoryEngine, MemoryProbe};
pub use tls::{TlsConfig, TlsCredentials, TlsError, TlsMode};

/// The IANA port for NBD.
pub const DEFAULT_PORT: u16 = 10809;
/// Default [`ServeOptions::max_connections`]: far more than any client opens (nbdcopy and qemu
/// use 1-16), few enough that refused clients say so instead of the server running out of
/// threads or memory.
pub const DEFAULT_MAX_CONNECTIONS: usize = 64;
/// Default [`ServeOptions::max_handshakes`]: twice what `nbdcopy --connections 16` opens at
/// once, so bursts of honest clients never evict each other, while a flood of sockets that never
/// finish the handshake costs at most this many threads.
pub const DEFAULT_MAX_HANDSHAKES: usize = 32;
/// Default [`ServeOptions::negotiation_timeout`]: qemu-nbd's handshake limit. An honest client
/// needs milliseconds (a TLS handshake included); a silent or trickling one is closed after this.
pub const DEFAULT_NEGOTIATION_TIMEOUT: Duration = Duration::from_secs(10);
/// Default [`ServeOptions::stall_timeout`]: one transfer may take this long — a batch of replies
/// is at most the connection's in-flight bytes (the larger of its budget and one maximal request,
/// 32 MiB for `nandlab serve`), so a client must take ≥ 1.1 MB/s — as long as the Linux nbd
/// driver's default request timeout; a client that does not read its replies holds its share of
/// the shared pool no longer than this.
pub const DEFAULT_STALL_TIMEOUT: Duration = Duration::from_secs(30);
/// Default [`ServeOptions::busy_poll`]: Linux's suggested `net.core.busy_read` for socket busy
/// polling. A client waiting on each reply (queue depth 1) sends its next request within a few
/// microseconds of receiving one; a reader still polling then takes it without sleeping, and
/// saves the cross-CPU wake-up that otherwise dominates a loopback round trip (on this
/// project's 2-core machine 4 KiB writes at QD1 go from about 19 k to 30 k IOPS, see
/// `experiments/serve/nbdkit_side_by_side.sh`). Past the window the reader sleeps as before, so
/// an idle connection costs no CPU.
pub const DEFAULT_BUSY_POLL: Duration = Duration::from_micros(50);
/// Default [`ServeOptions::connection_budget_bytes`]: 8 MiB holds fio's QD32 of 4 KiB (128 KiB),
/// 32 of nbdcopy's 256 KiB requests and 4 of qemu's 2 MiB ones, enough to keep each streaming,
/// while a client that never reads its replies pins only this much.
pub const DEFAULT_CONNECTION_BUDGET_BYTES: usize = 8 << 20;
/// Default [`ServeOptions::total_budget_bytes`]: 16 busy connections' worth. With the default
/// 64 connections this reserves 1 MiB per connection and shares 64 MiB (see
/// [`ServeOptions::total_budget_bytes`]).
pub const DEFAULT_TOTAL_BUDGET_BYTES: usize = 128 << 20;

/// What the server tells clients about the one export it serves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExportInfo {
    /// Export name; clients may also ask for the default export `""`.
    pub name: String,
    /// Human-readable description (`NBD_OPT_LIST`, `NBD_INFO_DESCRIPTION`).
    pub description: String,
    /// Export size in bytes.
    pub size_bytes: u64,
    /// Minimum block size: offsets and lengths must be multiples of it.
    /// A power of two, at most 64 KiB.
    pub min_block_bytes: u32,
    /// Preferred block size: a power of two, at least `max(min, 512)`.
    pub preferred_block_bytes: u32,
    /// Largest read/write/write-zeroes/cache length accepted; a multiple of
    /// `min_block_bytes` (or `u32::MAX`), at least the preferred block size.
    pub max_block_bytes: u32,
    /// Writes, trims and write-zeroes fail with `EPERM`.
    pub read_only: bool,
}

/// The kind of a request handed to the engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CommandKind {
    /// `NBD_CMD_READ`.
    Read,
    /// `NBD_CMD_WRITE` (payload in [`IoRequest::data`]).
    Write,
    /// `NBD_CMD_FLUSH` (offset and length 0).
    Flush,
    /// `NBD_CMD_TRIM` (discard).
    Trim,
    /// `NBD_CMD_WRITE_ZEROES` (`NO_HOLE` is ignored; `FAST_ZERO` never reaches the engine).
    WriteZeroes,
    /// `NBD_CMD_CACHE` (prefetch hint).
    Cache,
}

/// One validated request, handed to [`Engine::submit`].
#[derive(Clone, Debug)]
pub struct IoRequest {
    /// What to do.
    pub kind: CommandKind,
    /// Byte offset; `offset + length <= size`, aligned to the minimum block size.
    pub offset_bytes: u64,
    /// Byte length; never 0 except for [`CommandKind::Flush`].
    pub length_bytes: u32,
    /// `NBD_CMD_FLAG_FUA`: the reply must not be released before the data is durable.
    pub fua: bool,
    /// Write payload (`length_bytes` bytes); empty for every other kind.
    pub data: Vec<u8>,
    /// When the server finished reading the request (header and payload) off the socket.
    pub received: Instant,
}

/// The engine's answer to one [`IoRequest`].
#[derive(Clone, Debug)]
pub struct IoOutcome {
    /// `None` on success.
    pub error: Option<Errno>,
    /// Read payload: exactly `length_bytes` bytes for a successful read, empty otherwise.
    /// A successful read with the wrong length is answered with `EIO`.
    pub data: Vec<u8>,
    /// The reply is not sent before this instant (latency emulation); may be in the past.
    pub release_at: Instant,
}

impl IoOutcome {
    /// A successful outcome without payload, released at `release_at`.
    pub fn ok(release_at: Instant) -> IoOutcome {
        IoOutcome { error: None, data: Vec::new(), release_at }
    }
    /// A failed outcome, released at `release_at`.
    pub fn err(error: Errno, release_at: Instant) -> IoOutcome {
        IoOutcome { error: Some(error), data: Vec::new(), release_at }
    }
}

/// The error values the NBD protocol allows on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum Errno {
    /// `NBD_EPERM`: operation not permitted (write to a read-only export).
    Perm = 1,
    /// `NBD_EIO`: input/output error.
    Io = 5,
    /// `NBD_ENOMEM`: cannot allocate memory (servers should avoid it).
    NoMem = 12,
    /// `NBD_EINVAL`: invalid argument.
    Inval = 22,
    /// `NBD_ENOSPC`: no space left on device (write beyond the end).
    NoSpc = 28,
    /// `NBD_EOVERFLOW`: value too large.
    Overflow = 75,
    /// `NBD_ENOTSUP`: operation not supported (fast zero).
    NotSup = 95,
    /// `NBD_ESHUTDOWN`: server is shutting down.
    Shutdown = 108,
}

impl Errno {
    /// The wire value.
    pub fn code(self) -> u32 {
        self as u32
    }
}

/// The simulated device behind the server.
///
/// Methods are called under one lock, never concurrently, from whichever connection thread
/// read the request (or the tick thread): the engine sees one request at a time.
///
/// A panic in any method is caught: the request being served is answered `EIO`, one line on
/// stderr names the panic, and the engine is marked failed: it is never called again, and every
/// later request is answered `EIO`.
pub trait Engine: Send + 'static {
    /// The export description; called once when the server starts.
    fn export(&self) -> ExportInfo;
    /// Serve one request. Called under the engine lock, strictly in the order
    /// requests were received across all connections.
    fn submit(&mut self, req: IoRequest) -> IoOutcome;
    /// Called every `ServeOptions::tick` (from the tick thread, under the engine lock) when idle or
    /// between requests (periodic work: stats file, checkpoints).
    fn tick(&mut self) {}
    /// Achieved latency of a request this engine served: `received` is
    /// [`IoRequest::received`], `replied` is when the reply had been written
    /// to the socket, `release_at` is what [`IoOutcome::release_at`] asked
    /// for. Called under the engine lock, some time after the reply; not
    /// called for requests the server answered itself (validation errors,
    /// zero-length requests) or whose connection died before the reply.
    fn completed(
        &mut self,
        kind: CommandKind,
        received: Instant,
        replied: Instant,
        release_at: Instant,
    ) {
        let _ = (kind, received, replied, release_at);
    }
    /// Clean shutdown (SIGTERM/SIGINT or [`ShutdownHandle::shutdown`]): flush,
    /// checkpoint, final stats. Called once, under the engine lock, after
    /// in-flight requests are answered. **Not** called on an engine that panicked in any of
    /// its methods: its state may be inconsistent (see [`ServeReport::engine_failed`]).
    fn shutdown(&mut self);
}

/// Where to listen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Listen {
    /// A TCP address; port 0 picks a free port (see [`BoundAddress`]).
    Tcp(SocketAddr),
    /// A Unix-domain socket path; a stale socket file there is removed on
    /// bind, and the file is removed on shutdown.
    Unix(PathBuf),
}

/// How to serve.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// Listening address.
    pub listen: Listen,
    /// Period of [`Engine::tick`] (clamped to at least 1 ms).
    pub tick: Duration,
    /// Turn SIGTERM/SIGINT into a clean shutdown (a second SIGINT exits at once).
    pub handle_signals: bool,
    /// Serve the export read-only whatever the engine's [`ExportInfo::read_only`] says:
    /// `NBD_FLAG_READ_ONLY` is advertised and writes, trims and write-zeroes fail with `EPERM`
    /// before reaching the engine.
    pub read_only: bool,
    /// Most connections in the transmission phase at once (at least 1). A connection takes a
    /// slot only when it completes option negotiation (TLS included), so connections that
    /// never finish the handshake cannot take them; when all are taken, `NBD_OPT_GO` is
    /// refused with `NBD_REP_ERR_POLICY` and a message saying so (`NBD_OPT_EXPORT_NAME`,
    /// which cannot fail, closes the connection).
    pub max_connections: usize,
    /// Most connections in the handshake (option negotiation, TLS included) at once (at least
    /// 1), a budget separate from `max_connections`. One more closes the oldest handshake,
    /// one that has not completed TLS first, so a flood of silent sockets cannot keep a new
    /// client out.
    pub max_handshakes: usize,
    /// Payload bytes (write data read, read data not yet sent) one connection may hold in
    /// flight; beyond it the server stops reading that connection's requests until replies
    /// are written. A connection with nothing in flight may start one larger request (up to
    /// the advertised maximum block size), from the shared pool.
    pub connection_budget_bytes: usize,
    /// Hard cap on the payload bytes in flight, all connections together. Each of the
    /// `max_connections` slots has a reserve of `min(connection_budget_bytes, total /
    /// (2 × max_connections))` that its connection can always use, whatever the others hold;
    /// the rest (`total − max_connections × reserve`, at least half) is shared. The export's
    /// maximum block size is advertised as at most `reserve + shared` (rounded down to the
    /// preferred block size), the largest request that can be admitted; [`serve`] fails if that
    /// is below the preferred block size.
    pub total_budget_bytes: usize,
    /// TLS (`NBD_OPT_STARTTLS`); `None` is `--tls off`: `STARTTLS` is refused.
    pub tls: Option<TlsConfig>,
    /// How long a client may take from connecting to the end of option negotiation (the TLS
    /// handshake included), however it sends its bytes, before the server closes it.
    pub negotiation_timeout: Duration,
    /// How long one payload transfer of the transmission phase may take — the server writing
    /// a batch of replies, or reading one write's payload — before the server closes the
    /// connection (its in-flight bytes go back to the budgets). An idle connection is never
    /// closed.
    pub stall_timeout: Duration,
    /// How long a connection's reader keeps polling its socket (non-blocking receives) for the
    /// next request before it sleeps in a blocking one; zero never polls. Plain connections
    /// only (a TLS record is read through OpenSSL), and only with more than one CPU (one CPU
    /// spent polling is one the client cannot run on). Replies and results are the same either
    /// way: it trades CPU for latency at low queue depth.
    pub busy_poll: Duration,
}

impl Default for ServeOptions {
    /// TCP 127.0.0.1:10809, 1 s ticks, no signal handling, writable, the default limits, no TLS,
    /// 50 µs busy polling.
    fn default() -> Self {
        ServeOptions {
            listen: Listen::Tcp(SocketAddr::from(([127, 0, 0, 1], DEFAULT_PORT))),
            tick: Duration::from_secs(1),
            handle_signals: false,
            read_only: false,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_handshakes: DEFAULT_MAX_HANDSHAKES,
            connection_budget_bytes: DEFAULT_CONNECTION_BUDGET_BYTES,
            total_budget_bytes: DEFAULT_TOTAL_BUDGET_BYTES,
            tls: None,
            negotiation_timeout: DEFAULT_NEGOTIATION_TIMEOUT,
            stall_timeout: DEFAULT_STALL_TIMEOUT,
            busy_poll: DEFAULT_BUSY_POLL,
        }
    }
}

/// The address actually bound.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BoundAddress {
    /// TCP, with the real port when port 0 was asked for.
    Tcp(SocketAddr),
    /// Unix-domain socket path.
    Unix(PathBuf),
}

impl BoundAddress {
    /// An NBD URI for clients: `nbd://HOST:PORT` or `nbd+unix:///?socket=PATH`.
    pub fn uri(&self) -> String {
        match self {
            BoundAddress::Tcp(a) => format!("nbd://{a}"),
            BoundAddress::Unix(p) => format!("nbd+unix:///?socket={}", p.display()),
        }
    }
}

/// Counters returned when the server stops.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServeReport {
    /// Accepted connections.
    pub connections: u64,
    /// `NBD_OPT_GO`/`NBD_OPT_EXPORT_NAME` refused because all `max_connections` slots were
    /// taken.
    pub refused_connections: u64,
    /// Connections closed in the handshake: past `negotiation_timeout`, or evicted by newer
    /// ones beyond `max_handshakes`.
    pub dropped_handshakes: u64,
    /// Connections closed because a transfer stalled beyond `stall_timeout`.
    pub stalled_connections: u64,
    /// Transmission-phase requests received (including rejected ones, excluding `NBD_CMD_DISC`).
    pub requests: u64,
    /// Connections closed because of a malformed message (bad magic,
    /// truncated message, absurd length, bad client flags).
    pub protocol_errors: u64,
    /// Most payload bytes in flight at once, all connections together.
    pub peak_inflight_bytes: u64,
    /// The engine panicked; it was not shut down (see [`Engine::shutdown`]).
    pub engine_failed: bool,
}

/// Asks a running server to stop cleanly, and reads its live in-flight figures.
#[derive(Clone, Debug, Default)]
pub struct ShutdownHandle {
    flag: Arc<AtomicBool>,
    gauge: Arc<budget::Gauge>,
}

impl ShutdownHandle {
    /// Stop accepting, answer in-flight requests, call [`Engine::shutdown`],
    /// and make [`serve`] return. Idempotent.
    pub fn shutdown(&self) {
        self.flag.store(true, Ordering::SeqCst);
    }
    /// Whether a shutdown was requested (by this handle or by a signal).
    pub fn is_shutdown(&self) -> bool {
        self.flag.load(Ordering::SeqCst)
    }
    /// Payload bytes in flight now (write data read but not yet answered, read data not yet
    /// sent), all connections together.
    pub fn inflight_bytes(&self) -> u64 {
        self.gauge.bytes.load(Ordering::Relaxed)
    }
    /// The most [`ShutdownHandle::inflight_bytes`] has been so far.
    pub fn peak_inflight_bytes(&self) -> u64 {
        self.gauge.peak_bytes.load(Ordering::Relaxed)
    }
}

/// A bound listener waiting for its engine: bind first (so an address in use is reported
/// before anything slow happens, and the real address can be printed), then serve.
pub struct BoundServer {
    listener: stream::Listener,
    bound: BoundAddress,
    options: ServeOptions,
    handle: ShutdownHandle,
    /// Installed at bind time: once a client can connect, SIGTERM/SIGINT must already mean
    /// "stop cleanly", also while the caller is still mounting its engine (the server then
    /// returns as soon as it starts serving).
    signals: server::SignalGuard,
}

impl std::fmt::Debug for BoundServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoundServer").field("bound", &self.bound).finish_non_exhaustive()
    }
}

/// Binds `options.listen` (port 0 picks a free port). Dropping the result without serving
/// closes the listener (and removes a Unix socket file).
pub fn bind(options: ServeOptions) -> std::io::Result<BoundServer> {
    // Handlers first: the moment the socket exists, a client or supervisor may see it and
    // send SIGTERM, which must already mean a clean stop. (A failed bind drops the guard,
    // which restores the default actions.)
    let handle = ShutdownHandle::default();
    let signals = if options.handle_signals {
        server::SignalGuard::register(&handle.flag)?
    } else {
        server::SignalGuard::none()
    };
    let (listener, bound) = server::bind(&options.listen)?;
    Ok(BoundServer { listener, bound, options, handle, signals })
}

impl BoundServer {
    /// The address actually bound.
    pub fn address(&self) -> &BoundAddress {
        &self.bound
    }

    /// A handle to stop the server once it serves (and to read its in-flight figures).
    pub fn handle(&self) -> ShutdownHandle {
        self.handle.clone()
    }

    /// Serves `engine` on this thread until shutdown (a handle, or a signal with
    /// `handle_signals: true`).
    pub fn serve(self, engine: Box<dyn Engine>) -> std::io::Result<ServeReport> {
        let BoundServer { listener, options, handle, signals, .. } = self;
        server::run(engine, options, listener, handle, signals)
    }

    /// Serves on a new thread; signal handlers, if asked for, are in place when this returns.
    pub fn spawn(
        self,
        engine: Box<dyn Engine>,
    ) -> std::io::Result<(ShutdownHandle, std::thread::JoinHandle<std::io::Result<ServeReport>>)>
    {
        let BoundServer { listener, options, handle, signals, .. } = self;
        let h = handle.clone();
        let join = std::thread::Builder::new()
            .name("nbd-server".into())
            .spawn(move || server::run(engine, options, listener, h, signals))?;
        Ok((handle, join))
    }
}

/// Serve `engine` until shutdown. Blocks. Only a signal can stop it
/// (`handle_signals: true`); use [`spawn`] to get a [`ShutdownHandle`], or [`bind`] to learn
/// the address before serving.
pub fn serve(engine: Box<dyn Engine>, options: ServeOptions) -> std::io::Result<ServeReport> {
    bind(options)?.serve(engine)
}

/// Bind now and serve on a new thread. Returns the shutdown handle, the
/// server thread (its result is the [`ServeReport`]) and the bound address
/// (port 0 is resolved). Signal handlers, if asked for, are in place when
/// this returns.
pub fn spawn(
    engine: Box<dyn Engine>,
    options: ServeOptions,
) -> std::io::Result<(
    ShutdownHandle,
    std::thread::JoinHandle<std::io::Result<ServeReport>>,
    BoundAddress,
)> {
    let bound = bind(options)?;
    let address = bound.address().clone();
    let (handle, join) = bound.spawn(engine)?;
    Ok((handle, join, address))
}
