//! Connections that never finish the handshake cannot lock out clients that do. A flood of
//! silent sockets and of slow senders (bytes trickled into one option, into a TLS record, or
//! whole options sent slowly) against a server with two transmission slots: honest clients
//! (with the right PSK under `TlsMode::Require`, or in plaintext) still negotiate and do I/O at
//! once, both slots are theirs, and every slow sender is closed at the handshake deadline
//! although it keeps sending.

mod common;
use common::*;
use nandlab_nbd::{MemoryEngine, ServeOptions, TlsConfig, TlsCredentials, TlsMode};
use nandlab_testkit::Scratch;
use openssl::ssl::{SslConnector, SslMethod, SslStream, SslVerifyMode};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

const SIZE: u64 = 16 << 20;
const PSK_HEX: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
/// The handshake deadline of these servers: short to keep the test fast, long enough that an
/// honest client on a loaded machine never needs it.
const DEADLINE: Duration = Duration::from_secs(4);
/// Sockets that connect and send nothing.
const SILENT: usize = 64;
/// The pause between a slow sender's bytes (or options).
const TRICKLE: Duration = Duration::from_millis(250);

/// What a slow sender does.
#[derive(Clone, Copy, Debug)]
enum Slow {
    /// Announces a 60000-byte option and sends its data one byte at a time.
    OptionBytes,
    /// Sends a complete `NBD_OPT_LIST` (answered) again and again.
    Chatty,
    /// `STARTTLS`, then a TLS record header announcing 16 KiB, then its body byte by byte.
    TlsRecord,
}

fn server(tls: bool) -> Server {
    let tls = tls.then(|| {
        // The keys are read at load, so the file can go with its directory right after.
        let dir = Scratch::new("nandlab-nbd-handshakes");
        let file = dir.join("keys.psk");
        std::fs::write(&file, format!("alice:{PSK_HEX}\n")).unwrap();
        TlsConfig::load(TlsMode::Require, TlsCredentials::Psk { file }).unwrap()
    });
    Server::start_with(
        MemoryEngine::new("disk", SIZE),
        ServeOptions {
            tls,
            max_connections: 2,
            max_handshakes: 16,
            negotiation_timeout: DEADLINE,
            ..Server::options()
        },
    )
}

fn opt_msg(option: u32, data: &[u8]) -> Vec<u8> {
    let mut m = IHAVEOPT.to_be_bytes().to_vec();
    m.extend_from_slice(&option.to_be_bytes());
    m.extend_from_slice(&(data.len() as u32).to_be_bytes());
    m.extend_from_slice(data);
    m
}

/// Starts a slow sender; its channel gets the instant its connection was found closed by the
/// server (a failed write or read, end of file), or nothing if it is still open after
/// `give_up`.
fn slow_sender(addr: SocketAddr, how: Slow, give_up: Duration) -> mpsc::Receiver<Instant> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let started = Instant::now();
        let Ok(mut s) = TcpStream::connect(addr) else { return };
        s.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
        let closed = |tx: &mpsc::Sender<Instant>| {
            let _ = tx.send(Instant::now());
        };
        let mut hello = [0u8; 18];
        if s.read_exact(&mut hello).is_err() || s.write_all(&3u32.to_be_bytes()).is_err() {
            return closed(&tx);
        }
        let first = match how {
            Slow::OptionBytes => {
                opt_msg(OPT_LIST, &[])[..12].iter().copied().chain(60000u32.to_be_bytes()).collect()
            }
            Slow::Chatty => Vec::new(),
            Slow::TlsRecord => opt_msg(OPT_STARTTLS, &[]),
        };
        if s.write_all(&first).is_err() {
            return closed(&tx);
        }
        if let Slow::TlsRecord = how {
            // The STARTTLS acknowledgement, then a record header whose body never completes.
            let mut ack = [0u8; 20];
            if s.read_exact(&mut ack).is_err() || s.write_all(&[0x16, 3, 1, 0x40, 0]).is_err() {
                return closed(&tx);
            }
        }
        s.set_read_timeout(Some(Duration::from_millis(1))).unwrap();
        while started.elapsed() < give_up {
            thread::sleep(TRICKLE);
            let sent = match how {
                Slow::Chatty => s.write_all(&opt_msg(OPT_LIST, &[])),
                _ => s.write_all(&[0]),
            };
            if sent.is_err() {
                return closed(&tx);
            }
            // Drain any answer; end of file or a reset means the server closed.
            let mut buf = [0u8; 4096];
            match s.read(&mut buf) {
                Ok(0) => return closed(&tx),
                Ok(_) => {}
                Err(e)
                    if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {}
                Err(_) => return closed(&tx),
            }
        }
    });
    rx
}

