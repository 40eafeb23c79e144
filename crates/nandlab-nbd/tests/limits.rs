//! Limits and failure containment: clients that never read their replies keep the in-flight
//! payload within the per-connection budget and under the global cap (a hard one, large requests
//! included) while another client is served; a client that stops reading is closed after the
//! stall timeout and its bytes go back; the advertised maximum block size fits the budget;
//! connections beyond `max_connections` are refused in the handshake with a message; an engine
//! that panics answers `EIO` (then and for every later request) instead of hanging clients;
//! the read-only option is enforced by the server whatever the engine says.

mod common;
use common::*;
use nandlab_nbd::{Engine, ExportInfo, IoOutcome, IoRequest, MemoryEngine, ServeOptions};
use std::io::Write;
use std::net::TcpStream;
use std::process::Command;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

const SIZE: u64 = 64 << 20;
const EIO: u32 = 5;
const REP_ERR_POLICY_CODE: u32 = 0x8000_0002;

/// Opens a connection and sends `count` reads of `len` bytes without ever reading a reply. The
/// sending thread stops once the server stops reading (its socket write times out).
fn stalled_client(srv: &Server, count: u64, len: u32) -> TcpStream {
    let mut c = srv.connect();
    c.open(false);
    let mut s = c.s.try_clone().unwrap();
    s.set_write_timeout(Some(Duration::from_millis(500))).unwrap();
    std::thread::spawn(move || {
        for i in 0..count {
            let mut m = Vec::with_capacity(28);
            m.extend_from_slice(&REQUEST_MAGIC.to_be_bytes());
            m.extend_from_slice(&0u16.to_be_bytes());
            m.extend_from_slice(&CMD_READ.to_be_bytes());
            m.extend_from_slice(&i.to_be_bytes());
            m.extend_from_slice(
                &((i * u64::from(len)) % (SIZE - u64::from(len) + 1)).to_be_bytes(),
            );
            m.extend_from_slice(&len.to_be_bytes());
            if s.write_all(&m).is_err() {
                return;
            }
        }
    });
    c.s
}

#[test]
fn stalled_readers_stay_within_budgets_and_others_are_served() {
    const CONN_BUDGET: usize = 4 << 20;
    const TOTAL_BUDGET: usize = 10 << 20;
    let srv = Server::start_with(
        MemoryEngine::new("disk", SIZE),
        ServeOptions {
            connection_budget_bytes: CONN_BUDGET,
            total_budget_bytes: TOTAL_BUDGET,
            // Reserves of 10 MiB / 16 = 640 KiB per slot, 5 MiB shared.
            max_connections: 8,
            ..Server::options()
        },
    );
    // Four clients each ask for 2 GiB of reads (2048 × 1 MiB) and read nothing.
    let stalled: Vec<TcpStream> = (0..4).map(|_| stalled_client(&srv, 2048, 1 << 20)).collect();
    std::thread::sleep(Duration::from_secs(2));
    let now = srv.handle.inflight_bytes();
    let peak = srv.handle.peak_inflight_bytes();
    // Each connection holds at most its 4 MiB; together they stay within the 10 MiB total.
    assert!(peak <= TOTAL_BUDGET as u64, "peak {peak} bytes in flight");
    assert!(now >= (TOTAL_BUDGET / 2) as u64, "the stalled clients should fill the budget: {now}");

    // Another client is still served, at once, with correct data.
    let mut c = srv.connect();
    c.open(true);
    let data = pattern(9, 64 << 10);
    let t = Instant::now();
    c.request(0, CMD_WRITE, 1, 0, data.len() as u32, &data);
    let ch = c.chunk();
    assert_eq!((ch.handle, ch.chunk_type), (1, 0), "write acknowledged");
    c.request(0, CMD_READ, 2, 0, data.len() as u32, &[]);
    let ch = c.chunk();
    assert_eq!(ch.handle, 2);
    assert_eq!(&ch.payload[8..], &data[..]);
    assert!(t.elapsed() < Duration::from_secs(5), "served in {:?}", t.elapsed());

    // Closing the stalled clients gives everything back.
    drop(stalled);
    let deadline = Instant::now() + Duration::from_secs(10);
    while srv.handle.inflight_bytes() > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(srv.handle.inflight_bytes(), 0);
    drop(c);
    let report = srv.stop();
    assert!(report.peak_inflight_bytes >= peak, "{report:?}");
}

/// `NBD_INFO_BLOCK_SIZE` of a `GO` on a fresh connection: (min, preferred, max).
fn block_sizes(srv: &Server) -> (Raw<TcpStream>, [u32; 3]) {
    let mut c = srv.connect();
    c.greet(3);
    let r = c.opt(OPT_GO, &Raw::<TcpStream>::info_data("", &[]));
    let info = r.iter().find(|r| u16b(&r.data[0..2]) == 3).expect("NBD_INFO_BLOCK_SIZE");
    let sizes = [u32b(&info.data[2..6]), u32b(&info.data[6..10]), u32b(&info.data[10..14])];
    assert_eq!(r.last().unwrap().reply_type, REP_ACK);
    (c, sizes)
}

