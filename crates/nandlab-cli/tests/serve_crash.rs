//! Goal: `nandlab serve` keeps every write acknowledged before an acknowledged FLUSH across
//! `kill -9`, and comes back consistent: every block reads either its flushed content or one of
//! the contents written after that flush — never garbage, never an older version.
//! Method: a small device (cleaning runs constantly), a minimal NBD client over a Unix socket,
//! seeded random 4 KiB writes with periodic FLUSHes, SIGKILL at a random point (often with a
//! write in flight), restart on the same image, verify the whole disk against the model. The
//! number of cycles is `NANDLAB_CRASH_CYCLES` (default 40; the acceptance run uses 200).

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BLOCK: usize = 4096;

struct Client {
    s: UnixStream,
    handle: u64,
    size: u64,
}

fn read_u16(s: &mut impl Read) -> u16 {
    let mut b = [0u8; 2];
    s.read_exact(&mut b).unwrap();
    u16::from_be_bytes(b)
}
fn read_u32(s: &mut impl Read) -> u32 {
    let mut b = [0u8; 4];
    s.read_exact(&mut b).unwrap();
    u32::from_be_bytes(b)
}
fn read_u64(s: &mut impl Read) -> u64 {
    let mut b = [0u8; 8];
    s.read_exact(&mut b).unwrap();
    u64::from_be_bytes(b)
}

impl Client {
    fn connect(path: &Path) -> Client {
        let mut s = UnixStream::connect(path).unwrap();
        assert_eq!(read_u64(&mut s), 0x4e42_444d_4147_4943);
        assert_eq!(read_u64(&mut s), 0x4948_4156_454f_5054);
        let _flags = read_u16(&mut s);
        s.write_all(&3u32.to_be_bytes()).unwrap(); // FIXED_NEWSTYLE | NO_ZEROES
                                                   // NBD_OPT_GO with the default export "" and no info requests.
        let mut opt = Vec::new();
        opt.extend_from_slice(&0x4948_4156_454f_5054u64.to_be_bytes());
        opt.extend_from_slice(&7u32.to_be_bytes());
        opt.extend_from_slice(&6u32.to_be_bytes());
        opt.extend_from_slice(&0u32.to_be_bytes());
        opt.extend_from_slice(&0u16.to_be_bytes());
        s.write_all(&opt).unwrap();
        let mut size = 0;
        loop {
            assert_eq!(read_u64(&mut s), 0x0003_e889_0455_65a9);
            let _option = read_u32(&mut s);
            let kind = read_u32(&mut s);
            let len = read_u32(&mut s) as usize;
            let mut data = vec![0u8; len];
            s.read_exact(&mut data).unwrap();
            match kind {
                1 => break, // ACK
                3 if u16::from_be_bytes([data[0], data[1]]) == 0 => {
                    size = u64::from_be_bytes(data[2..10].try_into().unwrap());
                }
                3 => {}
                other => panic!("option reply {other:#x}"),
            }
        }
        Client { s, handle: 0, size }
    }

    fn send(&mut self, kind: u16, offset: u64, len: u32, payload: &[u8]) -> u64 {
        self.handle += 1;
        let mut r = Vec::with_capacity(28 + payload.len());
        r.extend_from_slice(&0x2560_9513u32.to_be_bytes());
        r.extend_from_slice(&0u16.to_be_bytes());
        r.extend_from_slice(&kind.to_be_bytes());
        r.extend_from_slice(&self.handle.to_be_bytes());
        r.extend_from_slice(&offset.to_be_bytes());
        r.extend_from_slice(&len.to_be_bytes());
        r.extend_from_slice(payload);
        self.s.write_all(&r).unwrap();
        self.handle
    }

    fn reply(&mut self, handle: u64, data: &mut [u8]) {
        assert_eq!(read_u32(&mut self.s), 0x6744_6698, "simple reply magic");
        assert_eq!(read_u32(&mut self.s), 0, "NBD error");
        assert_eq!(read_u64(&mut self.s), handle);
        self.s.read_exact(data).unwrap();
    }

    fn write(&mut self, offset: u64, data: &[u8]) {
        let h = self.send(1, offset, data.len() as u32, data);
        self.reply(h, &mut []);
    }

    fn flush(&mut self) {
        let h = self.send(3, 0, 0, &[]);
        self.reply(h, &mut []);
    }

    fn read(&mut self, offset: u64, len: usize) -> Vec<u8> {
        let mut buf = vec![0u8; len];
        let h = self.send(0, offset, len as u32, &[]);
        self.reply(h, &mut buf);
        buf
    }
}

fn content(block: u64, version: u64) -> Vec<u8> {
    let mut v = Vec::with_capacity(BLOCK);
    while v.len() < BLOCK {
        v.extend_from_slice(&block.to_le_bytes());
        v.extend_from_slice(&version.to_le_bytes());
    }
    v
}

