//! Protocol conformance with a hand-written client: exact handshake bytes,
//! option haggling (LIST, ABORT, INFO/GO, STARTTLS, structured replies,
//! metadata contexts), simple and structured replies, the server-side
//! validation errors, connection isolation on garbage, pipelining, and
//! clean shutdown.

mod common;
use common::*;
use nandlab_nbd::{CommandKind, Engine, Errno, ExportInfo, IoOutcome, IoRequest, MemoryEngine};
use std::collections::HashSet;
use std::io::Write;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

const SIZE: u64 = 16 << 20;

fn mem() -> MemoryEngine {
    MemoryEngine::new("disk", SIZE).with_description("test disk")
}

#[test]
fn greeting_list_and_abort_exact_bytes() {
    let srv = Server::start(mem());
    let mut c = srv.connect();
    c.greet(3);

    c.send_opt(OPT_LIST, &[]);
    let mut want = Vec::new();
    want.extend_from_slice(&OPT_REPLY_MAGIC.to_be_bytes());
    want.extend_from_slice(&OPT_LIST.to_be_bytes());
    want.extend_from_slice(&REP_SERVER.to_be_bytes());
    want.extend_from_slice(&(4u32 + 4 + 9).to_be_bytes());
    want.extend_from_slice(&4u32.to_be_bytes());
    want.extend_from_slice(b"disk");
    want.extend_from_slice(b"test disk");
    want.extend_from_slice(&OPT_REPLY_MAGIC.to_be_bytes());
    want.extend_from_slice(&OPT_LIST.to_be_bytes());
    want.extend_from_slice(&REP_ACK.to_be_bytes());
    want.extend_from_slice(&0u32.to_be_bytes());
    assert_eq!(c.read_n(want.len()), want, "LIST reply bytes");

    // LIST with data is invalid but the session goes on.
    let r = c.opt(OPT_LIST, b"x");
    assert_eq!(r[0].reply_type, REP_ERR_INVALID);

    c.send_opt(OPT_ABORT, &[]);
    let mut ack = Vec::new();
    ack.extend_from_slice(&OPT_REPLY_MAGIC.to_be_bytes());
    ack.extend_from_slice(&OPT_ABORT.to_be_bytes());
    ack.extend_from_slice(&REP_ACK.to_be_bytes());
    ack.extend_from_slice(&0u32.to_be_bytes());
    assert_eq!(c.read_n(20), ack, "ABORT ack bytes");
    assert!(c.closed(), "server closes after ABORT");
    let report = srv.stop();
    assert_eq!(report.protocol_errors, 0);
    assert_eq!(report.connections, 1);
}

#[test]
fn go_with_block_size_name_description() {
    let srv = Server::start(mem().with_block_sizes(512, 4096, 1 << 20));
    let mut c = srv.connect();
    c.greet(3);
    let r = c.opt(OPT_GO, &Raw::<std::net::TcpStream>::info_data("", &[3, 1, 2]));
    assert_eq!(r.len(), 5, "{r:?}");
    let mut export = vec![0u8, 0];
    export.extend_from_slice(&SIZE.to_be_bytes());
    export.extend_from_slice(&TX_FLAGS.to_be_bytes());
    assert_eq!(r[0], OptReply { option: OPT_GO, reply_type: REP_INFO, data: export });
    let mut bs = vec![0u8, 3];
    bs.extend_from_slice(&512u32.to_be_bytes());
    bs.extend_from_slice(&4096u32.to_be_bytes());
    bs.extend_from_slice(&(1u32 << 20).to_be_bytes());
    assert_eq!(r[1].data, bs, "NBD_INFO_BLOCK_SIZE");
    assert_eq!(r[2].data, [&[0u8, 1][..], b"disk"].concat(), "NBD_INFO_NAME");
    assert_eq!(r[3].data, [&[0u8, 2][..], b"test disk"].concat(), "NBD_INFO_DESCRIPTION");
    assert_eq!(r[4], OptReply { option: OPT_GO, reply_type: REP_ACK, data: vec![] });
    // Transmission works right away (no padding after the ACK).
    assert_eq!(c.cmd(0, CMD_WRITE, 512, 512, &[7u8; 512]), 0);
    assert_eq!(c.read(512, 512).unwrap(), vec![7u8; 512]);
    c.request(0, CMD_DISC, 1, 0, 0, &[]);
    assert!(c.closed());
}

