//! A minimal NBD client (fixed newstyle handshake, `NBD_OPT_GO`, simple replies, one request
//! at a time): enough to time reads, writes and flushes against any NBD server — `nandlab
//! serve`, nbdkit, qemu-nbd. Response time = wall clock from sending a request to its reply.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::target::Target;

const NBDMAGIC: u64 = 0x4e42_444d_4147_4943;
const IHAVEOPT: u64 = 0x4948_4156_454f_5054;
const OPT_REPLY_MAGIC: u64 = 0x0003_e889_0455_65a9;
const REQUEST_MAGIC: u32 = 0x2560_9513;
const SIMPLE_REPLY_MAGIC: u32 = 0x6744_6698;
const OPT_GO: u32 = 7;
const REP_ACK: u32 = 1;
const REP_INFO: u32 = 3;
const CMD_READ: u16 = 0;
const CMD_WRITE: u16 = 1;
const CMD_FLUSH: u16 = 3;

trait Stream: Read + Write + Send {}
impl<T: Read + Write + Send> Stream for T {}

/// An NBD export as a target.
pub struct NbdTarget {
    s: Box<dyn Stream>,
    describe: String,
    size: u64,
    handle: u64,
    buf: Vec<u8>,
}

fn io(what: &str) -> impl Fn(std::io::Error) -> String + '_ {
    move |e| format!("{what}: {e}")
}

impl NbdTarget {
    /// Connects over TCP.
    pub fn tcp(host: &str, port: u16, export: &str) -> Result<Self, String> {
        let what = format!("nbd://{host}:{port}/{export}");
        let s = TcpStream::connect((host, port)).map_err(io(&what))?;
        s.set_nodelay(true).map_err(io(&what))?;
        s.set_read_timeout(Some(Duration::from_secs(60))).map_err(io(&what))?;
        Self::handshake(Box::new(s), export, what)
    }

    /// Connects over a Unix socket.
    pub fn unix(socket: &Path, export: &str) -> Result<Self, String> {
        let what = format!("nbd+unix:///{export}?socket={}", socket.display());
        let s = UnixStream::connect(socket).map_err(io(&what))?;
        s.set_read_timeout(Some(Duration::from_secs(60))).map_err(io(&what))?;
        Self::handshake(Box::new(s), export, what)
    }

    fn handshake(mut s: Box<dyn Stream>, export: &str, what: String) -> Result<Self, String> {
        let mut hello = [0u8; 18];
        s.read_exact(&mut hello).map_err(io(&what))?;
        if be64(&hello[0..8]) != NBDMAGIC || be64(&hello[8..16]) != IHAVEOPT {
            return Err(format!("{what}: not a newstyle NBD server"));
        }
        // Client flags: FIXED_NEWSTYLE | NO_ZEROES.
        s.write_all(&3u32.to_be_bytes()).map_err(io(&what))?;
        let name = export.as_bytes();
        let mut opt = Vec::new();
        opt.extend_from_slice(&IHAVEOPT.to_be_bytes());
        opt.extend_from_slice(&OPT_GO.to_be_bytes());
        opt.extend_from_slice(&(4 + name.len() as u32 + 2).to_be_bytes());
        opt.extend_from_slice(&(name.len() as u32).to_be_bytes());
        opt.extend_from_slice(name);
        opt.extend_from_slice(&0u16.to_be_bytes());
        s.write_all(&opt).map_err(io(&what))?;
        let mut size = None;
        loop {
            let mut h = [0u8; 20];
            s.read_exact(&mut h).map_err(io(&what))?;
            if be64(&h[0..8]) != OPT_REPLY_MAGIC {
                return Err(format!("{what}: bad option reply"));
            }
            let kind = u32::from_be_bytes(h[12..16].try_into().expect("4 bytes"));
            let len = u32::from_be_bytes(h[16..20].try_into().expect("4 bytes")) as usize;
            if len > 1 << 20 {
                return Err(format!("{what}: option reply of {len} bytes"));
            }
            let mut data = vec![0u8; len];
            s.read_exact(&mut data).map_err(io(&what))?;
            match kind {
                REP_ACK => break,
                REP_INFO if len >= 12 && data[0..2] == [0, 0] => size = Some(be64(&data[2..10])),
                REP_INFO => {}
                k if k & 0x8000_0000 != 0 => {
                    let msg = String::from_utf8_lossy(&data);
                    return Err(format!("{what}: the server refused the export: {msg}"));
                }
                _ => {}
            }
        }
        let size = size.ok_or_else(|| format!("{what}: the server sent no export size"))?;
        Ok(Self { s, describe: what, size, handle: 0, buf: Vec::new() })
    }