#[test]
fn the_advertised_maximum_block_size_fits_a_small_budget() {
    // 1 MiB in all, 4 slots: 128 KiB reserved for each, 512 KiB shared, so no request above
    // 640 KiB could ever be admitted: that is the maximum advertised (instead of 32 MiB), and a
    // larger request fails at once instead of waiting forever (or overrunning the total).
    let srv = Server::start_with(
        MemoryEngine::new("disk", SIZE),
        ServeOptions {
            connection_budget_bytes: 1 << 20,
            total_budget_bytes: 1 << 20,
            max_connections: 4,
            ..Server::options()
        },
    );
    let (mut c, sizes) = block_sizes(&srv);
    assert_eq!(sizes, [1, 4096, 640 << 10]);
    let data = pattern(4, 640 << 10);
    assert_eq!(c.cmd(0, CMD_WRITE, 0, data.len() as u32, &data), 0);
    assert!(c.read(0, 640 << 10).unwrap() == data);
    // Beyond it: EINVAL, the payload drained (not buffered), the connection goes on.
    let big = vec![7u8; 32 << 20];
    assert_eq!(c.cmd(0, CMD_WRITE, 0, big.len() as u32, &big), EINVAL);
    assert_eq!(c.read(0, 32 << 20), Err(EINVAL));
    assert!(c.read(0, 4096).unwrap() == data[..4096]);
    assert_eq!(srv.stop().peak_inflight_bytes, 640 << 10);
    // A budget too small for even the preferred block size is refused at start-up.
    let (_, join, _) = nandlab_nbd::spawn(
        Box::new(MemoryEngine::new("disk", SIZE)),
        ServeOptions { total_budget_bytes: 4095, max_connections: 1, ..Server::options() },
    )
    .unwrap();
    let e = join.join().unwrap().unwrap_err();
    assert!(e.to_string().contains("total_budget_bytes"), "{e}");
}

/// Sixteen clients that pipeline 32 MiB reads and never read a reply: the server-wide total
/// holds (before, each idle connection got one request of any size admitted: 16 × 32 MiB in
/// flight against a 64 MiB total), and a client reading and writing within its reserve is
/// served at once meanwhile.
#[test]
fn many_clients_pipelining_large_reads_stay_within_the_total() {
    const TOTAL_BUDGET: usize = 64 << 20;
    let srv = Server::start_with(
        MemoryEngine::new("disk", SIZE),
        ServeOptions {
            total_budget_bytes: TOTAL_BUDGET,
            // Reserves of 64 MiB / 40 = 1.6 MiB per slot, 32 MiB shared.
            max_connections: 20,
            ..Server::options()
        },
    );
    let stalled: Vec<TcpStream> = (0..16).map(|_| stalled_client(&srv, 4, 32 << 20)).collect();
    // Until some stalled client holds most of the pool (with generous time for a loaded machine).
    let deadline = Instant::now() + Duration::from_secs(10);
    while srv.handle.inflight_bytes() < 30 << 20 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(500));
    let mut c = srv.connect();
    c.open(false);
    let data = pattern(5, 1 << 20);
    let t = Instant::now();
    for round in 0..8u64 {
        assert_eq!(c.cmd(0, CMD_WRITE, round << 20, data.len() as u32, &data), 0);
        assert!(c.read(round << 20, 1 << 20).unwrap() == data);
    }
    assert!(t.elapsed() < Duration::from_secs(5), "served in {:?}", t.elapsed());
    let peak = srv.handle.peak_inflight_bytes();
    eprintln!("peak in flight with 16 stalled clients: {} MiB", peak >> 20);
    assert!(peak <= TOTAL_BUDGET as u64, "peak {peak} bytes in flight, total {TOTAL_BUDGET}");
    assert!(peak >= 32 << 20, "the stalled clients should have filled the pool: {peak}");
    drop(stalled);
    drop(c);
    assert!(srv.stop().peak_inflight_bytes <= TOTAL_BUDGET as u64);
}

/// Reads from `s` (discarding) until the server's end of the connection shows: `true` for end
/// of file or a reset within `limit`, `false` if the connection is still open then.
fn drained_to_the_end(s: &mut TcpStream, limit: Duration) -> bool {
    use std::io::Read;
    let deadline = Instant::now() + limit;
    s.set_read_timeout(Some(Duration::from_millis(100))).unwrap();
    let mut buf = vec![0u8; 1 << 20];
    while Instant::now() < deadline {
        match s.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => return true,
        }
    }
    false
}

