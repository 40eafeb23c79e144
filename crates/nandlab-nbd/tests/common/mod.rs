//! Shared test helpers: a hand-written NBD client speaking raw bytes over
//! any stream, server start-up, and a subprocess runner with a timeout.
#![allow(dead_code)]

use nandlab_nbd::{spawn, BoundAddress, Engine, Listen, ServeOptions, ServeReport, ShutdownHandle};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub const NBDMAGIC: u64 = 0x4e42_444d_4147_4943;
pub const IHAVEOPT: u64 = 0x4948_4156_454f_5054;
pub const OPT_REPLY_MAGIC: u64 = 0x0003_e889_0455_65a9;
pub const REQUEST_MAGIC: u32 = 0x2560_9513;
pub const SIMPLE_MAGIC: u32 = 0x6744_6698;
pub const STRUCTURED_MAGIC: u32 = 0x668e_33ef;

pub const OPT_EXPORT_NAME: u32 = 1;
pub const OPT_ABORT: u32 = 2;
pub const OPT_LIST: u32 = 3;
pub const OPT_STARTTLS: u32 = 5;
pub const OPT_INFO: u32 = 6;
pub const OPT_GO: u32 = 7;
pub const OPT_STRUCTURED_REPLY: u32 = 8;
pub const OPT_LIST_META_CONTEXT: u32 = 9;
pub const OPT_SET_META_CONTEXT: u32 = 10;

pub const REP_ACK: u32 = 1;
pub const REP_SERVER: u32 = 2;
pub const REP_INFO: u32 = 3;
pub const REP_ERR_UNSUP: u32 = 0x8000_0001;
pub const REP_ERR_POLICY: u32 = 0x8000_0002;
pub const REP_ERR_INVALID: u32 = 0x8000_0003;
pub const REP_ERR_UNKNOWN: u32 = 0x8000_0006;

pub const CMD_READ: u16 = 0;
pub const CMD_WRITE: u16 = 1;
pub const CMD_DISC: u16 = 2;
pub const CMD_FLUSH: u16 = 3;
pub const CMD_TRIM: u16 = 4;
pub const CMD_CACHE: u16 = 5;
pub const CMD_WRITE_ZEROES: u16 = 6;

pub const FLAG_FUA: u16 = 1;
pub const FLAG_NO_HOLE: u16 = 2;
pub const FLAG_DF: u16 = 4;
pub const FLAG_FAST_ZERO: u16 = 16;

pub const EPERM: u32 = 1;
pub const EINVAL: u32 = 22;
pub const ENOSPC: u32 = 28;
pub const ENOTSUP: u32 = 95;

/// Transmission flags the server advertises for a writable export without
/// structured replies: HAS_FLAGS, SEND_FLUSH, SEND_FUA, SEND_TRIM,
/// SEND_WRITE_ZEROES, CAN_MULTI_CONN, SEND_CACHE, SEND_FAST_ZERO.
pub const TX_FLAGS: u16 = 1 | 4 | 8 | 32 | 64 | 256 | 1024 | 2048;
/// With structured replies SEND_DF (bit 7) is added.
pub const TX_FLAGS_SR: u16 = TX_FLAGS | 128;

pub struct Server {
    pub handle: ShutdownHandle,
    pub join: Option<JoinHandle<io::Result<ServeReport>>>,
    pub bound: BoundAddress,
}

