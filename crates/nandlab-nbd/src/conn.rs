//! One client connection: fixed-newstyle negotiation, then the
//! transmission phase with a reader (this thread) and a writer thread.
//!
//! The reader parses each request (including a write's payload), validates
//! it against the export, and either answers it itself (validation errors,
//! zero-length requests) or runs it on the engine under the engine lock. Every answer,
//! whoever made it, goes to the connection's writer as a [`Pending`] reply
//! with a release instant; the writer keeps them in a min-heap and writes
//! each one at its instant (sleeping on the channel until a spin window of
//! 100–500 µs before it, then spinning; the window adapts to how late timed
//! waits wake up on this machine), so replies can leave out of order.
//! After writing, the writer queues the achieved latency for the engine
//! (delivered by the next holder of the engine lock).
//!
//! Payload in flight (write data read, read data not yet sent) is bounded per connection and
//! server-wide by the budgets of [`crate::budget`]; the reader waits for the writer before
//! reading more, so a client that does not read its replies cannot make the server buffer
//! without bound. Both threads report their payload transfers to the connection's
//! [`Activity`], so that the sweep of [`crate::track`] can close a client that stalls one.
//!
//! The connection takes a transmission slot only when negotiation succeeds (`NBD_OPT_GO` or
//! `NBD_OPT_EXPORT_NAME`); when all are taken, `GO` is answered `NBD_REP_ERR_POLICY` with a
//! message saying so.
//!
//! With TLS (`NBD_OPT_STARTTLS`) the rest of the negotiation and the transmission phase run
//! over the session of [`crate::tls`], whose reader and writer halves are shared by the same
//! two threads.
//!
//! Engine calls are wrapped in `catch_unwind`: a panicking engine fails its request with `EIO`
//! and is marked failed; every later request is answered `EIO` without calling it.

use crate::budget::{Budgets, ConnBudget};
use crate::proto::{self, be_u16, be_u32, be_u64};
use crate::stream::Conn;
use crate::tls::{self, TlsConfig, TlsMode, TlsReader, TlsWriter};
use crate::track::{Activity, Admission, Limits, Tracker};
use crate::{CommandKind, Engine, Errno, ExportInfo, IoOutcome, IoRequest, ServeReport};
use std::any::Any;
use std::cmp::Ordering as CmpOrdering;
use std::collections::BinaryHeap;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::net::Shutdown;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender, TryRecvError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

/// Longest option payload accepted during negotiation; longer closes the connection.
pub(crate) const MAX_OPTION_LEN: u32 = 64 * 1024;
/// Write payloads up to this size are always read (and discarded when the
/// request is invalid), as the protocol asks; larger ones than both this
/// and the export's maximum block size close the connection.
pub(crate) const WRITE_DOS_LIMIT: u64 = 32 << 20;
/// Most requests in flight on one connection (requests without payload cost no budget bytes,
/// so this bounds their memory).
pub(crate) const MAX_INFLIGHT: usize = 1024;
/// The writer sleeps until at least this long before a reply's release
/// instant, then spins. The window widens to the observed oversleep of
/// timed waits on this machine plus [`SPIN_MARGIN`], up to [`SPIN_WINDOW_MAX`].
pub(crate) const SPIN_WINDOW_MIN: Duration = Duration::from_micros(100);
/// Upper bound of the adaptive spin window.
pub(crate) const SPIN_WINDOW_MAX: Duration = Duration::from_micros(500);
/// Slack added to the measured oversleep.
pub(crate) const SPIN_MARGIN: Duration = Duration::from_micros(50);
/// Largest read payload the reader writes itself ([`Replies`]): a reply this small fits the
/// socket's send buffer whenever the client takes its replies, so the reader does not block on
/// it; a larger one, or any reply while a client lags, goes through the writer thread, and the
/// reader keeps reading requests up to the payload budget as before.
const INLINE_REPLY_MAX_BYTES: usize = 64 * 1024;
/// Largest data payload of one structured read chunk (length field holds 8 + data).
const MAX_CHUNK_DATA: usize = (u32::MAX - 8) as usize;

/// Counters shared by all connections.
#[derive(Default)]
pub(crate) struct Stats {
    pub(crate) connections: AtomicU64,
    pub(crate) refused_connections: AtomicU64,
    pub(crate) dropped_handshakes: AtomicU64,
    pub(crate) stalled_connections: AtomicU64,
    pub(crate) requests: AtomicU64,
    pub(crate) protocol_errors: AtomicU64,
    pub(crate) engine_failed: AtomicBool,
}

impl Stats {
    pub(crate) fn report(&self, peak_inflight_bytes: u64) -> ServeReport {
        ServeReport {
            connections: self.connections.load(Ordering::Relaxed),
            refused_connections: self.refused_connections.load(Ordering::Relaxed),
            dropped_handshakes: self.dropped_handshakes.load(Ordering::Relaxed),
            stalled_connections: self.stalled_connections.load(Ordering::Relaxed),
            requests: self.requests.load(Ordering::Relaxed),
            protocol_errors: self.protocol_errors.load(Ordering::Relaxed),
            peak_inflight_bytes,
            engine_failed: self.engine_failed.load(Ordering::Relaxed),
        }
    }
}

/// State shared by the server and every connection.
pub(crate) struct Shared {
    pub(crate) export: ExportInfo,
    /// Requests go through this lock so that the `received` stamps increase
    /// in the order the engine sees the requests.
    pub(crate) engine: Mutex<EngineSlot>,
    /// Completion reports waiting for the next holder of the engine lock (order does not
    /// matter; writers never wait for the engine).
    pub(crate) completions: Mutex<Vec<Completion>>,
    pub(crate) stats: Stats,
    /// Set when the server shuts down (end-of-file is then not a protocol error).
    pub(crate) stopping: AtomicBool,
    /// In-flight payload budgets.
    pub(crate) budgets: Arc<Budgets>,
    /// `None`: TLS off (`STARTTLS` refused).
    pub(crate) tls: Option<TlsConfig>,
    /// Open connections, their phases and limits.
    pub(crate) tracker: Tracker,
}

impl Shared {
    /// The state of a server (or of the fuzzing harness's single connection) serving `engine`,
    /// before any connection or request.
    pub(crate) fn new(
        export: ExportInfo,
        engine: Box<dyn Engine>,
        tls: Option<TlsConfig>,
        budgets: Arc<Budgets>,
        limits: Limits,
    ) -> Shared {
        Shared {
            export,
            engine: Mutex::new(EngineSlot::new(engine)),
            completions: Mutex::new(Vec::new()),
            stats: Stats::default(),
            stopping: AtomicBool::new(false),
            budgets,
            tls,
            tracker: Tracker::new(limits),
        }
    }