/// A raw client over OpenSSL with the PSK `alice`/[`PSK_HEX`].
fn starttls(mut c: Raw<TcpStream>) -> Raw<SslStream<TcpStream>> {
    let r = c.opt(OPT_STARTTLS, &[]);
    assert_eq!(r[0].reply_type, REP_ACK, "STARTTLS accepted: {r:?}");
    let mut b = SslConnector::builder(SslMethod::tls_client()).unwrap();
    b.set_verify(SslVerifyMode::NONE);
    b.set_psk_client_callback(|_ssl, _hint, identity, psk| {
        let key: Vec<u8> = (0..PSK_HEX.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&PSK_HEX[i..i + 2], 16).unwrap())
            .collect();
        identity[..6].copy_from_slice(b"alice\0");
        psk[..key.len()].copy_from_slice(&key);
        Ok(key.len())
    });
    let conn =
        b.build().configure().unwrap().verify_hostname(false).use_server_name_indication(false);
    Raw { s: conn.connect("localhost", c.s).expect("TLS handshake") }
}

/// An honest client: `GO` (after `STARTTLS` if `c` is a TLS client), then writes and reads
/// back 64 KiB.
fn honest<S: Read + Write>(mut c: Raw<S>, seed: u64) -> Raw<S> {
    let r = c.opt(OPT_GO, &Raw::<TcpStream>::info_data("", &[]));
    assert_eq!(r.last().unwrap().reply_type, REP_ACK, "GO refused: {r:?}");
    let data = pattern(seed, 64 << 10);
    assert_eq!(c.cmd(0, CMD_WRITE, seed << 16, data.len() as u32, &data), 0);
    assert!(c.read(seed << 16, data.len() as u32).unwrap() == data);
    c
}

/// Connects and greets.
fn greeted(srv: &Server) -> Raw<TcpStream> {
    let mut c = srv.connect();
    c.greet(3);
    c
}

/// Slow senders started at `t0`, with what each does.
type SlowSenders = Vec<(Slow, mpsc::Receiver<Instant>)>;

/// Floods `srv` with silent sockets and slow senders of `kinds`, and gives the server a moment
/// to see them all: honest clients come after the flood.
fn flood(srv: &Server, kinds: &[Slow]) -> (Vec<TcpStream>, SlowSenders, Instant) {
    let addr = srv.addr();
    let t0 = Instant::now();
    let silent = (0..SILENT).map(|_| TcpStream::connect(addr).expect("connect")).collect();
    let give_up = DEADLINE + Duration::from_secs(6);
    let slow = kinds.iter().map(|&k| (k, slow_sender(addr, k, give_up))).collect();
    thread::sleep(Duration::from_millis(300));
    (silent, slow, t0)
}

/// Every slow sender was closed at the deadline, though it never stopped sending.
fn slow_senders_closed_at_the_deadline(slow: SlowSenders, t0: Instant) {
    for (kind, rx) in slow {
        let at = rx.recv_timeout(DEADLINE + Duration::from_secs(6)).unwrap_or_else(|_| {
            panic!("a {kind:?} slow sender was still connected long after the deadline")
        });
        let after = at - t0;
        assert!(after < DEADLINE + Duration::from_secs(3), "{kind:?} closed after {after:?}");
    }
}

/// Two honest clients: negotiated and served within a couple of seconds of the flood.
fn promptly<T>(f: impl FnOnce() -> T) -> T {
    let t = Instant::now();
    let r = f();
    let took = t.elapsed();
    assert!(took < Duration::from_secs(3), "the honest clients took {took:?} under the flood");
    r
}

/// The honest client still has its slot after the flood is gone.
fn still_served<S: Read + Write>(c: &mut Raw<S>, seed: u64) {
    assert_eq!(c.read(seed << 16, 4096).map(|d| d.len()), Ok(4096));
}

#[test]
fn a_flood_of_silent_and_slow_sockets_cannot_lock_out_a_psk_client() {
    let srv = server(true);
    let kinds =
        [Slow::OptionBytes, Slow::OptionBytes, Slow::Chatty, Slow::TlsRecord, Slow::TlsRecord];
    let (silent, slow, t0) = flood(&srv, &kinds);
    let (mut a, mut b) =
        promptly(|| (honest(starttls(greeted(&srv)), 1), honest(starttls(greeted(&srv)), 2)));
    slow_senders_closed_at_the_deadline(slow, t0);
    still_served(&mut a, 1);
    still_served(&mut b, 2);
    drop((silent, a, b));
    let report = srv.stop();
    assert_eq!(report.refused_connections, 0, "{report:?}");
    assert!(report.dropped_handshakes >= SILENT as u64, "{report:?}");
    // Cut short by the server, not malformed by the client.
    assert_eq!(report.protocol_errors, 0, "{report:?}");
}

#[test]
fn a_flood_of_silent_and_slow_sockets_cannot_lock_out_a_plaintext_client() {
    let srv = server(false);
    let kinds =
        [Slow::OptionBytes, Slow::OptionBytes, Slow::OptionBytes, Slow::Chatty, Slow::Chatty];
    let (silent, slow, t0) = flood(&srv, &kinds);
    let (mut a, mut b) = promptly(|| (honest(greeted(&srv), 1), honest(greeted(&srv), 2)));
    slow_senders_closed_at_the_deadline(slow, t0);
    still_served(&mut a, 1);
    still_served(&mut b, 2);
    drop((silent, a, b));
    let report = srv.stop();
    assert_eq!(report.refused_connections, 0, "{report:?}");
    assert!(report.dropped_handshakes >= SILENT as u64, "{report:?}");
    // Cut short by the server, not malformed by the client.
    assert_eq!(report.protocol_errors, 0, "{report:?}");
}