impl Server {
    pub fn start(engine: impl Engine) -> Server {
        Server::start_on(engine, Listen::Tcp("127.0.0.1:0".parse().unwrap()))
    }
    pub fn start_on(engine: impl Engine, listen: Listen) -> Server {
        Server::start_with(engine, ServeOptions { listen, ..Server::options() })
    }
    /// Test defaults: an ephemeral loopback port, 5 ms ticks, no signals.
    pub fn options() -> ServeOptions {
        ServeOptions {
            listen: Listen::Tcp("127.0.0.1:0".parse().unwrap()),
            tick: Duration::from_millis(5),
            handle_signals: false,
            ..ServeOptions::default()
        }
    }
    pub fn start_with(engine: impl Engine, opts: ServeOptions) -> Server {
        let (handle, join, bound) = spawn(Box::new(engine), opts).expect("server starts");
        Server { handle, join: Some(join), bound }
    }
    pub fn addr(&self) -> SocketAddr {
        match &self.bound {
            BoundAddress::Tcp(a) => *a,
            BoundAddress::Unix(_) => panic!("not TCP"),
        }
    }
    pub fn uri(&self) -> String {
        self.bound.uri()
    }
    pub fn connect(&self) -> Raw<TcpStream> {
        let s = TcpStream::connect(self.addr()).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        s.set_nodelay(true).unwrap();
        Raw { s }
    }
    pub fn stop(mut self) -> ServeReport {
        self.handle.shutdown();
        self.join.take().unwrap().join().expect("server thread").expect("serve result")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.handle.shutdown();
        if let Some(j) = self.join.take() {
            let _ = j.join();
        }
    }
}

/// A raw protocol client.
pub struct Raw<S: Read + Write> {
    pub s: S,
}