#[test]
fn info_unknown_export_then_go_by_name() {
    let srv = Server::start(mem());
    let mut c = srv.connect();
    c.greet(1);
    let r = c.opt(OPT_GO, &Raw::<std::net::TcpStream>::info_data("nope", &[]));
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].reply_type, REP_ERR_UNKNOWN);
    // Block size info is sent even when not requested; INFO does not enter transmission.
    let r = c.opt(OPT_INFO, &Raw::<std::net::TcpStream>::info_data("disk", &[]));
    let types: Vec<u32> = r.iter().map(|x| x.reply_type).collect();
    assert_eq!(types, [REP_INFO, REP_INFO, REP_ACK]);
    assert_eq!(u16b(&r[1].data), 3);
    // Malformed INFO (name length beyond the data) is refused, session goes on.
    let r = c.opt(OPT_INFO, &[0, 0, 0, 99, 0, 0]);
    assert_eq!(r[0].reply_type, REP_ERR_INVALID);
    let r = c.opt(OPT_GO, &Raw::<std::net::TcpStream>::info_data("disk", &[]));
    assert_eq!(r.last().unwrap().reply_type, REP_ACK);
    assert_eq!(c.read(0, 4).unwrap(), vec![0u8; 4]);
}

#[test]
fn other_options() {
    let srv = Server::start(mem());
    let mut c = srv.connect();
    c.greet(3);
    assert_eq!(c.opt(OPT_STARTTLS, &[])[0].reply_type, REP_ERR_POLICY);
    assert_eq!(c.opt(4, &[])[0].reply_type, REP_ERR_UNSUP, "PEEK_EXPORT");
    assert_eq!(c.opt(11, &[])[0].reply_type, REP_ERR_UNSUP, "EXTENDED_HEADERS");
    assert_eq!(c.opt(0xdead, b"whatever")[0].reply_type, REP_ERR_UNSUP);
    assert_eq!(c.opt(OPT_STRUCTURED_REPLY, b"x")[0].reply_type, REP_ERR_INVALID);
    // A meta-context query: name "", 1 query "base:allocation".
    let mut q = Vec::new();
    q.extend_from_slice(&0u32.to_be_bytes());
    q.extend_from_slice(&1u32.to_be_bytes());
    q.extend_from_slice(&15u32.to_be_bytes());
    q.extend_from_slice(b"base:allocation");
    assert_eq!(
        c.opt(OPT_SET_META_CONTEXT, &q)[0].reply_type,
        REP_ERR_INVALID,
        "needs structured replies"
    );
    assert_eq!(c.opt(OPT_STRUCTURED_REPLY, &[])[0].reply_type, REP_ACK);
    let r = c.opt(OPT_LIST_META_CONTEXT, &q);
    assert_eq!(r.len(), 1, "no contexts offered");
    assert_eq!(r[0].reply_type, REP_ACK);
    assert_eq!(c.opt(OPT_SET_META_CONTEXT, &q)[0].reply_type, REP_ACK);
    assert_eq!(c.opt(OPT_SET_META_CONTEXT, &q[..10])[0].reply_type, REP_ERR_INVALID);
    let r = c.opt(OPT_GO, &Raw::<std::net::TcpStream>::info_data("", &[]));
    assert_eq!(&r[0].data[10..12], &TX_FLAGS_SR.to_be_bytes(), "SEND_DF with structured replies");
    assert_eq!(r.last().unwrap().reply_type, REP_ACK);
}

#[test]
fn export_name_with_and_without_zeroes() {
    let srv = Server::start(mem());
    let mut c = srv.connect();
    c.greet(3);
    c.send_opt(OPT_EXPORT_NAME, b"disk");
    let r = c.read_n(10);
    assert_eq!(u64b(&r[0..8]), SIZE);
    assert_eq!(u16b(&r[8..10]), TX_FLAGS);
    assert_eq!(c.read(0, 8).unwrap(), vec![0u8; 8], "no padding before transmission");

    let mut c = srv.connect();
    c.greet(1);
    c.send_opt(OPT_EXPORT_NAME, b"");
    let r = c.read_n(134);
    assert_eq!(u64b(&r[0..8]), SIZE);
    assert!(r[10..].iter().all(|&b| b == 0), "124 zero bytes");
    assert_eq!(c.cmd(0, CMD_FLUSH, 0, 0, &[]), 0);

    let mut c = srv.connect();
    c.greet(1);
    c.send_opt(OPT_EXPORT_NAME, b"other");
    assert!(c.closed(), "unknown export name ends the session");
    assert_eq!(srv.stop().protocol_errors, 0);
}