    /// Adds what a sweep of the tracker closed to the counters.
    pub(crate) fn count_swept(&self, swept: crate::track::Swept) {
        self.stats.dropped_handshakes.fetch_add(swept.expired_handshakes, Ordering::Relaxed);
        self.stats.stalled_connections.fetch_add(swept.stalled, Ordering::Relaxed);
    }
}

/// The engine and whether it has been shut down. Requests run on the connection threads that
/// read them, one at a time under this lock: no hand-off to an engine thread, so no wake-up per
/// request (on a 2-core machine the hand-offs, not the simulation, limited throughput).
pub(crate) struct EngineSlot {
    pub(crate) engine: Box<dyn Engine>,
    pub(crate) shut_down: bool,
    /// The engine panicked: its state may be inconsistent, so it is never called again (not
    /// even `shutdown`) and every request is answered `EIO`.
    pub(crate) failed: bool,
}

/// The text of a panic payload (`panic!` gives a `&str` or a `String`).
fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(a panic payload that is not a string)".to_string()
    }
}

impl EngineSlot {
    pub(crate) fn new(engine: Box<dyn Engine>) -> EngineSlot {
        EngineSlot { engine, shut_down: false, failed: false }
    }

    /// Runs `f` on the engine unless it has failed; a panic inside marks it failed (one line on
    /// stderr naming `what` and the panic message) and gives `None`, as does a failed engine.
    /// The panic is caught here, inside the engine lock, so the lock is never poisoned.
    pub(crate) fn call<R>(
        &mut self,
        shared: &Shared,
        what: &dyn Fn() -> String,
        f: impl FnOnce(&mut dyn Engine) -> R,
    ) -> Option<R> {
        if self.failed {
            return None;
        }
        match catch_unwind(AssertUnwindSafe(|| f(self.engine.as_mut()))) {
            Ok(r) => Some(r),
            Err(payload) => {
                self.failed = true;
                shared.stats.engine_failed.store(true, Ordering::SeqCst);
                eprintln!(
                    "nandlab-nbd: the engine panicked in {}: {}; it is marked failed: every later \
                     request is answered EIO and Engine::shutdown will not be called",
                    what(),
                    panic_message(payload.as_ref())
                );
                None
            }
        }
    }

    /// Delivers queued completion reports; called by every holder of the lock.
    pub(crate) fn deliver(&mut self, shared: &Shared) {
        let batch =
            std::mem::take(&mut *shared.completions.lock().unwrap_or_else(PoisonError::into_inner));
        if batch.is_empty() {
            return;
        }
        self.call(shared, &|| "Engine::completed".to_string(), |e| {
            for c in batch {
                e.completed(c.kind, c.received, c.replied, c.release_at);
            }
        });
    }
}

/// One served request's timing, reported back to the engine.
pub(crate) struct Completion {
    pub(crate) kind: CommandKind,
    pub(crate) received: Instant,
    pub(crate) replied: Instant,
    pub(crate) release_at: Instant,
}

/// A validated request on its way to the engine.
pub(crate) struct Job {
    req: IoRequest,
    handle: u64,
    cost: usize,
}

/// What a reply says.
enum Body {
    Ok,
    Read { offset: u64, data: Vec<u8> },
    Error { errno: Errno, message: &'static str },
}

/// A reply waiting for its release instant in a connection's writer.
pub(crate) struct Pending {
    release_at: Instant,
    seq: u64,
    handle: u64,
    body: Body,
    /// Kind and received instant, for requests the engine served.
    completion: Option<(CommandKind, Instant)>,
    /// Budget bytes to give back once written.
    cost: usize,
}

impl PartialEq for Pending {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == CmpOrdering::Equal
    }
}
impl Eq for Pending {}
impl PartialOrd for Pending {
    fn partial_cmp(&self, other: &Self) -> Option<CmpOrdering> {
        Some(self.cmp(other))
    }
}
impl Ord for Pending {
    /// Reversed, so that `BinaryHeap` pops the earliest release (then the oldest) first.
    fn cmp(&self, other: &Self) -> CmpOrdering {
        (other.release_at, other.seq).cmp(&(self.release_at, self.seq))
    }
}

/// Runs one job (under the engine lock) and gives its reply. A failed (or now panicking) engine
/// answers `EIO` at once and reports no completion.
pub(crate) fn serve_job(slot: &mut EngineSlot, shared: &Shared, job: Job) -> Pending {
    let Job { req, handle, cost } = job;
    let (kind, offset, length, received) =
        (req.kind, req.offset_bytes, req.length_bytes, req.received);
    let what = || format!("Engine::submit ({kind:?}, offset {offset}, {length} bytes)");
    let Some(out) = slot.call(shared, &what, |e| e.submit(req)) else {
        return Pending {
            release_at: Instant::now(),
            seq: 0,
            handle,
            body: Body::Error {
                errno: Errno::Io,
                message: "the simulated device failed (engine panic; see the server's log)",
            },
            completion: None,
            cost,
        };
    };
    let out: IoOutcome = out;
    let body = match out.error {
        Some(errno) => Body::Error { errno, message: "the device reported an error" },
        None if kind == CommandKind::Read => {
            if out.data.len() == length as usize {
                Body::Read { offset, data: out.data }
            } else {
                Body::Error {
                    errno: Errno::Io,
                    message: "internal error: read returned the wrong length",
                }
            }
        }
        None => Body::Ok,
    };
    Pending {
        release_at: out.release_at,
        seq: 0,
        handle,
        body,
        completion: Some((kind, received)),
        cost,
    }
}

/// Answers a job with `ESHUTDOWN` without running it.
pub(crate) fn refuse_job(job: Job) -> Pending {
    Pending {
        release_at: Instant::now(),
        seq: 0,
        handle: job.handle,
        body: Body::Error { errno: Errno::Shutdown, message: "server is shutting down" },
        completion: None,
        cost: job.cost,
    }
}