pub fn u16b(b: &[u8]) -> u16 {
    u16::from_be_bytes(b[..2].try_into().unwrap())
}
pub fn u32b(b: &[u8]) -> u32 {
    u32::from_be_bytes(b[..4].try_into().unwrap())
}
pub fn u64b(b: &[u8]) -> u64 {
    u64::from_be_bytes(b[..8].try_into().unwrap())
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptReply {
    pub option: u32,
    pub reply_type: u32,
    pub data: Vec<u8>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    pub flags: u16,
    pub chunk_type: u16,
    pub handle: u64,
    pub payload: Vec<u8>,
}

impl<S: Read + Write> Raw<S> {
    pub fn read_n(&mut self, n: usize) -> Vec<u8> {
        let mut b = vec![0u8; n];
        self.s.read_exact(&mut b).expect("read from server");
        b
    }

    /// Reads the 18-byte greeting, checks it byte for byte, sends client flags.
    pub fn greet(&mut self, client_flags: u32) {
        let g = self.read_n(18);
        let mut want = Vec::new();
        want.extend_from_slice(b"NBDMAGIC");
        want.extend_from_slice(b"IHAVEOPT");
        want.extend_from_slice(&[0x00, 0x03]);
        assert_eq!(g, want, "greeting bytes");
        self.s.write_all(&client_flags.to_be_bytes()).unwrap();
    }

    pub fn send_opt(&mut self, option: u32, data: &[u8]) {
        let mut m = Vec::new();
        m.extend_from_slice(&IHAVEOPT.to_be_bytes());
        m.extend_from_slice(&option.to_be_bytes());
        m.extend_from_slice(&(data.len() as u32).to_be_bytes());
        m.extend_from_slice(data);
        self.s.write_all(&m).unwrap();
    }

    pub fn opt_reply(&mut self) -> OptReply {
        let h = self.read_n(20);
        assert_eq!(u64b(&h[0..8]), OPT_REPLY_MAGIC, "option reply magic");
        let len = u32b(&h[16..20]) as usize;
        OptReply { option: u32b(&h[8..12]), reply_type: u32b(&h[12..16]), data: self.read_n(len) }
    }

    /// Sends an option and collects replies up to the final one (ACK or error).
    pub fn opt(&mut self, option: u32, data: &[u8]) -> Vec<OptReply> {
        self.send_opt(option, data);
        let mut v = Vec::new();
        loop {
            let r = self.opt_reply();
            assert_eq!(r.option, option);
            let last = r.reply_type == REP_ACK || r.reply_type & 0x8000_0000 != 0;
            v.push(r);
            if last {
                return v;
            }
        }
    }

    pub fn info_data(name: &str, infos: &[u16]) -> Vec<u8> {
        let mut d = Vec::new();
        d.extend_from_slice(&(name.len() as u32).to_be_bytes());
        d.extend_from_slice(name.as_bytes());
        d.extend_from_slice(&(infos.len() as u16).to_be_bytes());
        for i in infos {
            d.extend_from_slice(&i.to_be_bytes());
        }
        d
    }

    /// Greets, optionally enables structured replies, and GOes to the default export.
    pub fn open(&mut self, structured: bool) {
        self.greet(3);
        if structured {
            let r = self.opt(OPT_STRUCTURED_REPLY, &[]);
            assert_eq!(r[0].reply_type, REP_ACK);
        }
        let r = self.opt(OPT_GO, &Self::info_data("", &[3]));
        assert_eq!(r.last().unwrap().reply_type, REP_ACK, "GO succeeds: {r:?}");
    }

    pub fn request(
        &mut self,
        flags: u16,
        typ: u16,
        handle: u64,
        offset: u64,
        length: u32,
        payload: &[u8],
    ) {
        let mut m = Vec::with_capacity(28 + payload.len());
        m.extend_from_slice(&REQUEST_MAGIC.to_be_bytes());
        m.extend_from_slice(&flags.to_be_bytes());
        m.extend_from_slice(&typ.to_be_bytes());
        m.extend_from_slice(&handle.to_be_bytes());
        m.extend_from_slice(&offset.to_be_bytes());
        m.extend_from_slice(&length.to_be_bytes());
        m.extend_from_slice(payload);
        self.s.write_all(&m).unwrap();
    }

    /// Reads a simple reply header: (error, handle).
    pub fn simple(&mut self) -> (u32, u64) {
        let h = self.read_n(16);
        assert_eq!(u32b(&h[0..4]), SIMPLE_MAGIC, "simple reply magic");
        (u32b(&h[4..8]), u64b(&h[8..16]))
    }

    pub fn chunk(&mut self) -> Chunk {
        let h = self.read_n(20);
        assert_eq!(u32b(&h[0..4]), STRUCTURED_MAGIC, "structured reply magic");
        let len = u32b(&h[16..20]) as usize;
        Chunk {
            flags: u16b(&h[4..6]),
            chunk_type: u16b(&h[6..8]),
            handle: u64b(&h[8..16]),
            payload: self.read_n(len),
        }
    }

    /// Simple-reply request without read payload; returns the error.
    pub fn cmd(&mut self, flags: u16, typ: u16, offset: u64, length: u32, payload: &[u8]) -> u32 {
        self.request(flags, typ, 0xabcd, offset, length, payload);
        let (err, h) = self.simple();
        assert_eq!(h, 0xabcd);
        err
    }

    /// Simple-reply read.
    pub fn read(&mut self, offset: u64, length: u32) -> Result<Vec<u8>, u32> {
        self.request(0, CMD_READ, 0x5151, offset, length, &[]);
        let (err, h) = self.simple();
        assert_eq!(h, 0x5151);
        if err != 0 {
            Err(err)
        } else {
            Ok(self.read_n(length as usize))
        }
    }

    /// Whether the server has closed the connection (EOF or reset within the timeout).
    pub fn closed(&mut self) -> bool {
        let mut b = [0u8; 1];
        match self.s.read(&mut b) {
            Ok(0) => true,
            Ok(_) => false,
            Err(e) => {
                matches!(e.kind(), io::ErrorKind::ConnectionReset | io::ErrorKind::BrokenPipe)
            }
        }
    }
}

/// Deterministic pseudo-random bytes.
pub fn pattern(seed: u64, n: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

/// Whether an executable is on PATH; prints a skip note when not.
pub fn have(bin: &str) -> bool {
    let found = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(bin).is_file()))
        .unwrap_or(false);
    if !found {
        eprintln!("SKIP: `{bin}` not installed");
    }
    found
}

pub struct Run {
    pub ok: bool,
    pub stdout: String,
    pub stderr: String,
}

/// Runs a command with a timeout (killed after `secs`).
pub fn run(cmd: &mut Command, secs: u64) -> Run {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let t1 = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let t2 = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let deadline = Instant::now() + Duration::from_secs(secs);
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break Some(st);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let stdout = t1.join().unwrap();
    let mut stderr = t2.join().unwrap();
    if status.is_none() {
        stderr.push_str("\n<killed: timeout>");
    }
    Run { ok: status.is_some_and(|s| s.success()), stdout, stderr }
}

pub fn tmp_path(tag: &str) -> std::path::PathBuf {
    let p = std::env::temp_dir().join(format!("nandlab-nbd-test-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_file(&p);
    p
}

pub fn exists(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok()
}