#[test]
fn bad_client_flags_and_absurd_option_close() {
    let srv = Server::start(mem());
    let mut c = srv.connect();
    c.greet(0); // no FIXED_NEWSTYLE
    assert!(c.closed());
    let mut c = srv.connect();
    c.greet(1 | 4); // unknown flag
    assert!(c.closed());
    let mut c = srv.connect();
    c.greet(1);
    let mut m = Vec::new();
    m.extend_from_slice(&IHAVEOPT.to_be_bytes());
    m.extend_from_slice(&OPT_LIST.to_be_bytes());
    m.extend_from_slice(&(1u32 << 30).to_be_bytes());
    c.s.write_all(&m).unwrap();
    assert!(c.closed(), "1 GiB option closes");
    let mut c = srv.connect();
    c.greet(1);
    c.s.write_all(b"NOTMAGIC\0\0\0\x03\0\0\0\0").unwrap();
    assert!(c.closed(), "bad option magic closes");
    // A truncated option: header says 100 bytes, 3 arrive, then EOF.
    let mut c = srv.connect();
    c.greet(1);
    let mut m = Vec::new();
    m.extend_from_slice(&IHAVEOPT.to_be_bytes());
    m.extend_from_slice(&OPT_GO.to_be_bytes());
    m.extend_from_slice(&100u32.to_be_bytes());
    m.extend_from_slice(b"abc");
    c.s.write_all(&m).unwrap();
    c.s.shutdown(std::net::Shutdown::Write).unwrap();
    assert!(c.closed());
    // A well-behaved client is still served.
    let mut ok = srv.connect();
    ok.open(false);
    assert_eq!(ok.cmd(0, CMD_FLUSH, 0, 0, &[]), 0);
    drop(ok);
    let report = srv.stop();
    assert_eq!(report.protocol_errors, 5, "{report:?}");
}

#[test]
fn simple_replies_round_trip() {
    let eng = mem();
    let probe = eng.probe();
    let srv = Server::start(eng);
    let mut c = srv.connect();
    c.open(false);
    let data = pattern(1, 65536);
    assert_eq!(c.cmd(FLAG_FUA, CMD_WRITE, 4096, 65536, &data), 0);
    assert_eq!(c.read(4096, 65536).unwrap(), data);
    assert_eq!(c.cmd(0, CMD_FLUSH, 0, 0, &[]), 0);
    assert_eq!(c.cmd(0, CMD_WRITE_ZEROES, 8192, 4096, &[]), 0);
    assert_eq!(c.cmd(FLAG_NO_HOLE | FLAG_FUA, CMD_WRITE_ZEROES, 12288, 4096, &[]), 0);
    assert_eq!(c.read(8192, 8192).unwrap(), vec![0u8; 8192]);
    assert_eq!(c.cmd(0, CMD_TRIM, 16384, 4096, &[]), 0);
    assert_eq!(c.cmd(0, CMD_CACHE, 0, 65536, &[]), 0);
    // Zero-length requests succeed without reaching the engine.
    let before = probe.submitted.load(Ordering::SeqCst);
    assert_eq!(c.read(100, 0).unwrap(), Vec::<u8>::new());
    assert_eq!(c.cmd(0, CMD_WRITE, 100, 0, &[]), 0);
    assert_eq!(c.cmd(0, CMD_TRIM, SIZE, 0, &[]), 0);
    // Last byte of the export.
    assert_eq!(c.cmd(0, CMD_WRITE, SIZE - 1, 1, &[9]), 0);
    assert_eq!(c.read(SIZE - 1, 1).unwrap(), vec![9]);
    assert_eq!(probe.submitted.load(Ordering::SeqCst), before + 2);
    std::thread::sleep(Duration::from_millis(30)); // several 5 ms tick periods
    c.request(0, CMD_DISC, 2, 0, 0, &[]);
    assert!(c.closed());
    let report = srv.stop();
    assert_eq!(report.requests, 13, "{report:?}");
    assert!(probe.shut_down.load(Ordering::SeqCst), "engine shutdown called");
    assert!(probe.ticks.load(Ordering::SeqCst) > 0, "engine ticked");
    let completions = probe.completions();
    assert_eq!(
        completions.len() as u64,
        probe.submitted.load(Ordering::SeqCst),
        "one completion per engine request"
    );
    assert!(completions.iter().all(|c| c.replied >= c.release_at && c.release_at >= c.received));
    assert_eq!(completions.iter().filter(|c| c.kind == CommandKind::Flush).count(), 1);
}

