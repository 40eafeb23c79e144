//! Targets a benchmark or probe talks to: one request at a time, each returning its response
//! time in nanoseconds.

use std::path::{Path, PathBuf};
use std::time::Instant;

use nandlab_core::{Device, Dispatched, Request, Submission, Wait};

/// A device under test.
pub trait Target {
    /// What it is, for reports (`sim:…`, the URI, the path).
    fn describe(&self) -> String;
    /// Bytes it exports.
    fn capacity_bytes(&self) -> u64;
    /// Writes `len` bytes at `offset` (a payload of the request's size; its content is a
    /// pattern); returns the response time.
    fn write(&mut self, offset: u64, len: u64) -> Result<u64, String>;
    /// Reads `len` bytes at `offset`; returns the response time.
    fn read(&mut self, offset: u64, len: u64) -> Result<u64, String>;
    /// Makes writes durable (FLUSH); returns the response time.
    fn flush(&mut self) -> Result<u64, String>;
    /// Whether response times are simulated (deterministic) rather than measured.
    fn simulated(&self) -> bool;
    /// The resolved config of a simulated target (what reproduces its results).
    fn config(&self) -> Option<serde_json::Value> {
        None
    }
    /// The configured geometry of a simulated target (what its probes should find).
    fn truth(&self) -> Option<Geometry> {
        None
    }
    /// How many requests `read_queue` can keep in flight at once (1: it cannot queue).
    fn max_queue_depth(&self) -> usize {
        1
    }
    /// Reads every `(offset, len)` of `reqs` in order, keeping `depth` of them in flight (a
    /// closed loop: each completion issues the next); returns the time from the first issue to
    /// the last completion. Targets that cannot queue read one at a time.
    fn read_queue(&mut self, reqs: &[(u64, u64)], depth: usize) -> Result<u64, String> {
        let _ = depth;
        let mut total = 0;
        for &(o, l) in reqs {
            total += self.read(o, l)?;
        }
        Ok(total)
    }
    /// Writes every `(offset, len)` of `reqs` in order, keeping `depth` of them in flight (a
    /// closed loop, as `read_queue`); returns the time from the first issue to the last
    /// completion. Targets that cannot queue write one at a time.
    fn write_queue(&mut self, reqs: &[(u64, u64)], depth: usize) -> Result<u64, String> {
        let _ = depth;
        let mut total = 0;
        for &(o, l) in reqs {
            total += self.write(o, l)?;
        }
        Ok(total)
    }
}

/// A target as named on the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TargetSpec {
    /// `sim:` or `sim:CONFIG.toml`, with `--set` overrides.
    Sim { config: Option<PathBuf>, overrides: Vec<String> },
    /// `nbd://HOST[:PORT][/EXPORT]`.
    NbdTcp { host: String, port: u16, export: String },
    /// `nbd+unix:///[EXPORT]?socket=PATH`.
    NbdUnix { socket: PathBuf, export: String },
    /// A block device (or file) path.
    Path(PathBuf),
}

impl TargetSpec {
    /// Parses `TARGET` (`overrides` apply to `sim:` only; elsewhere they are an error).
    pub fn parse(target: &str, overrides: &[String]) -> Result<Self, String> {
        let no_overrides = |what: &str| {
            if overrides.is_empty() {
                Ok(())
            } else {
                Err(format!("--set configures the simulator (sim:), not {what}"))
            }
        };
        if let Some(rest) = target.strip_prefix("sim:") {
            let config = (!rest.is_empty()).then(|| PathBuf::from(rest));
            return Ok(Self::Sim { config, overrides: overrides.to_vec() });
        }
        if let Some(rest) = target.strip_prefix("nbd+unix://") {
            no_overrides(target)?;
            let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
            let export = path.trim_start_matches('/').to_string();
            let socket = query
                .split('&')
                .find_map(|kv| kv.strip_prefix("socket="))
                .ok_or_else(|| format!("{target}: an nbd+unix URI needs ?socket=PATH"))?;
            return Ok(Self::NbdUnix { socket: PathBuf::from(socket), export });
        }
        if let Some(rest) = target.strip_prefix("nbd://") {
            no_overrides(target)?;
            let (authority, export) = rest.split_once('/').unwrap_or((rest, ""));
            let (host, port) = match authority.rsplit_once(':') {
                Some((h, p)) => {
                    (h.to_string(), p.parse().map_err(|_| format!("{target}: bad port {p:?}"))?)
                }
                None => (authority.to_string(), 10809),
            };
            if host.is_empty() {
                return Err(format!("{target}: no host"));
            }
            return Ok(Self::NbdTcp { host, port, export: export.to_string() });
        }
        if target.contains("://") {
            return Err(format!(
                "{target}: unknown target; expected sim:[CONFIG.toml], nbd://HOST[:PORT], \
                 nbd+unix:///?socket=PATH or a block device path"
            ));
        }
        no_overrides(target)?;
        Ok(Self::Path(PathBuf::from(target)))
    }
}