/// Why a connection ended early.
#[derive(Debug)]
enum ConnError {
    /// The client broke the protocol (counted in `protocol_errors`).
    Protocol(&'static str),
    /// Socket error, failed TLS handshake, or the server is going away.
    Io(io::Error),
}

impl From<io::Error> for ConnError {
    fn from(e: io::Error) -> Self {
        ConnError::Io(e)
    }
}

/// Thread body for one accepted connection, registered with the tracker as `id`.
pub(crate) fn handle(conn: Conn, id: u64, shared: Arc<Shared>, activity: Arc<Activity>) {
    // The handshake's deadline and budget are enforced from outside (the tracker's sweep and
    // eviction shut the socket down), which covers every blocking read and write, TLS included.
    let result = match negotiate(Link::Plain(conn), &shared, id, &activity) {
        Ok(Some((link, session))) => transmission(link, session, &shared, &activity),
        Ok(None) => Ok(()),
        Err(e) => Err(e),
    };
    let stopping = shared.stopping.load(Ordering::SeqCst);
    // A message cut short because the server closed the connection is not the client's error.
    let closed_by_limits = shared.tracker.closed_by_limits(id);
    match &result {
        Err(ConnError::Protocol(why)) if closed_by_limits => {
            debug_log(id, &format!("{why} (closed by the handshake or stall limits)"))
        }
        Err(ConnError::Protocol(why)) if !stopping => {
            shared.stats.protocol_errors.fetch_add(1, Ordering::Relaxed);
            debug_log(id, why);
        }
        Err(ConnError::Io(e)) => debug_log(id, &e.to_string()),
        _ => {}
    }
    // After `transmission` returned: the writer has given its budget back, so the slot is
    // freed only once its bytes are (the budgets' bound counts on it).
    shared.tracker.remove(id);
}

/// With `NANDLAB_NBD_DEBUG` set in the environment, says why a connection ended.
fn debug_log(id: u64, why: &str) {
    if std::env::var_os("NANDLAB_NBD_DEBUG").is_some() {
        eprintln!("nandlab-nbd: connection {id} closed: {why}");
    }
}

/// Reads exactly `buf.len()` bytes. `Ok(false)` means a clean end of file
/// before the first byte; end of file later is a truncated message.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> Result<bool, ConnError> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) if n == 0 => return Ok(false),
            Ok(0) => return Err(ConnError::Protocol("truncated message")),
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(ConnError::Io(e)),
        }
    }
    Ok(true)
}

/// Like [`read_full`] but end of file anywhere is a truncated message.
fn read_msg(r: &mut impl Read, buf: &mut [u8]) -> Result<(), ConnError> {
    if buf.is_empty() || read_full(r, buf)? {
        Ok(())
    } else {
        Err(ConnError::Protocol("truncated message"))
    }
}

/// What negotiation settled on.
struct Session {
    structured: bool,
}

/// The connection's byte stream: plain, or a TLS session after `STARTTLS` (with the socket
/// kept for shutting it down).
enum Link {
    Plain(Conn),
    Tls { reader: TlsReader, writer: TlsWriter, socket: Conn },
}

impl Read for Link {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Link::Plain(c) => c.read(buf),
            Link::Tls { reader, .. } => reader.read(buf),
        }
    }
}

impl Write for Link {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Link::Plain(c) => c.write(buf),
            Link::Tls { writer, .. } => writer.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The transmission phase's halves: the reader thread's and the writer thread's.
enum ReadHalf {
    /// A plain socket and how long to poll it before a blocking receive.
    Plain(Conn, Duration),
    Tls(TlsReader),
}

enum WriteHalf {
    Plain(Conn),
    Tls(TlsWriter),
}

impl Read for ReadHalf {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            ReadHalf::Plain(c, poll) => c.read_polling(buf, *poll),
            ReadHalf::Tls(r) => r.read(buf),
        }
    }
}

impl Write for WriteHalf {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            WriteHalf::Plain(c) => c.write(buf),
            WriteHalf::Tls(w) => w.write(buf),
        }
    }
    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        match self {
            WriteHalf::Plain(c) => c.write_vectored(bufs),
            WriteHalf::Tls(w) => w.write_vectored(bufs),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Link {
    /// Splits into (reader half, writer half, socket to shut down on a write failure).
    fn split(self, busy_poll: Duration) -> io::Result<(ReadHalf, WriteHalf, Conn)> {
        Ok(match self {
            Link::Plain(c) => {
                let (w, closer) = (c.try_clone()?, c.try_clone()?);
                (ReadHalf::Plain(c, busy_poll), WriteHalf::Plain(w), closer)
            }
            Link::Tls { reader, writer, socket } => {
                (ReadHalf::Tls(reader), WriteHalf::Tls(writer), socket)
            }
        })
    }
}

/// Transmission flags for this export and session.
fn transmission_flags(export: &ExportInfo, structured: bool) -> u16 {
    let mut f = proto::FLAG_HAS_FLAGS
        | proto::FLAG_SEND_FLUSH
        | proto::FLAG_SEND_FUA
        | proto::FLAG_SEND_TRIM
        | proto::FLAG_SEND_WRITE_ZEROES
        | proto::FLAG_CAN_MULTI_CONN
        | proto::FLAG_SEND_CACHE
        | proto::FLAG_SEND_FAST_ZERO;
    if structured {
        f |= proto::FLAG_SEND_DF;
    }
    if export.read_only {
        f |= proto::FLAG_READ_ONLY;
    }
    f
}

/// Whether `name` selects our export: the default export `""` or its name.
fn name_matches(export: &ExportInfo, name: &[u8]) -> bool {
    name.is_empty() || name == export.name.as_bytes()
}

/// Fixed newstyle negotiation, upgrading to TLS on `NBD_OPT_STARTTLS`. `Ok(None)`: the client
/// left (abort, end of file, or an `NBD_OPT_EXPORT_NAME` we cannot satisfy or that arrives
/// before TLS under `--tls require`).
fn negotiate(
    mut conn: Link,
    shared: &Shared,
    id: u64,
    activity: &Activity,
) -> Result<Option<(Link, Session)>, ConnError> {
    let Some(no_zeroes) = greet(&mut conn)? else { return Ok(None) };
    let mut n = Negotiation { conn, shared, id, activity, no_zeroes, structured: false };
    loop {
        let Some((option, data)) = read_option(&mut n.conn)? else { return Ok(None) };
        match n.answer(option, &data)? {
            Next::Option => {}
            Next::Close => return Ok(None),
            Next::Transmit => {
                let session = Session { structured: n.structured };
                return Ok(Some((n.conn, session)));
            }
        }
    }
}

/// The server's greeting and the client's flags. `Some(no_zeroes)`, or `None` when the client
/// left; an error for flags this server does not speak.
fn greet(conn: &mut Link) -> Result<Option<bool>, ConnError> {
    let mut hello = Vec::with_capacity(18);
    hello.extend_from_slice(&proto::NBDMAGIC.to_be_bytes());
    hello.extend_from_slice(&proto::IHAVEOPT.to_be_bytes());
    hello.extend_from_slice(&(proto::FLAG_FIXED_NEWSTYLE | proto::FLAG_NO_ZEROES).to_be_bytes());
    conn.write_all(&hello)?;
    let mut cf = [0u8; 4];
    if !read_full(conn, &mut cf)? {
        return Ok(None);
    }
    let client_flags = u32::from_be_bytes(cf);
    if client_flags & !(proto::FLAG_C_FIXED_NEWSTYLE | proto::FLAG_C_NO_ZEROES) != 0 {
        return Err(ConnError::Protocol("unknown client flags"));
    }
    if client_flags & proto::FLAG_C_FIXED_NEWSTYLE == 0 {
        return Err(ConnError::Protocol("client does not speak fixed newstyle"));
    }
    Ok(Some(client_flags & proto::FLAG_C_NO_ZEROES != 0))
}

/// One option's header and data (`None`: the client left). Data past `MAX_OPTION_LEN` is a
/// protocol error, never an allocation.
fn read_option(conn: &mut Link) -> Result<Option<(u32, Vec<u8>)>, ConnError> {
    let mut hdr = [0u8; 16];
    if !read_full(conn, &mut hdr)? {
        return Ok(None);
    }
    if be_u64(&hdr[0..8]) != proto::IHAVEOPT {
        return Err(ConnError::Protocol("bad option magic"));
    }
    let option = be_u32(&hdr[8..12]);
    let len = be_u32(&hdr[12..16]);
    if len > MAX_OPTION_LEN {
        return Err(ConnError::Protocol("option data too long"));
    }
    let mut data = vec![0u8; len as usize];
    read_msg(conn, &mut data)?;
    Ok(Some((option, data)))
}

/// What follows an answered option.
enum Next {
    /// Another option.
    Option,
    /// The session ends (the client aborted, or an option that cannot fail could not be met).
    Close,
    /// The export is chosen: transmission begins.
    Transmit,
}

/// One connection's option haggling: the link (plain until STARTTLS) and what was agreed.
struct Negotiation<'a> {
    conn: Link,
    shared: &'a Shared,
    id: u64,
    activity: &'a Activity,
    no_zeroes: bool,
    structured: bool,
}