#[test]
fn structured_replies() {
    let srv = Server::start(mem().with_block_sizes(512, 4096, 1 << 20));
    let mut c = srv.connect();
    c.open(true);
    let data = pattern(2, 8192);
    c.request(0, CMD_WRITE, 10, 0, 8192, &data);
    let ch = c.chunk();
    assert_eq!(ch, Chunk { flags: 1, chunk_type: 0, handle: 10, payload: vec![] }, "NONE + DONE");

    c.request(FLAG_DF, CMD_READ, 11, 0, 8192, &[]);
    let ch = c.chunk();
    assert_eq!((ch.flags, ch.chunk_type, ch.handle), (1, 1, 11), "one OFFSET_DATA chunk with DONE");
    assert_eq!(u64b(&ch.payload[..8]), 0);
    assert_eq!(&ch.payload[8..], &data[..]);

    // Errors come as NBD_REPLY_TYPE_ERROR chunks with a message.
    c.request(0, CMD_READ, 12, SIZE, 512, &[]);
    let ch = c.chunk();
    assert_eq!((ch.flags, ch.chunk_type, ch.handle), (1, 0x8001, 12));
    assert_eq!(u32b(&ch.payload[0..4]), EINVAL);
    let mlen = u16b(&ch.payload[4..6]) as usize;
    assert_eq!(ch.payload.len(), 6 + mlen);
    assert!(mlen > 0 && std::str::from_utf8(&ch.payload[6..]).is_ok());

    c.request(0, CMD_WRITE, 13, 100, 512, &[0u8; 512]);
    let ch = c.chunk();
    assert_eq!((ch.chunk_type, u32b(&ch.payload)), (0x8001, EINVAL), "misaligned write");

    // Zero-length read: a lone NONE chunk.
    c.request(0, CMD_READ, 14, 0, 0, &[]);
    assert_eq!(c.chunk(), Chunk { flags: 1, chunk_type: 0, handle: 14, payload: vec![] });
}

#[test]
fn validation_errors_never_reach_the_engine() {
    let eng = mem().with_block_sizes(512, 4096, 1 << 20);
    let probe = eng.probe();
    let srv = Server::start(eng);
    let mut c = srv.connect();
    c.open(false);
    let big = 1u32 << 20;
    // Out of range.
    assert_eq!(c.read(SIZE, 512), Err(EINVAL));
    assert_eq!(c.read(SIZE - 512, 1024), Err(EINVAL));
    assert_eq!(c.read(u64::MAX - 511, 512), Err(EINVAL), "offset overflow");
    assert_eq!(c.cmd(0, CMD_WRITE, SIZE - 512, 1024, &[1u8; 1024]), ENOSPC);
    assert_eq!(c.cmd(0, CMD_WRITE_ZEROES, SIZE, 512, &[]), ENOSPC);
    assert_eq!(c.cmd(0, CMD_TRIM, SIZE, 512, &[]), EINVAL);
    assert_eq!(c.cmd(0, CMD_CACHE, SIZE, 512, &[]), EINVAL);
    // Misaligned.
    assert_eq!(c.read(100, 512), Err(EINVAL));
    assert_eq!(c.read(0, 100), Err(EINVAL));
    assert_eq!(c.cmd(0, CMD_WRITE, 0, 100, &[1u8; 100]), EINVAL);
    assert_eq!(c.cmd(0, CMD_TRIM, 256, 512, &[]), EINVAL);
    // Longer than the maximum block size: the write payload is drained, the connection lives.
    assert_eq!(c.read(0, big + 512), Err(EINVAL));
    assert_eq!(c.cmd(0, CMD_WRITE, 0, big + 512, &vec![3u8; (big + 512) as usize]), EINVAL);
    assert_eq!(c.cmd(0, CMD_CACHE, 0, big + 512, &[]), EINVAL);
    // Write-zeroes carries no payload: the protocol lets it exceed the maximum block size.
    // Unknown commands and flags.
    assert_eq!(c.cmd(0, 7, 0, 512, &[]), EINVAL, "BLOCK_STATUS without contexts");
    assert_eq!(c.cmd(0, 99, 0, 512, &[]), EINVAL);
    assert_eq!(c.cmd(1 << 5, CMD_READ, 0, 512, &[]), EINVAL);
    assert_eq!(c.cmd(FLAG_DF, CMD_READ, 0, 512, &[]), EINVAL, "DF needs structured replies");
    assert_eq!(c.cmd(FLAG_NO_HOLE, CMD_WRITE, 0, 512, &[0u8; 512]), EINVAL);
    assert_eq!(c.cmd(0, CMD_FLUSH, 0, 512, &[]), EINVAL);
    // Fast zero is refused quickly.
    assert_eq!(c.cmd(FLAG_FAST_ZERO, CMD_WRITE_ZEROES, 0, 512, &[]), ENOTSUP);
    assert_eq!(probe.submitted.load(Ordering::SeqCst), 0, "nothing reached the engine");
    // Trim is not capped by the maximum block size.
    assert_eq!(c.cmd(0, CMD_TRIM, 0, 4 * big, &[]), 0);
    assert_eq!(c.read(0, 512).unwrap(), vec![0u8; 512], "connection still in sync");
    assert_eq!(probe.submitted.load(Ordering::SeqCst), 2);
    // A write beyond both max block size and 32 MiB closes the connection.
    c.request(0, CMD_WRITE, 1, 0, 64 << 20, &[]);
    assert!(c.closed());
    assert_eq!(srv.stop().protocol_errors, 1);
}