/// The version a block holds (0 = zeros, never written), or None for garbage.
fn version_of(block: u64, data: &[u8]) -> Option<u64> {
    if data.iter().all(|&b| b == 0) {
        return Some(0);
    }
    let version = u64::from_le_bytes(data[8..16].try_into().unwrap());
    (data == content(block, version).as_slice()).then_some(version)
}

fn start(dir: &Path, image: &Path, extra: &[&str]) -> (Child, PathBuf) {
    let sock = dir.join("nbd.sock");
    let _ = std::fs::remove_file(&sock);
    let child = Command::new(env!("CARGO_BIN_EXE_nandlab"))
        .args(["serve", "--image"])
        .arg(image)
        .arg("--unix")
        .arg(&sock)
        .args([
            "--set",
            "device.blocks=96",
            "--set",
            "device.pages_per_block=32",
            "--set",
            "device.utilization=0.7",
            "--set",
            "serve.emulate_latency=false",
            "--set",
            "ftl.placement=dac",
            "--set",
            "ftl.cleaning=cost-benefit",
        ])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while UnixStream::connect(&sock).is_err() {
        assert!(Instant::now() < deadline, "server did not start");
        std::thread::sleep(Duration::from_millis(5));
    }
    (child, sock)
}

struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 =
            self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
}

#[test]
fn flushed_writes_survive_kill_9_with_oob_scan_recovery() {
    crash_cycles("scan", &["--set", "serve.recovery=scan"]);
}

/// Checkpoints every tick (100 ms), so kills also land inside checkpoint writes.
#[test]
fn flushed_writes_survive_kill_9_with_checkpoint_recovery() {
    crash_cycles(
        "checkpoint",
        &["--set", "serve.recovery=checkpoint", "--set", "serve.checkpoint_interval_s=0.05"],
    );
}

fn crash_cycles(name: &str, extra: &[&str]) {
    let cycles: u64 =
        std::env::var("NANDLAB_CRASH_CYCLES").ok().and_then(|v| v.parse().ok()).unwrap_or(40);
    let dir = std::env::temp_dir().join(format!("nandlab-crash-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let image = dir.join("crash.img");
    let _ = std::fs::remove_file(&image);
    let mut rng = Lcg(0x5eed);
    // Per block: the version durable at the last acknowledged flush, and versions written
    // since (acknowledged or in flight) that may or may not have survived.
    let mut durable: Vec<u64> = Vec::new();
    let mut pending: Vec<Vec<u64>> = Vec::new();
    let mut version = 0u64;
    let (mut lost, mut inconsistent) = (0u64, 0u64);
    for cycle in 0..cycles {
        let (mut child, sock) = start(&dir, &image, extra);
        let mut c = Client::connect(&sock);
        let blocks = c.size / BLOCK as u64;
        if durable.is_empty() {
            durable = vec![0; blocks as usize];
            pending = vec![Vec::new(); blocks as usize];
        }
        // Verify the whole disk against the model, then adopt what survived.
        for chunk in (0..blocks).step_by(256) {
            let n = 256.min(blocks - chunk);
            let data = c.read(chunk * BLOCK as u64, (n as usize) * BLOCK);
            for i in 0..n {
                let b = (chunk + i) as usize;
                let got = version_of(b as u64, &data[i as usize * BLOCK..(i as usize + 1) * BLOCK]);
                match got {
                    None => inconsistent += 1,
                    Some(v) if v == durable[b] || pending[b].contains(&v) => {
                        durable[b] = v;
                    }
                    Some(v) => {
                        eprintln!(
                            "cycle {cycle}: block {b} holds version {v}, expected {} or {:?}",
                            durable[b], pending[b]
                        );
                        lost += 1;
                    }
                }
                pending[b].clear();
            }
        }
        // A burst of random writes with periodic flushes, then a kill at a random point.
        // Sometimes idle long enough for a checkpoint before the burst.
        if rng.next().is_multiple_of(3) {
            std::thread::sleep(Duration::from_millis(rng.next() % 150));
        }
        let ops = 20 + rng.next() % 400;
        for op in 0..ops {
            let b = rng.next() % blocks;
            version += 1;
            let data = content(b, version);
            pending[b as usize].push(version);
            if op + 1 == ops && rng.next().is_multiple_of(2) {
                // Kill with this write in flight.
                c.send(1, b * BLOCK as u64, BLOCK as u32, &data);
                break;
            }
            c.write(b * BLOCK as u64, &data);
            if rng.next().is_multiple_of(16) {
                c.flush();
                for (d, p) in durable.iter_mut().zip(pending.iter_mut()) {
                    if let Some(&last) = p.last() {
                        *d = last;
                        p.clear();
                    }
                }
            }
        }
        child.kill().unwrap();
        child.wait().unwrap();
    }
    eprintln!(
        "{name} recovery: {cycles} kill -9 cycles: {lost} lost flushed writes, {inconsistent} \
         inconsistent blocks"
    );
    assert_eq!((lost, inconsistent), (0, 0));
}