/// A client that stops reading its replies is closed once a transfer has stalled for
/// `stall_timeout`, which gives its bytes back to the shared pool; meanwhile a client within
/// its reserve is served at once, and afterwards a request that needs the pool goes through.
#[test]
fn a_client_that_stops_reading_is_closed_after_the_stall_timeout() {
    const STALL: Duration = Duration::from_millis(1500);
    let srv = Server::start_with(
        MemoryEngine::new("disk", SIZE),
        ServeOptions {
            // 4 slots of 16 MiB: 2 MiB reserved for each, 8 MiB shared.
            total_budget_bytes: 16 << 20,
            max_connections: 4,
            stall_timeout: STALL,
            ..Server::options()
        },
    );
    let t0 = Instant::now();
    let mut stalled = stalled_client(&srv, 64, 8 << 20);
    let deadline = Instant::now() + Duration::from_secs(10);
    while srv.handle.inflight_bytes() < 8 << 20 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(srv.handle.inflight_bytes() >= 8 << 20, "the stalled client should hold the pool");
    // Within the reserve: served now, while the stalled client holds the pool.
    let mut c = srv.connect();
    c.open(false);
    let t = Instant::now();
    assert_eq!(c.read(0, 1 << 20).map(|d| d.len()), Ok(1 << 20));
    assert!(t.elapsed() < Duration::from_millis(1000), "reserve read took {:?}", t.elapsed());
    // 8 MiB needs the pool: it goes through once the stalled client has been closed.
    assert_eq!(c.read(0, 8 << 20).map(|d| d.len()), Ok(8 << 20));
    let waited = t0.elapsed();
    assert!(waited >= STALL, "the pool was free before the stall timeout: {waited:?}");
    assert!(waited < STALL + Duration::from_secs(8), "served only after {waited:?}");
    // The stalled client finds its connection closed (after the replies that were in the
    // socket buffers).
    assert!(drained_to_the_end(&mut stalled, Duration::from_secs(10)), "still open");
    drop(c);
    let report = srv.stop();
    assert_eq!(report.stalled_connections, 1, "{report:?}");
}

#[test]
fn connections_beyond_the_limit_are_refused_with_a_message() {
    let srv = Server::start_with(
        MemoryEngine::new("disk", SIZE),
        ServeOptions { max_connections: 2, ..Server::options() },
    );
    let mut a = srv.connect();
    a.open(false);
    let mut b = srv.connect();
    b.open(false);
    let mut c = srv.connect();
    c.greet(3);
    let r = c.opt(OPT_GO, &Raw::<TcpStream>::info_data("", &[]));
    assert_eq!(r[0].reply_type, REP_ERR_POLICY_CODE);
    let msg = String::from_utf8_lossy(&r[0].data).into_owned();
    assert!(msg.contains("too many connections") && msg.contains("at most 2"), "{msg}");
    c.send_opt(OPT_ABORT, &[]);
    drop(c);
    if have("nbdinfo") {
        let r = run(Command::new("nbdinfo").arg(srv.uri()), 60);
        // libnbd 1.14 prints its own text for the refusal, not the server's message.
        assert!(!r.ok, "a third client must be refused:\n{}", r.stdout);
        assert!(!r.stdout.contains("export-size"), "{}", r.stdout);
    }
    // The served connections are unaffected; once one leaves, a new client gets in.
    assert_eq!(a.cmd(0, CMD_WRITE, 0, 4, b"abcd"), 0);
    b.request(0, CMD_DISC, 1, 0, 0, &[]);
    assert!(b.closed());
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let mut d = srv.connect();
        d.greet(3);
        let r = d.opt(OPT_GO, &Raw::<TcpStream>::info_data("", &[]));
        if r.last().unwrap().reply_type == REP_ACK {
            assert_eq!(d.read(0, 4).unwrap(), b"abcd");
            break;
        }
        assert!(Instant::now() < deadline, "a slot never freed up");
        std::thread::sleep(Duration::from_millis(20));
    }
    let report = srv.stop();
    assert!(report.refused_connections >= 1, "{report:?}");
    assert_eq!(report.protocol_errors, 0, "{report:?}");
}

/// A `MemoryEngine` that panics when asked to write at `panic_offset`.
struct PanicEngine {
    inner: MemoryEngine,
    panic_offset: u64,
}

impl Engine for PanicEngine {
    fn export(&self) -> ExportInfo {
        self.inner.export()
    }
    fn submit(&mut self, req: IoRequest) -> IoOutcome {
        if req.offset_bytes == self.panic_offset {
            panic!("test engine: deliberate panic at offset {}", req.offset_bytes);
        }
        self.inner.submit(req)
    }
    fn shutdown(&mut self) {
        self.inner.shutdown()
    }
}