#[test]
fn read_only_export() {
    let srv = Server::start(mem().read_only(true));
    let mut c = srv.connect();
    c.greet(3);
    let r = c.opt(OPT_GO, &Raw::<std::net::TcpStream>::info_data("disk", &[]));
    assert_eq!(u16b(&r[0].data[10..12]), TX_FLAGS | 2, "READ_ONLY flag");
    assert_eq!(c.cmd(0, CMD_WRITE, 0, 512, &[1u8; 512]), EPERM);
    assert_eq!(c.cmd(0, CMD_TRIM, 0, 512, &[]), EPERM);
    assert_eq!(c.cmd(0, CMD_WRITE_ZEROES, 0, 512, &[]), EPERM);
    assert_eq!(c.read(0, 512).unwrap(), vec![0u8; 512]);
    assert_eq!(c.cmd(0, CMD_FLUSH, 0, 0, &[]), 0);
}

#[test]
fn garbage_closes_only_that_connection() {
    let eng = mem();
    let probe = eng.probe();
    let srv = Server::start(eng);
    let mut a = srv.connect();
    let mut b = srv.connect();
    a.open(false);
    b.open(true);
    assert_eq!(a.cmd(0, CMD_WRITE, 0, 4, b"aaaa"), 0);
    a.s.write_all(&[0xde; 28]).unwrap();
    assert!(a.closed(), "garbage magic closes the connection");
    // The other connection and the engine are unharmed.
    b.request(0, CMD_READ, 77, 0, 4, &[]);
    let ch = b.chunk();
    assert_eq!(&ch.payload[8..], b"aaaa");
    let mut c = srv.connect();
    c.open(false);
    assert_eq!(c.read(0, 4).unwrap(), b"aaaa");
    // Truncated request header then EOF: also a protocol error.
    let mut d = srv.connect();
    d.open(false);
    d.s.write_all(&REQUEST_MAGIC.to_be_bytes()).unwrap();
    d.s.shutdown(std::net::Shutdown::Write).unwrap();
    assert!(d.closed());
    drop((a, b, c));
    let report = srv.stop();
    assert_eq!(report.protocol_errors, 2, "{report:?}");
    assert_eq!(report.connections, 4);
    assert!(probe.shut_down.load(Ordering::SeqCst));
}

/// An engine whose latency decreases with the offset, so that pipelined
/// requests complete in reverse order.
struct Reverse {
    mem: MemoryEngine,
}

impl Engine for Reverse {
    fn export(&self) -> ExportInfo {
        self.mem.export()
    }
    fn submit(&mut self, req: IoRequest) -> IoOutcome {
        let slot = req.offset_bytes / 4096;
        let received = req.received;
        let mut out = self.mem.submit(req);
        out.release_at = received + Duration::from_micros(200 * (64 - slot.min(64)));
        out
    }
    fn shutdown(&mut self) {}
}