    fn request(&mut self, cmd: u16, offset: u64, len: u64) -> Result<u64, String> {
        if cmd != CMD_FLUSH && offset.checked_add(len).is_none_or(|e| e > self.size) {
            return Err(format!(
                "{}: {len} bytes at {offset} pass the export's end ({} bytes)",
                self.describe, self.size
            ));
        }
        let len32 = u32::try_from(len).map_err(|_| "request over 4 GiB".to_string())?;
        self.handle += 1;
        let mut r = Vec::with_capacity(28);
        r.extend_from_slice(&REQUEST_MAGIC.to_be_bytes());
        r.extend_from_slice(&0u16.to_be_bytes());
        r.extend_from_slice(&cmd.to_be_bytes());
        r.extend_from_slice(&self.handle.to_be_bytes());
        r.extend_from_slice(&offset.to_be_bytes());
        r.extend_from_slice(&len32.to_be_bytes());
        if cmd == CMD_WRITE && self.buf.len() < len as usize {
            self.buf = vec![0x5a; len as usize];
        }
        let what = self.describe.clone();
        let t = Instant::now();
        self.s.write_all(&r).map_err(io(&what))?;
        if cmd == CMD_WRITE {
            self.s.write_all(&self.buf[..len as usize]).map_err(io(&what))?;
        }
        let mut h = [0u8; 16];
        self.s.read_exact(&mut h).map_err(io(&what))?;
        if u32::from_be_bytes(h[0..4].try_into().expect("4 bytes")) != SIMPLE_REPLY_MAGIC
            || be64(&h[8..16]) != self.handle
        {
            return Err(format!("{what}: unexpected reply"));
        }
        let error = u32::from_be_bytes(h[4..8].try_into().expect("4 bytes"));
        if cmd == CMD_READ && error == 0 {
            if self.buf.len() < len as usize {
                self.buf = vec![0; len as usize];
            }
            self.s.read_exact(&mut self.buf[..len as usize]).map_err(io(&what))?;
        }
        let ns = t.elapsed().as_nanos() as u64;
        if error != 0 {
            return Err(format!(
                "{what}: the server replied error {error} to {len} bytes at {offset}"
            ));
        }
        Ok(ns)
    }
}

fn be64(b: &[u8]) -> u64 {
    u64::from_be_bytes(b[..8].try_into().expect("8 bytes"))
}

impl Target for NbdTarget {
    fn describe(&self) -> String {
        self.describe.clone()
    }
    fn capacity_bytes(&self) -> u64 {
        self.size
    }
    fn write(&mut self, offset: u64, len: u64) -> Result<u64, String> {
        self.request(CMD_WRITE, offset, len)
    }
    fn read(&mut self, offset: u64, len: u64) -> Result<u64, String> {
        self.request(CMD_READ, offset, len)
    }
    fn flush(&mut self) -> Result<u64, String> {
        self.request(CMD_FLUSH, 0, 0)
    }
    fn simulated(&self) -> bool {
        false
    }
    fn max_queue_depth(&self) -> usize {
        64
    }
    fn read_queue(&mut self, reqs: &[(u64, u64)], depth: usize) -> Result<u64, String> {
        let what = self.describe.clone();
        let first = self.handle + 1;
        for &(offset, len) in reqs {
            if offset.checked_add(len).is_none_or(|e| e > self.size) || len > 1 << 25 {
                return Err(format!("{what}: {len} bytes at {offset} pass the export's end"));
            }
        }
        let t = Instant::now();
        let (mut sent, mut done) = (0usize, 0usize);
        while done < reqs.len() {
            // Fill the queue, then take one reply (replies come in completion order; each
            // read's data follows its header).
            let mut wire = Vec::new();
            while sent < reqs.len() && sent - done < depth.max(1) {
                let (offset, len) = reqs[sent];
                wire.extend_from_slice(&REQUEST_MAGIC.to_be_bytes());
                wire.extend_from_slice(&0u16.to_be_bytes());
                wire.extend_from_slice(&CMD_READ.to_be_bytes());
                wire.extend_from_slice(&(first + sent as u64).to_be_bytes());
                wire.extend_from_slice(&offset.to_be_bytes());
                wire.extend_from_slice(&(len as u32).to_be_bytes());
                sent += 1;
            }
            if !wire.is_empty() {
                self.s.write_all(&wire).map_err(io(&what))?;
            }
            let mut h = [0u8; 16];
            self.s.read_exact(&mut h).map_err(io(&what))?;
            let handle = be64(&h[8..16]);
            if u32::from_be_bytes(h[0..4].try_into().expect("4 bytes")) != SIMPLE_REPLY_MAGIC
                || handle < first
                || handle >= first + sent as u64
            {
                return Err(format!("{what}: unexpected reply"));
            }
            let error = u32::from_be_bytes(h[4..8].try_into().expect("4 bytes"));
            if error != 0 {
                return Err(format!("{what}: the server replied error {error} to a read"));
            }
            let len = reqs[(handle - first) as usize].1 as usize;
            if self.buf.len() < len {
                self.buf = vec![0; len];
            }
            self.s.read_exact(&mut self.buf[..len]).map_err(io(&what))?;
            done += 1;
        }
        self.handle = first + reqs.len() as u64 - 1;
        Ok(t.elapsed().as_nanos() as u64)
    }
}