#[test]
fn engine_panic_answers_eio_now_and_later_and_skips_shutdown() {
    let inner = MemoryEngine::new("disk", SIZE);
    let probe = inner.probe();
    let srv = Server::start(PanicEngine { inner, panic_offset: 8192 });
    let mut c = srv.connect();
    c.open(false);
    let mut other = srv.connect();
    other.open(true);
    assert_eq!(c.cmd(0, CMD_WRITE, 0, 4, b"abcd"), 0);
    assert_eq!(c.read(0, 4).unwrap(), b"abcd");
    let submitted = probe.submitted.load(Ordering::SeqCst);
    assert_eq!(c.cmd(0, CMD_WRITE, 8192, 4, b"boom"), EIO, "the panicking request");
    // Later requests, on this and on another connection, get EIO without reaching the engine.
    assert_eq!(c.read(0, 4), Err(EIO));
    assert_eq!(c.cmd(0, CMD_FLUSH, 0, 0, &[]), EIO);
    other.request(0, CMD_READ, 7, 0, 4, &[]);
    let ch = other.chunk();
    assert_eq!((ch.handle, ch.chunk_type), (7, 0x8001), "structured error chunk");
    assert_eq!(u32b(&ch.payload[0..4]), EIO);
    assert_eq!(probe.submitted.load(Ordering::SeqCst), submitted, "engine called after failure");
    // The server itself goes on: validation errors are still answered normally.
    assert_eq!(c.cmd(0, CMD_WRITE, SIZE, 4, b"abcd"), ENOSPC);
    drop((c, other));
    let report = srv.stop();
    assert!(report.engine_failed, "{report:?}");
    assert!(!probe.shut_down.load(Ordering::SeqCst), "shutdown must not be called");
}

#[test]
fn read_only_option_refuses_writes_before_the_engine() {
    let eng = MemoryEngine::new("disk", SIZE);
    let probe = eng.probe();
    let srv = Server::start_with(eng, ServeOptions { read_only: true, ..Server::options() });
    let mut c = srv.connect();
    c.greet(3);
    let r = c.opt(OPT_GO, &Raw::<TcpStream>::info_data("", &[]));
    assert_eq!(u16b(&r[0].data[10..12]), TX_FLAGS | 2, "READ_ONLY flag advertised");
    assert_eq!(c.cmd(0, CMD_WRITE, 0, 4, b"abcd"), EPERM);
    assert_eq!(c.cmd(0, CMD_TRIM, 0, 4096, &[]), EPERM);
    assert_eq!(c.cmd(0, CMD_WRITE_ZEROES, 0, 4096, &[]), EPERM);
    assert_eq!(c.read(0, 4).unwrap(), vec![0u8; 4]);
    assert_eq!(probe.submitted.load(Ordering::SeqCst), 1, "only the read reached the engine");
    drop(c);
    if have("nbdinfo") {
        let r = run(Command::new("nbdinfo").arg(srv.uri()), 60);
        assert!(r.ok && r.stdout.contains("is_read_only: true"), "{}", r.stdout);
    }
    if have("qemu-io") {
        let r =
            run(Command::new("qemu-io").args(["-f", "raw", &srv.uri(), "-c", "write 0 4k"]), 60);
        let out = format!("{}{}", r.stdout, r.stderr);
        assert!(
            !r.ok || out.contains("Operation not permitted") || out.contains("read-only"),
            "qemu-io write must fail:\n{out}"
        );
        assert!(!out.contains("wrote 4096"), "{out}");
    }
    // Whatever the clients tried, nothing was written.
    let mut c = srv.connect();
    c.open(false);
    assert_eq!(c.read(0, 4096).unwrap(), vec![0u8; 4096]);
}

/// A client that connects and then stalls (or trickles) in option negotiation is closed once
/// `negotiation_timeout` has passed, freeing its connection slot; one that finished negotiating
/// may stay idle for as long as it likes.
#[test]
fn a_client_stalled_in_negotiation_is_closed_after_the_timeout() {
    let srv = Server::start_with(
        MemoryEngine::new("disk", SIZE),
        ServeOptions { negotiation_timeout: Duration::from_millis(300), ..Server::options() },
    );
    let mut idle = srv.connect();
    idle.open(false);
    let mut stalled = srv.connect();
    let started = Instant::now();
    stalled.greet(0x3); // FIXED_NEWSTYLE | NO_ZEROES, then nothing
    assert!(stalled.closed(), "the stalled client must be disconnected");
    let waited = started.elapsed();
    assert!(waited >= Duration::from_millis(250), "closed too early: {waited:?}");
    assert!(waited < Duration::from_secs(5), "closed too late: {waited:?}");
    // The client that negotiated in time still works after being idle past the timeout.
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(idle.read(0, 4096).map(|d| d.len()), Ok(4096));
}