/// The simulator as a target: requests issued back to back (each arrives when the previous
/// completes), response = simulated completion − arrival.
pub struct SimTarget {
    device: Device,
    now_ns: u64,
    describe: String,
    config: serde_json::Value,
    truth: Geometry,
}

/// The geometry a simulated device was configured with (what the probes should find).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Geometry {
    /// Flash page × channels per gang.
    pub effective_page_bytes: u64,
    /// Pages per block × the effective page.
    pub block_bytes: u64,
    /// `ftl.mapping_zone_bytes` (`None`: the whole table resident).
    pub zone_bytes: Option<u64>,
    /// Dies (each serves one operation at a time).
    pub dies: u32,
    pub gangs: u32,
}

impl SimTarget {
    /// A simulated device from a config file and overrides; `prefill` writes every logical
    /// page once first (the state `nandlab run` measures from), not timed.
    pub fn new(config: Option<&Path>, overrides: &[String], prefill: bool) -> Result<Self, String> {
        let config = nandlab_run::load_config(config, overrides).map_err(|e| e.to_string())?;
        let resolved = config.resolve().map_err(|e| e.to_string())?;
        let mut device = Device::new(&resolved, None).map_err(|e| e.to_string())?;
        let capacity = resolved.geometry.logical_bytes();
        let mut now_ns = 0;
        if prefill {
            let chunk = 1 << 20;
            let mut off = 0;
            while off < capacity {
                let len = chunk.min(capacity - off);
                let c = device
                    .dispatch(Submission::new(&Request::write(off, len).at(now_ns)))
                    .map(Dispatched::completion)
                    .map_err(|e| e.to_string())?;
                now_ns = c.complete_ns;
                off += len;
            }
            device.drain();
            now_ns = now_ns.max(device.now_ns());
            device.start_measurement();
        }
        let describe = format!("sim: {} ({} logical bytes)", resolved.config.ftl.kind, capacity);
        let config = serde_json::to_value(&resolved.config).map_err(|e| e.to_string())?;
        let g = &resolved.geometry;
        let truth = Geometry {
            effective_page_bytes: g.page_size_bytes,
            block_bytes: g.page_size_bytes * u64::from(g.pages_per_block),
            zone_bytes: resolved.config.ftl.mapping_zone_bytes,
            dies: resolved.hardware.dies(),
            gangs: resolved.hardware.gangs,
        };
        Ok(Self { device, now_ns, describe, config, truth })
    }

    /// The geometry it was configured with.
    #[must_use]
    pub fn truth(&self) -> Geometry {
        self.truth
    }

    /// The simulated device (metrics after a replay).
    #[must_use]
    pub fn device(&self) -> &Device {
        &self.device
    }

    fn submit(&mut self, req: Request) -> Result<u64, String> {
        let c = self
            .device
            .dispatch(Submission::new(&req.at(self.now_ns)))
            .map(Dispatched::completion)
            .map_err(|e| e.to_string())?;
        self.now_ns = c.complete_ns;
        Ok(c.complete_ns - c.arrival_ns)
    }
}