impl Negotiation<'_> {
    /// Answers one option (an error only when the link fails or the client breaks the
    /// protocol).
    fn answer(&mut self, option: u32, data: &[u8]) -> Result<Next, ConnError> {
        let mut out = Vec::new();
        let reply =
            |out: &mut Vec<u8>, t: u32, d: &[u8]| proto::put_option_reply(out, option, t, d);
        let tls_mode = self.shared.tls.as_ref().map_or(TlsMode::Off, TlsConfig::mode);
        let tls_active = matches!(self.conn, Link::Tls { .. });
        let export = &self.shared.export;
        if tls_mode == TlsMode::Require
            && !tls_active
            && option != proto::OPT_STARTTLS
            && option != proto::OPT_ABORT
        {
            if option == proto::OPT_EXPORT_NAME {
                // It cannot be answered with an error: the protocol says to end the session.
                return Ok(Next::Close);
            }
            let why = b"TLS is required by this server: negotiate NBD_OPT_STARTTLS first";
            reply(&mut out, proto::REP_ERR_TLS_REQD, why);
            self.conn.write_all(&out)?;
            return Ok(Next::Option);
        }
        match option {
            proto::OPT_EXPORT_NAME => return self.export_name(data),
            proto::OPT_ABORT => {
                reply(&mut out, proto::REP_ACK, &[]);
                let _ = self.conn.write_all(&out);
                return Ok(Next::Close);
            }
            proto::OPT_LIST if !data.is_empty() => {
                reply(&mut out, proto::REP_ERR_INVALID, b"NBD_OPT_LIST takes no data");
            }
            proto::OPT_LIST => {
                let mut d = Vec::new();
                d.extend_from_slice(&(export.name.len() as u32).to_be_bytes());
                d.extend_from_slice(export.name.as_bytes());
                d.extend_from_slice(export.description.as_bytes());
                reply(&mut out, proto::REP_SERVER, &d);
                reply(&mut out, proto::REP_ACK, &[]);
            }
            proto::OPT_STARTTLS => return self.start_tls(data, out),
            proto::OPT_INFO | proto::OPT_GO => return self.info_or_go(option, data, out),
            proto::OPT_STRUCTURED_REPLY if !data.is_empty() => {
                let why = b"NBD_OPT_STRUCTURED_REPLY takes no data";
                reply(&mut out, proto::REP_ERR_INVALID, why);
            }
            proto::OPT_STRUCTURED_REPLY => {
                self.structured = true;
                reply(&mut out, proto::REP_ACK, &[]);
            }
            proto::OPT_LIST_META_CONTEXT | proto::OPT_SET_META_CONTEXT => {
                if !self.structured {
                    reply(&mut out, proto::REP_ERR_INVALID, b"negotiate structured replies first");
                } else if !meta_context_request_valid(data) {
                    reply(&mut out, proto::REP_ERR_INVALID, b"malformed metadata context request");
                } else {
                    // No metadata context is offered: an empty list.
                    reply(&mut out, proto::REP_ACK, &[]);
                }
            }
            _ => reply(&mut out, proto::REP_ERR_UNSUP, b"option not supported"),
        }
        self.conn.write_all(&out)?;
        Ok(Next::Option)
    }

    /// NBD_OPT_EXPORT_NAME, the old way to choose the export. It cannot fail: a wrong name or
    /// a full server ends the session.
    fn export_name(&mut self, data: &[u8]) -> Result<Next, ConnError> {
        let export = &self.shared.export;
        if !name_matches(export, data) || !take_slot(self.shared, self.id)? {
            return Ok(Next::Close);
        }
        let mut out = Vec::new();
        out.extend_from_slice(&export.size_bytes.to_be_bytes());
        out.extend_from_slice(&transmission_flags(export, self.structured).to_be_bytes());
        if !self.no_zeroes {
            out.extend_from_slice(&[0u8; 124]);
        }
        last_reply(&mut self.conn, &out, self.activity)?;
        Ok(Next::Transmit)
    }

    /// NBD_OPT_STARTTLS: on success the link becomes a TLS session.
    fn start_tls(&mut self, data: &[u8], mut out: Vec<u8>) -> Result<Next, ConnError> {
        let option = proto::OPT_STARTTLS;
        let reply =
            |out: &mut Vec<u8>, t: u32, d: &[u8]| proto::put_option_reply(out, option, t, d);
        match (&self.shared.tls, &mut self.conn) {
            _ if !data.is_empty() => {
                reply(&mut out, proto::REP_ERR_INVALID, b"NBD_OPT_STARTTLS takes no data");
            }
            (_, Link::Tls { .. }) => {
                reply(&mut out, proto::REP_ERR_INVALID, b"TLS is already negotiated");
            }
            (Some(cfg), Link::Plain(socket)) if cfg.mode() != TlsMode::Off => {
                reply(&mut out, proto::REP_ACK, &[]);
                socket.write_all(&out)?;
                let (reader, writer) = tls::accept(cfg, socket)?;
                self.shared.tracker.authenticated(self.id);
                let socket = socket.try_clone()?;
                self.conn = Link::Tls { reader, writer, socket };
                // Nothing negotiated in plaintext carries over into the TLS session (a man in
                // the middle could have injected it).
                self.structured = false;
                return Ok(Next::Option);
            }
            _ => reply(&mut out, proto::REP_ERR_POLICY, b"TLS is not enabled on this server"),
        }
        self.conn.write_all(&out)?;
        Ok(Next::Option)
    }

    /// NBD_OPT_INFO (describe the export) and NBD_OPT_GO (describe it and choose it).
    fn info_or_go(
        &mut self,
        option: u32,
        data: &[u8],
        mut out: Vec<u8>,
    ) -> Result<Next, ConnError> {
        let reply =
            |out: &mut Vec<u8>, t: u32, d: &[u8]| proto::put_option_reply(out, option, t, d);
        let export = &self.shared.export;
        match parse_info_request(data) {
            None => reply(&mut out, proto::REP_ERR_INVALID, b"malformed NBD_OPT_INFO/NBD_OPT_GO"),
            Some((name, _)) if !name_matches(export, name) => {
                reply(&mut out, proto::REP_ERR_UNKNOWN, b"no such export");
            }
            Some((_, requests)) => {
                if option == proto::OPT_GO && !take_slot(self.shared, self.id)? {
                    // All transmission slots are taken; the client may try again or abort.
                    reply(&mut out, proto::REP_ERR_POLICY, refusal(self.shared).as_bytes());
                } else {
                    put_info(&mut out, option, export, self.structured, &requests);
                    if option == proto::OPT_GO {
                        last_reply(&mut self.conn, &out, self.activity)?;
                        return Ok(Next::Transmit);
                    }
                }
            }
        }
        self.conn.write_all(&out)?;
        Ok(Next::Option)
    }
}