#[test]
fn sixty_four_in_flight_writes_then_reads() {
    let srv = Server::start(Reverse { mem: mem() });
    let mut c = srv.connect();
    c.open(true);
    let mut batch = Vec::new();
    for i in 0..64u64 {
        let data = pattern(100 + i, 4096);
        let mut m = Vec::new();
        m.extend_from_slice(&REQUEST_MAGIC.to_be_bytes());
        m.extend_from_slice(&0u16.to_be_bytes());
        m.extend_from_slice(&CMD_WRITE.to_be_bytes());
        m.extend_from_slice(&(1000 + i).to_be_bytes());
        m.extend_from_slice(&(i * 4096).to_be_bytes());
        m.extend_from_slice(&4096u32.to_be_bytes());
        m.extend_from_slice(&data);
        batch.extend_from_slice(&m);
    }
    c.s.write_all(&batch).unwrap(); // all 64 before reading any reply
    let mut seen = Vec::new();
    for _ in 0..64 {
        let ch = c.chunk();
        assert_eq!((ch.flags, ch.chunk_type), (1, 0));
        seen.push(ch.handle);
    }
    let uniq: HashSet<u64> = seen.iter().copied().collect();
    assert_eq!(uniq, (1000..1064).collect::<HashSet<u64>>(), "every handle exactly once");
    assert_ne!(seen, (1000..1064).collect::<Vec<u64>>(), "replies came out of order");
    // Pipelined reads.
    for i in 0..64u64 {
        c.request(0, CMD_READ, 2000 + i, i * 4096, 4096, &[]);
    }
    let mut got = HashSet::new();
    for _ in 0..64 {
        let ch = c.chunk();
        let i = ch.handle - 2000;
        assert_eq!(u64b(&ch.payload), i * 4096);
        assert_eq!(&ch.payload[8..], &pattern(100 + i, 4096)[..]);
        assert!(got.insert(ch.handle));
    }
}

#[test]
fn shutdown_answers_in_flight_requests() {
    let eng = mem().with_latency(Duration::from_millis(300));
    let probe = eng.probe();
    let srv = Server::start(eng);
    let mut c = srv.connect();
    c.open(false);
    c.request(0, CMD_WRITE, 5, 0, 4, b"abcd");
    std::thread::sleep(Duration::from_millis(50));
    let t0 = Instant::now();
    srv.handle.shutdown();
    let (err, h) = c.simple();
    assert_eq!((err, h), (0, 5), "in-flight request answered during shutdown");
    assert!(c.closed(), "then the connection is closed");
    let report = srv.stop();
    assert!(t0.elapsed() < Duration::from_secs(5));
    assert_eq!(report.requests, 1);
    assert!(probe.shut_down.load(Ordering::SeqCst));
    assert_eq!(probe.completions().len(), 1);
}

/// An engine that reports errors and short reads.
struct Faulty;

impl Engine for Faulty {
    fn export(&self) -> ExportInfo {
        ExportInfo {
            name: "f".into(),
            description: String::new(),
            size_bytes: 1 << 20,
            min_block_bytes: 512,
            preferred_block_bytes: 4096,
            max_block_bytes: 1 << 20,
            read_only: false,
        }
    }
    fn submit(&mut self, req: IoRequest) -> IoOutcome {
        let now = Instant::now();
        match req.kind {
            CommandKind::Read if req.offset_bytes == 0 => {
                IoOutcome { error: None, data: vec![1, 2, 3], release_at: now }
            }
            CommandKind::Read => {
                IoOutcome { error: None, data: vec![0; req.length_bytes as usize], release_at: now }
            }
            _ => IoOutcome::err(Errno::Io, now),
        }
    }
    fn shutdown(&mut self) {}
}

#[test]
fn engine_errors_are_passed_on() {
    let srv = Server::start(Faulty);
    let mut c = srv.connect();
    c.open(false);
    assert_eq!(c.cmd(0, CMD_WRITE, 0, 512, &[0u8; 512]), 5);
    assert_eq!(c.read(0, 512), Err(5), "short read from the engine becomes EIO");
    assert_eq!(c.read(512, 512).unwrap(), vec![0u8; 512]);
}