impl Target for SimTarget {
    fn describe(&self) -> String {
        self.describe.clone()
    }
    fn capacity_bytes(&self) -> u64 {
        self.device.geometry().logical_bytes()
    }
    fn write(&mut self, offset: u64, len: u64) -> Result<u64, String> {
        self.submit(Request::write(offset, len))
    }
    fn read(&mut self, offset: u64, len: u64) -> Result<u64, String> {
        self.submit(Request::read(offset, len))
    }
    fn flush(&mut self) -> Result<u64, String> {
        self.submit(Request::flush())
    }
    fn simulated(&self) -> bool {
        true
    }
    fn config(&self) -> Option<serde_json::Value> {
        Some(self.config.clone())
    }
    fn max_queue_depth(&self) -> usize {
        1 << 16
    }
    fn truth(&self) -> Option<Geometry> {
        Some(self.truth)
    }
    fn read_queue(&mut self, reqs: &[(u64, u64)], depth: usize) -> Result<u64, String> {
        self.queue(reqs, depth, Request::read)
    }
    fn write_queue(&mut self, reqs: &[(u64, u64)], depth: usize) -> Result<u64, String> {
        self.queue(reqs, depth, Request::write)
    }
}

impl SimTarget {
    /// `read_queue` and `write_queue`: `make` builds each request.
    fn queue(
        &mut self,
        reqs: &[(u64, u64)],
        depth: usize,
        make: fn(u64, u64) -> Request,
    ) -> Result<u64, String> {
        let start = self.now_ns;
        let (mut at, mut end) = (start, start);
        // The device counts what is in flight (a dispatch at time t takes the completions due
        // by then itself).
        for &(o, l) in reqs {
            while self.device.in_flight() >= depth.max(1) {
                let done = self.device.wait_one().ok_or("a dispatched request never completed")?;
                // The next request is issued when this one completes.
                at = at.max(done);
                end = end.max(done);
            }
            let d = self
                .device
                .dispatch(Submission::new(&make(o, l).at(at)).wait(Wait::InFlight))
                .map_err(|e| e.to_string())?;
            if let nandlab_core::Dispatched::Timed(c) = d {
                end = end.max(c.complete_ns);
            }
        }
        while let Some(done) = self.device.wait_one() {
            end = end.max(done);
        }
        self.now_ns = end;
        Ok(end - start)
    }
}

/// A block device or file, opened for direct I/O where the system allows it.
pub struct PathTarget {
    file: std::fs::File,
    path: PathBuf,
    capacity: u64,
    buf: Vec<u8>,
}

/// Linux's `O_DIRECT` (x86-64 and aarch64 values; other systems open without it).
#[cfg(all(target_os = "linux", any(target_arch = "x86_64", target_arch = "x86")))]
const O_DIRECT: i32 = 0o40000;
#[cfg(all(target_os = "linux", target_arch = "aarch64"))]
const O_DIRECT: i32 = 0o200000;
#[cfg(not(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "x86", target_arch = "aarch64")
)))]
const O_DIRECT: i32 = 0;

/// Linux's `O_EXCL` on a block device: the open fails with `EBUSY` while the kernel has the
/// device in use (mounted, a RAID or device-mapper member, another exclusive opener).
const O_EXCL: i32 = 0o200;

impl PathTarget {
    /// Opens `path` for writing. Refused: a mounted device, or one the kernel has in use; a
    /// device or file another process holds locked (`flock`, as `nandlab serve` holds its
    /// image), naming that process, even with `destroy_data`; and without `destroy_data`, a block
    /// device or a file holding data (its content is overwritten). The lock is held while the
    /// target is open, so no server can open the file under the test either.
    pub fn open(path: &Path, destroy_data: bool) -> Result<Self, String> {
        use std::io::Seek;
        use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
        let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let block = meta.file_type().is_block_device();
        if block {
            if let Some(m) = mounted(path) {
                return Err(format!(
                    "{} is mounted ({m}): refusing to write to it",
                    path.display()
                ));
            }
        } else if !meta.is_file() {
            return Err(format!("{}: not a block device or file", path.display()));
        }
        let flags = if block { O_DIRECT | O_EXCL } else { 0 };
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(flags)
            .open(path)
            .map_err(|e| match e.raw_os_error() {
                Some(16) => format!(
                    "{}: the device is in use (mounted, part of another device, or opened \
                     exclusively): refusing to write to it",
                    path.display()
                ),
                _ => format!("{}: {e}", path.display()),
            })?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(format!(
                    "{} is in use by {}: refusing to write to it (--destroy-data does not \
                     override this; stop that process first)",
                    path.display(),
                    lock_holder(&meta).unwrap_or_else(|| "another process".into())
                ));
            }
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(format!("{}: cannot lock it: {e}", path.display()));
            }
        }
        // A regular file with no allocated block (new, or all holes) reads as zeros: nothing
        // to lose.
        let holds_data = block || (meta.len() > 0 && meta.blocks() > 0);
        if holds_data && !destroy_data {
            let what = if block { "a block device" } else { "a file holding data" };
            return Err(format!(
                "{} is {what} ({} bytes): the test overwrites its data; pass --destroy-data if \
                 that is what you want",
                path.display(),
                meta.len()
            ));
        }
        let capacity =
            file.seek(std::io::SeekFrom::End(0)).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(Self { file, path: path.to_path_buf(), capacity, buf: Vec::new() })
    }

    /// A 4 KiB-aligned buffer of `len` bytes inside `self.buf` (direct I/O needs it aligned;
    /// found by offset, no unsafe code).
    fn aligned(&mut self, len: usize) -> (usize, usize) {
        if self.buf.len() < len + 4096 {
            self.buf = vec![0x5a; len + 4096];
        }
        let start = self.buf.as_ptr() as usize;
        let skip = start.next_multiple_of(4096) - start;
        (skip, skip + len)
    }
}