/// Takes a transmission slot for connection `id` at the end of a successful negotiation:
/// `false` (counted as a refusal) when all `max_connections` are taken; an error when the
/// connection was closed meanwhile (handshake deadline, eviction).
fn take_slot(shared: &Shared, id: u64) -> Result<bool, ConnError> {
    match shared.tracker.enter_transmission(id) {
        Admission::Admitted => Ok(true),
        Admission::Full => {
            shared.stats.refused_connections.fetch_add(1, Ordering::Relaxed);
            Ok(false)
        }
        Admission::Closed => Err(ConnError::Io(io::Error::new(
            io::ErrorKind::TimedOut,
            "closed during the handshake (deadline passed, or evicted by newer connections)",
        ))),
    }
}

/// What a client refused for want of a transmission slot is told (qemu prints it).
fn refusal(shared: &Shared) -> String {
    format!(
        "too many connections: this server serves at most {} at a time; try again later",
        shared.tracker.limits().max_connections
    )
}

/// Writes the reply that ends negotiation. The connection holds a transmission slot by now, so
/// the write is watched like a reply: a client that stops reading here is closed after the
/// stall timeout instead of holding the slot.
fn last_reply(conn: &mut Link, out: &[u8], activity: &Activity) -> io::Result<()> {
    activity.sending(Instant::now());
    let r = conn.write_all(out);
    activity.sent();
    r
}

/// The replies to a successful `NBD_OPT_INFO`/`NBD_OPT_GO`: `NBD_INFO_EXPORT`,
/// `NBD_INFO_BLOCK_SIZE` (always), the name and description when requested, then `REP_ACK`.
fn put_info(
    out: &mut Vec<u8>,
    option: u32,
    export: &ExportInfo,
    structured: bool,
    requests: &[u16],
) {
    let mut reply = |t: u32, d: &[u8]| proto::put_option_reply(out, option, t, d);
    let mut d = Vec::with_capacity(14);
    d.extend_from_slice(&proto::INFO_EXPORT.to_be_bytes());
    d.extend_from_slice(&export.size_bytes.to_be_bytes());
    d.extend_from_slice(&transmission_flags(export, structured).to_be_bytes());
    reply(proto::REP_INFO, &d);
    d.clear();
    d.extend_from_slice(&proto::INFO_BLOCK_SIZE.to_be_bytes());
    d.extend_from_slice(&export.min_block_bytes.to_be_bytes());
    d.extend_from_slice(&export.preferred_block_bytes.to_be_bytes());
    d.extend_from_slice(&export.max_block_bytes.to_be_bytes());
    reply(proto::REP_INFO, &d);
    if requests.contains(&proto::INFO_NAME) {
        d.clear();
        d.extend_from_slice(&proto::INFO_NAME.to_be_bytes());
        d.extend_from_slice(export.name.as_bytes());
        reply(proto::REP_INFO, &d);
    }
    if requests.contains(&proto::INFO_DESCRIPTION) {
        d.clear();
        d.extend_from_slice(&proto::INFO_DESCRIPTION.to_be_bytes());
        d.extend_from_slice(export.description.as_bytes());
        reply(proto::REP_INFO, &d);
    }
    reply(proto::REP_ACK, &[]);
}

/// Parses `NBD_OPT_INFO`/`NBD_OPT_GO` data: name and information requests.
fn parse_info_request(data: &[u8]) -> Option<(&[u8], Vec<u16>)> {
    if data.len() < 6 {
        return None;
    }
    let name_len = be_u32(&data[0..4]) as usize;
    if name_len > data.len() - 6 {
        return None;
    }
    let name = &data[4..4 + name_len];
    let rest = &data[4 + name_len..];
    let n = be_u16(&rest[0..2]) as usize;
    if rest.len() != 2 + 2 * n {
        return None;
    }
    Some((name, rest[2..].chunks_exact(2).map(be_u16).collect()))
}