/// Who holds a lock on the file `meta` describes: "process PID (its command line)", from
/// /proc/locks (`ID: KIND ADVISORY MODE PID MAJ:MIN:INODE START END`, device numbers in hex).
fn lock_holder(meta: &std::fs::Metadata) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let dev = meta.dev();
    // Linux's dev_t split (glibc's gnu_dev_major / gnu_dev_minor).
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    let id = format!("{major:02x}:{minor:02x}:{}", meta.ino());
    let locks = std::fs::read_to_string("/proc/locks").ok()?;
    let pid = locks.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        // Blocked waiters are listed as "ID: -> KIND ...": skip them.
        (f.len() >= 6 && f[1] != "->" && f[5] == id).then(|| f[4].to_string())
    })?;
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let words: Vec<String> = cmdline
        .split(|&b| b == 0)
        .filter(|w| !w.is_empty())
        .take(6)
        .map(|w| String::from_utf8_lossy(w).into_owned())
        .collect();
    Some(if words.is_empty() {
        format!("process {pid}")
    } else {
        format!("process {pid} ({})", words.join(" "))
    })
}

/// The mount point of `dev` (or of a partition of it), from /proc/mounts.
fn mounted(dev: &Path) -> Option<String> {
    let mounts = std::fs::read_to_string("/proc/mounts").ok()?;
    let canonical = std::fs::canonicalize(dev).unwrap_or_else(|_| dev.to_path_buf());
    let name = canonical.to_string_lossy().into_owned();
    mounts.lines().find_map(|l| {
        let mut f = l.split_whitespace();
        let (src, at) = (f.next()?, f.next()?);
        let src = std::fs::canonicalize(src)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or(src.into());
        src.starts_with(&name).then(|| format!("{src} on {at}"))
    })
}

impl Target for PathTarget {
    fn describe(&self) -> String {
        self.path.display().to_string()
    }
    fn capacity_bytes(&self) -> u64 {
        self.capacity
    }
    fn write(&mut self, offset: u64, len: u64) -> Result<u64, String> {
        use std::os::unix::fs::FileExt;
        let (a, b) = self.aligned(len as usize);
        let t = Instant::now();
        self.file
            .write_all_at(&self.buf[a..b], offset)
            .map_err(|e| format!("{}: write at {offset}: {e}", self.path.display()))?;
        Ok(t.elapsed().as_nanos() as u64)
    }
    fn read(&mut self, offset: u64, len: u64) -> Result<u64, String> {
        use std::os::unix::fs::FileExt;
        let (a, b) = self.aligned(len as usize);
        let t = Instant::now();
        self.file
            .read_exact_at(&mut self.buf[a..b], offset)
            .map_err(|e| format!("{}: read at {offset}: {e}", self.path.display()))?;
        Ok(t.elapsed().as_nanos() as u64)
    }
    fn flush(&mut self) -> Result<u64, String> {
        let t = Instant::now();
        self.file.sync_data().map_err(|e| format!("{}: sync: {e}", self.path.display()))?;
        Ok(t.elapsed().as_nanos() as u64)
    }
    fn simulated(&self) -> bool {
        false
    }
}