/// Checks the layout of `NBD_OPT_LIST_META_CONTEXT`/`NBD_OPT_SET_META_CONTEXT` data.
fn meta_context_request_valid(data: &[u8]) -> bool {
    let mut pos = 0usize;
    let take_len = |pos: &mut usize| -> Option<usize> {
        let b = data.get(*pos..*pos + 4)?;
        *pos += 4;
        Some(be_u32(b) as usize)
    };
    let Some(name_len) = take_len(&mut pos) else { return false };
    pos = match pos.checked_add(name_len) {
        Some(p) if p <= data.len() => p,
        _ => return false,
    };
    let Some(queries) = take_len(&mut pos) else { return false };
    for _ in 0..queries {
        let Some(q) = take_len(&mut pos) else { return false };
        pos = match pos.checked_add(q) {
            Some(p) if p <= data.len() => p,
            _ => return false,
        };
    }
    pos == data.len()
}

/// What to do with a parsed request.
enum Action {
    /// Answer now without the engine.
    Reply(Result<(), (Errno, &'static str)>),
    /// Forward to the engine.
    Engine(CommandKind, bool),
}

/// Validates a request against the export (see the README's error table).
fn validate(
    export: &ExportInfo,
    structured: bool,
    flags: u16,
    typ: u16,
    offset: u64,
    length: u32,
) -> Action {
    let err = |e: Errno, m: &'static str| Action::Reply(Err((e, m)));
    let kind = match typ {
        proto::CMD_READ => CommandKind::Read,
        proto::CMD_WRITE => CommandKind::Write,
        proto::CMD_FLUSH => CommandKind::Flush,
        proto::CMD_TRIM => CommandKind::Trim,
        proto::CMD_CACHE => CommandKind::Cache,
        proto::CMD_WRITE_ZEROES => CommandKind::WriteZeroes,
        _ => return err(Errno::Inval, "unknown command"),
    };
    let allowed = proto::CMD_FLAG_FUA
        | match kind {
            CommandKind::Read if structured => proto::CMD_FLAG_DF,
            CommandKind::WriteZeroes => proto::CMD_FLAG_NO_HOLE | proto::CMD_FLAG_FAST_ZERO,
            _ => 0,
        };
    if flags & !allowed != 0 {
        return err(Errno::Inval, "command flag not valid for this command");
    }
    let fua = flags & proto::CMD_FLAG_FUA != 0;
    if kind == CommandKind::Flush {
        if offset != 0 || length != 0 {
            return err(Errno::Inval, "flush must have offset and length 0");
        }
        return Action::Engine(kind, fua);
    }
    let writes = matches!(kind, CommandKind::Write | CommandKind::Trim | CommandKind::WriteZeroes);
    if writes && export.read_only {
        return err(Errno::Perm, "export is read-only");
    }
    let min = u64::from(export.min_block_bytes);
    if !offset.is_multiple_of(min) || !u64::from(length).is_multiple_of(min) {
        return err(Errno::Inval, "offset or length not a multiple of the minimum block size");
    }
    // The maximum block size limits payload-carrying commands (read, write) and cache; the
    // protocol lets requests without payload (trim, write-zeroes) exceed it, and kernels do
    // send multi-megabyte write-zeroes (BLKZEROOUT through a loop device).
    let capped = matches!(kind, CommandKind::Read | CommandKind::Write | CommandKind::Cache);
    let fast_zero = flags & proto::CMD_FLAG_FAST_ZERO != 0;
    if capped && length > export.max_block_bytes {
        return err(Errno::Inval, "length exceeds the maximum block size");
    }
    match offset.checked_add(u64::from(length)) {
        Some(end) if end <= export.size_bytes => {}
        _ if matches!(kind, CommandKind::Write | CommandKind::WriteZeroes) => {
            return err(Errno::NoSpc, "write beyond the end of the export")
        }
        _ => return err(Errno::Inval, "request beyond the end of the export"),
    }
    if kind == CommandKind::WriteZeroes && fast_zero {
        return err(Errno::NotSup, "fast zeroing is not supported");
    }
    if kind == CommandKind::Read
        && flags & proto::CMD_FLAG_DF != 0
        && length as usize > MAX_CHUNK_DATA
    {
        return err(Errno::Overflow, "read too large for one chunk");
    }
    if length == 0 {
        return Action::Reply(Ok(()));
    }
    Action::Engine(kind, fua)
}

/// The transmission phase: this thread reads, a writer thread replies.
fn transmission(
    link: Link,
    session: Session,
    shared: &Arc<Shared>,
    activity: &Arc<Activity>,
) -> Result<(), ConnError> {
    let (read_half, write_half, closer) = link.split(shared.tracker.busy_poll())?;
    let (tx, rx) = mpsc::channel::<Pending>();
    let budget = Arc::new(shared.budgets.connection());
    let out = ReplyOut {
        sink: Arc::new(Mutex::new(BufWriter::with_capacity(256 * 1024, write_half))),
        queued: Arc::new(AtomicUsize::new(0)),
        structured: session.structured,
    };
    let writer = {
        let (budget, shared, activity, out) =
            (Arc::clone(&budget), Arc::clone(shared), Arc::clone(activity), out.clone());
        thread::Builder::new()
            .name("nbd-writer".into())
            .spawn(move || writer_loop(out, closer, rx, &budget, &shared, &activity))?
    };
    let replies = Replies { tx, out };
    let result = reader_loop(read_half, replies, &budget, shared, activity);
    let _ = writer.join();
    result
}

/// Where a connection's replies go. The writer thread holds replies until their release instant;
/// a reply that is due at once while the writer has nothing queued is written by the reader
/// itself, under the lock the writer writes under. At queue depth 1 that saves a thread wake-up
/// per request and its context switch, which on a small machine shared with the client cost
/// more than the simulation (the served drive beside `nbdkit memory`,
/// experiments/serve/nbdkit_side_by_side.sh). Replies may leave out of order either way (NBD
/// matches them by handle).
struct Replies {
    tx: Sender<Pending>,
    out: ReplyOut,
}

/// The socket's write side, shared by the reader ([`Replies`]) and the writer thread.
#[derive(Clone)]
struct ReplyOut {
    sink: Arc<Mutex<BufWriter<WriteHalf>>>,
    /// Replies handed to the writer and not yet written. Only this connection's reader adds to
    /// it, so when it reads 0 the writer has nothing to write until the reader sends more.
    queued: Arc<AtomicUsize>,
    structured: bool,
}

impl Replies {
    /// Writes `p` now or hands it to the writer. `Ok(false)`: the writer is gone (the connection
    /// is closing). A failed write ends the connection (the writer's own failures do too).
    fn send(
        &self,
        p: Pending,
        budget: &ConnBudget,
        shared: &Shared,
        activity: &Activity,
    ) -> Result<bool, ConnError> {
        let small = match &p.body {
            Body::Read { data, .. } => data.len() <= INLINE_REPLY_MAX_BYTES,
            Body::Ok | Body::Error { .. } => true,
        };
        if small && self.out.queued.load(Ordering::Acquire) == 0 {
            let now = Instant::now();
            if p.release_at <= now {
                // `try_lock`: never wait behind the writer (it may be blocked on a client that
                // does not read; the stall sweep deals with that, not the reader).
                if let Ok(mut w) = self.out.sink.try_lock() {
                    activity.sending(now);
                    write_reply(&mut *w, self.out.structured, &p)?;
                    w.flush()?;
                    activity.sent();
                    drop(w);
                    finish(std::iter::once(p), Instant::now(), budget, shared);
                    return Ok(true);
                }
            }
        }
        self.out.queued.fetch_add(1, Ordering::AcqRel);
        Ok(self.tx.send(p).is_ok())
    }
}

/// After replies are written: gives their budget back and queues their completions for the
/// engine.
fn finish(
    written: impl Iterator<Item = Pending>,
    replied: Instant,
    budget: &ConnBudget,
    shared: &Shared,
) {
    let mut completions = Vec::new();
    for p in written {
        budget.release(p.cost);
        if let Some((kind, received)) = p.completion {
            completions.push(Completion { kind, received, replied, release_at: p.release_at });
        }
    }
    if !completions.is_empty() {
        shared.completions.lock().unwrap_or_else(PoisonError::into_inner).extend(completions);
    }
}

fn reader_loop(
    conn: ReadHalf,
    replies: Replies,
    budget: &ConnBudget,
    shared: &Shared,
    activity: &Activity,
) -> Result<(), ConnError> {
    let export = &shared.export;
    let write_limit = WRITE_DOS_LIMIT.max(u64::from(export.max_block_bytes));
    let mut r = BufReader::with_capacity(256 * 1024, conn);
    let mut hdr = [0u8; proto::REQUEST_HEADER_LEN];
    loop {
        if !read_full(&mut r, &mut hdr)? {
            return Ok(());
        }
        if be_u32(&hdr[0..4]) != proto::REQUEST_MAGIC {
            return Err(ConnError::Protocol("bad request magic"));
        }
        let flags = be_u16(&hdr[4..6]);
        let typ = be_u16(&hdr[6..8]);
        let handle = be_u64(&hdr[8..16]);
        let offset = be_u64(&hdr[16..24]);
        let length = be_u32(&hdr[24..28]);
        if typ == proto::CMD_DISC {
            return Ok(());
        }
        shared.stats.requests.fetch_add(1, Ordering::Relaxed);
        if typ == proto::CMD_WRITE && u64::from(length) > write_limit {
            return Err(ConnError::Protocol("write payload too large"));
        }
        let action = validate(export, replies.out.structured, flags, typ, offset, length);
        // Only payload the server holds costs budget: an invalid write's payload is streamed
        // through and dropped. Validation caps the length at the export's maximum block size,
        // which the server keeps within what the budgets can ever admit.
        let cost = match action {
            Action::Engine(CommandKind::Read | CommandKind::Write, _) => length as usize,
            _ => 0,
        };
        if !budget.acquire(cost) {
            return Ok(());
        }
        let mut data = Vec::new();
        if typ == proto::CMD_WRITE {
            if let Action::Engine(..) = action {
                data = vec![0u8; length as usize];
                // Watched: a client that trickles the payload holds its bytes of the budget.
                activity.receiving(Instant::now());
                read_msg(&mut r, &mut data)?;
                activity.received();
            } else {
                // Invalid write: the payload still follows; read and drop it.
                let n = io::copy(&mut (&mut r).take(u64::from(length)), &mut io::sink())?;
                if n != u64::from(length) {
                    return Err(ConnError::Protocol("truncated message"));
                }
            }
        }
        match action {
            Action::Reply(result) => {
                let body = match result {
                    Ok(()) if typ == proto::CMD_READ => Body::Read { offset, data: Vec::new() },
                    Ok(()) => Body::Ok,
                    Err((errno, message)) => Body::Error { errno, message },
                };
                let p = Pending {
                    release_at: Instant::now(),
                    seq: 0,
                    handle,
                    body,
                    completion: None,
                    cost,
                };
                if !replies.send(p, budget, shared, activity)? {
                    return Ok(());
                }
            }
            Action::Engine(kind, fua) => {
                let req = IoRequest {
                    kind,
                    offset_bytes: offset,
                    length_bytes: length,
                    fua,
                    data,
                    received: Instant::now(),
                };
                let p = run_on_engine(shared, Job { req, handle, cost });
                // Outside the engine lock: other connections' requests need not wait for this
                // reply's socket write.
                if !replies.send(p, budget, shared, activity)? {
                    return Ok(());
                }
            }
        }
    }
}

/// Runs a job under the engine lock (or refuses it once the engine is shut down).
fn run_on_engine(shared: &Shared, mut job: Job) -> Pending {
    let mut slot = shared.engine.lock().unwrap_or_else(PoisonError::into_inner);
    // Stamped under the lock: `received` increases in the order the engine serves.
    job.req.received = Instant::now();
    if slot.shut_down {
        refuse_job(job)
    } else {
        slot.deliver(shared);
        serve_job(&mut slot, shared, job)
    }
}

/// Encodes one reply into `w`.
fn write_reply(w: &mut impl Write, structured: bool, p: &Pending) -> io::Result<()> {
    let mut head = Vec::with_capacity(32);
    match (&p.body, structured) {
        (Body::Ok, false) => proto::put_simple_reply(&mut head, 0, p.handle),
        (Body::Ok, true) => proto::put_structured_header(
            &mut head,
            proto::REPLY_FLAG_DONE,
            proto::REPLY_TYPE_NONE,
            p.handle,
            0,
        ),
        (Body::Error { errno, .. }, false) => {
            proto::put_simple_reply(&mut head, errno.code(), p.handle)
        }
        (Body::Error { errno, message }, true) => {
            proto::put_structured_error(&mut head, p.handle, errno.code(), message)
        }
        (Body::Read { data, .. }, false) => {
            proto::put_simple_reply(&mut head, 0, p.handle);
            w.write_all(&head)?;
            return w.write_all(data);
        }
        (Body::Read { offset, data }, true) => {
            if data.is_empty() {
                proto::put_structured_header(
                    &mut head,
                    proto::REPLY_FLAG_DONE,
                    proto::REPLY_TYPE_NONE,
                    p.handle,
                    0,
                );
                return w.write_all(&head);
            }
            let mut chunk_offset = *offset;
            let mut chunks = data.chunks(MAX_CHUNK_DATA).peekable();
            while let Some(chunk) = chunks.next() {
                let flags = if chunks.peek().is_none() { proto::REPLY_FLAG_DONE } else { 0 };
                head.clear();
                proto::put_structured_header(
                    &mut head,
                    flags,
                    proto::REPLY_TYPE_OFFSET_DATA,
                    p.handle,
                    (8 + chunk.len()) as u32,
                );
                head.extend_from_slice(&chunk_offset.to_be_bytes());
                w.write_all(&head)?;
                w.write_all(chunk)?;
                chunk_offset += chunk.len() as u64;
            }
            return Ok(());
        }
    }
    w.write_all(&head)
}

/// How the writer waits out the last stretch before a release instant.
///
/// *Window*: timed waits wake up late (by 100 µs or more on a VM), so the
/// writer stops sleeping a window before the deadline; the window tracks a
/// decaying maximum of the observed oversleep plus [`SPIN_MARGIN`].
///
/// *Spin mode*: the spin normally calls `yield_now`, so that on a small
/// machine the reader, the engine and the client itself keep running while
/// a writer waits (a pure spin would take a whole core away from them). But
/// when other threads are CPU-bound, a yield can cost a whole scheduler time
/// slice (milliseconds); so each yield is timed, and after one that took
/// longer than [`SLOW_YIELD`] the writer spins without yielding until the
/// memory of it has decayed (about 50 deadlines later).
struct SpinWindow {
    oversleep_ns: u64,
    yield_cost_ns: u64,
}

/// A yield slower than this means CPU-bound competition: spin without yielding.
const SLOW_YIELD: Duration = Duration::from_micros(100);

impl SpinWindow {
    fn new() -> SpinWindow {
        SpinWindow { oversleep_ns: SPIN_MARGIN.as_nanos() as u64, yield_cost_ns: 0 }
    }
    fn window(&self) -> Duration {
        (Duration::from_nanos(self.oversleep_ns) + SPIN_MARGIN)
            .clamp(SPIN_WINDOW_MIN, SPIN_WINDOW_MAX)
    }
    /// Records a timed wait that was meant to end at `target`.
    fn observe(&mut self, target: Instant) {
        let late =
            Instant::now().saturating_duration_since(target).as_nanos().min(10_000_000) as u64;
        // Jump up at once, come down slowly: tracks the upper range of the
        // oversleep distribution, not its mean.
        self.oversleep_ns =
            if late > self.oversleep_ns { late } else { (self.oversleep_ns * 31 + late) / 32 };
    }
    /// Returns at `deadline` (or just after), spinning.
    fn spin_until(&mut self, deadline: Instant) {
        let slow = SLOW_YIELD.as_nanos() as u64;
        if self.yield_cost_ns > slow {
            self.yield_cost_ns = self.yield_cost_ns * 15 / 16;
            while Instant::now() < deadline {
                std::hint::spin_loop();
            }
            return;
        }
        let mut now = Instant::now();
        while now < deadline {
            thread::yield_now();
            let after = Instant::now();
            let cost = (after - now).as_nanos().min(100_000_000) as u64;
            if cost > slow {
                self.yield_cost_ns = cost;
            }
            now = after;
            if self.yield_cost_ns > slow {
                while Instant::now() < deadline {
                    std::hint::spin_loop();
                }
                return;
            }
        }
    }
}

/// The writer: holds replies until their release instant, writes them,
/// reports completions. Ends when the reader and every engine job of this
/// connection are done and all replies are out, or on a socket error.
fn writer_loop(
    out: ReplyOut,
    closer: Conn,
    rx: mpsc::Receiver<Pending>,
    budget: &ConnBudget,
    shared: &Shared,
    activity: &Activity,
) {
    let mut heap: BinaryHeap<Pending> = BinaryHeap::new();
    let mut seq: u64 = 0;
    let mut open = true;
    let mut batch: Vec<Pending> = Vec::new();
    let mut spin = SpinWindow::new();
    let mut push = |heap: &mut BinaryHeap<Pending>, mut p: Pending| {
        p.seq = seq;
        seq += 1;
        heap.push(p);
    };
    let failed = 'outer: loop {
        while open {
            match rx.try_recv() {
                Ok(p) => push(&mut heap, p),
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => open = false,
            }
        }
        let Some(next) = heap.peek().map(|p| p.release_at) else {
            if !open {
                break false;
            }
            match rx.recv() {
                Ok(p) => push(&mut heap, p),
                Err(_) => open = false,
            }
            continue;
        };
        let now = Instant::now();
        if next > now {
            let wait = next - now;
            if wait > spin.window() {
                let nap = wait - spin.window();
                if open {
                    match rx.recv_timeout(nap) {
                        Ok(p) => push(&mut heap, p),
                        Err(RecvTimeoutError::Timeout) => spin.observe(now + nap),
                        Err(RecvTimeoutError::Disconnected) => open = false,
                    }
                } else {
                    thread::sleep(nap);
                    spin.observe(now + nap);
                }
                continue;
            }
            spin.spin_until(next);
        }
        let now = Instant::now();
        while heap.peek().is_some_and(|p| p.release_at <= now) {
            if let Some(p) = heap.pop() {
                batch.push(p);
            }
        }
        // Watched from the sending of the first byte to the flush: a client that does not take
        // its replies is closed after the stall timeout (the blocked write then fails).
        {
            let mut w = out.sink.lock().unwrap_or_else(PoisonError::into_inner);
            activity.sending(now);
            for p in &batch {
                if write_reply(&mut *w, out.structured, p).is_err() {
                    break 'outer true;
                }
            }
            if w.flush().is_err() {
                break 'outer true;
            }
            activity.sent();
        }
        let written = batch.len();
        finish(batch.drain(..), Instant::now(), budget, shared);
        // After the budget is back: the reader may write its next reply itself from here on.
        out.queued.fetch_sub(written, Ordering::AcqRel);
    };
    budget.close();
    if failed {
        // Unblock the reader; otherwise the connection thread closes the
        // socket once the reader is done too.
        closer.shutdown(Shutdown::Both);
    }
}
