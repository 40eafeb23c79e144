//! `nandlab serve` (the virtual-platform report's on-line platform, docs/PAPERS.md;
//! docs/ALGORITHMS.md §7): the simulated SSD of a configuration, backed by a persistent NAND image
//! (`nandlab-store`), served as a block device over NBD (`nandlab-nbd`). Each request is simulated
//! at its wall-clock arrival time; with `serve.emulate_latency` its reply is released at arrival +
//! simulated latency.
//!
//! The engine is the only owner of the device: the NBD server calls it from one thread, in
//! arrival order, so the simulation stays a deterministic function of the request sequence and
//! its timing.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nandlab_core::{
    Config, ConfigError, Device, Dispatched, Io, Request, RequestError, RequestKind, Resolved,
    Submission,
};
use nandlab_core::{LatencyHistogram, LatencySummary};
use nandlab_nbd::{CommandKind, Engine, Errno, ExportInfo, IoOutcome, IoRequest};
use nandlab_store::{Classifier, FileMedia, StoreError};
use serde::Serialize;
use std::sync::{Arc, Mutex};

pub use nandlab_nbd::{
    BoundAddress, Listen, ServeOptions, ServeReport, ShutdownHandle, DEFAULT_PORT,
};

/// Why the server could not start.
#[derive(Debug)]
#[non_exhaustive]
pub enum ServeError {
    Config(ConfigError),
    Store(StoreError),
    /// The image could not be recovered (damage, or a different layout).
    Recovery(nandlab_core::RecoveryError),
    Io(std::io::Error),
}

impl std::fmt::Display for ServeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Config(e) => write!(f, "{e}"),
            Self::Store(e) => write!(f, "{e}"),
            Self::Recovery(e) => write!(f, "{e}"),
            Self::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ServeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Config(e) => Some(e),
            Self::Store(e) => Some(e),
            Self::Recovery(e) => Some(e),
            Self::Io(e) => Some(e),
        }
    }
}

/// The NBD error a failed request is answered with. Media failures go by their I/O error kind,
/// not their message: a full backing store (the image's file system) is ENOSPC, so the client
/// sees "no space" as it would from a local disk; every other media failure — an I/O error on
/// the image, data failing its CRC — is EIO. A worn-out flash is a medium failure too (EIO, as
/// a real SSD reports it); a request the device cannot accept is EINVAL.
fn errno_of(e: &RequestError) -> Errno {
    match e {
        RequestError::Media(m) if m.kind() == std::io::ErrorKind::StorageFull => Errno::NoSpc,
        RequestError::Media(_) | RequestError::WornOut { .. } => Errno::Io,
        _ => Errno::Inval,
    }
}

impl From<ConfigError> for ServeError {
    fn from(e: ConfigError) -> Self {
        Self::Config(e)
    }
}

impl From<nandlab_core::RecoveryError> for ServeError {
    fn from(e: nandlab_core::RecoveryError) -> Self {
        Self::Recovery(e)
    }
}

impl From<StoreError> for ServeError {
    fn from(e: StoreError) -> Self {
        Self::Store(e)
    }
}

fn lock(c: &Mutex<Classifier>) -> std::sync::MutexGuard<'_, Classifier> {
    c.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Resident set size of this process (Linux `/proc/self/statm`), 0 where unavailable.
fn rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4096)
}

/// After a restart in metadata-only mode, the rule set re-learns the file system from the
/// pages at the start of the disk (superblock, group descriptors). The reads are not part of
/// the served workload: the measurement window restarts afterwards.
fn relearn(device: &mut Device, classifier: &Mutex<Classifier>, page: u64, logical_pages: u64) {
    let pages = logical_pages.min(nandlab_store::metadata::STASH_PAGES);
    let mut buf = vec![0u8; page as usize];
    for lpn in 0..pages {
        let req = Request::read(lpn * page, page);
        if device
            .dispatch(Submission::new(&req).io(Io::Read(&mut buf)))
            .map(Dispatched::completion)
            .is_ok()
            && buf.iter().any(|&b| b != 0)
        {
            lock(classifier).learn(lpn, &buf);
        }
    }
    device.start_measurement();
}

/// Largest request the export accepts (NBD_INFO_BLOCK_SIZE maximum).
const MAX_REQUEST_BYTES: u32 = 32 << 20;

/// Resolves a serve configuration. With no device size in the config and an existing image,
/// the device takes the image's geometry, so `nandlab serve --image old.img` just works.
pub fn resolve(config: &Config, image: &Path) -> Result<Resolved, ServeError> {
    let mut c = config.clone();
    let sized = c.device.blocks.is_some() || c.device.logical_bytes.is_some();
    if !sized && image.exists() {
        let g = nandlab_store::read_image_info(image)?;
        c.device.page_size_bytes = Some(g.page_size_bytes);
        c.device.pages_per_block = Some(g.pages_per_block);
        c.device.blocks = Some(g.blocks);
        c.device.logical_bytes = Some(g.logical_pages * g.page_size_bytes);
        c.device.utilization = None;
    }
    let mut r = c.resolve()?;
    r.served = true;
    if !r.config.run.timing.is_on() {
        // A served drive's replies carry the simulated latency (or none, with --latency off):
        // the clock is part of what it serves.
        return Err(nandlab_core::ConfigError::new(
            "run.timing",
            "\"off\" (counts only) is for `nandlab run` and sweeps; a served drive keeps the \
             simulated clock (serve.emulate_latency = false replies at once): use run.timing = \"on\"",
        )
        .into());
    }
    // Before any image is created: a device whose tables do not fit is refused now, not after
    // leaving a huge sparse image behind.
    nandlab_run::memory::check(&r, true)?;
    if let Some(p) = r.placement().filter(|p| p.needs_future()) {
        return Err(nandlab_core::ConfigError::new(
            "ftl.placement",
            format!(
                "the {} placement cannot be served: it places each page by when it will next \
                 be written, which a live drive cannot know (it exists to bound what placement \
                 can gain in `nandlab run`); serve none, dac or deb",
                p.name()
            ),
        )
        .into());
    }
    if let nandlab_core::FtlSpec::Hybrid(h) = &r.ftl {
        // A crash can leave one block beyond the FTL's steady state in use (a merge or a
        // migration under way); recovery finishes it with a merge that needs one free block.
        let g = &r.geometry;
        let logical_blocks = g.logical_pages.div_ceil(u64::from(g.pages_per_block));
        let logs = u64::from(h.log_blocks);
        let needed = logical_blocks + logs + 2;
        if u64::from(g.blocks) < needed {
            return Err(nandlab_core::ConfigError::new(
                "ftl.log_blocks",
                format!(
                    "a served {} drive needs {needed} blocks ({logical_blocks} logical + {logs} \
                     log blocks + 2 spare, one for recovery to finish an interrupted merge) but \
                     has {}; lower ftl.log_blocks or device.utilization, or add blocks",
                    r.config.ftl.kind, g.blocks
                ),
            )
            .into());
        }
    }
    Ok(r)
}

/// Latency emulation accuracy, as recorded while serving.
#[derive(Clone, Debug, Default, Serialize)]
pub struct LatencyAccuracy {
    /// Requests whose reply time was measured.
    pub requests: u64,
    /// Simulated latency of those requests, ns.
    pub simulated_ns: LatencySummary,
    /// Achieved latency (request received → reply written), ns.
    pub achieved_ns: LatencySummary,
    /// |achieved − simulated|, ns.
    pub abs_error_ns: LatencySummary,
    /// |achieved − simulated| ÷ simulated, in units of 0.01 % (basis points), over requests
    /// with simulated latency ≥ 200 µs.
    pub relative_error_bp_ge_200us: LatencySummary,
    /// The learnt reply overhead subtracted from release instants, ns.
    pub calibrated_overhead_ns: u64,
}

/// The `serve` section of the stats file.
#[derive(Clone, Debug, Serialize)]
pub struct ServeStats {
    pub image: PathBuf,
    pub image_bytes: u64,
    pub recovered: bool,
    pub recovery: String,
    pub mount_seconds: f64,
    /// The mount used a checkpoint (otherwise every OOB record was scanned).
    pub mounted_from_checkpoint: bool,
    /// Erase blocks whose OOB records the mount read.
    pub mount_blocks_scanned: u64,
    pub checkpoints_written: u64,
    /// What the mount found and repaired in the image's metadata (mirrored copies used, torn
    /// writes, rejected checkpoints, NVRAM pages).
    pub mount_repairs: nandlab_store::MountReport,
    /// What the FTL's recovery completed or repaired (sealed blocks, repair merges, erased
    /// blocks, RAM-region pages restored from NVRAM or lost to a failed battery).
    pub ftl_recovery: nandlab_core::FtlRecovery,
    pub store: String,
    /// Metadata-only store: written pages kept / dropped by the rule set.
    pub metadata_pages_kept: u64,
    pub data_pages_dropped: u64,
    /// Bytes the sparse image occupies on disk.
    pub image_allocated_bytes: u64,
    /// The server process's resident memory.
    pub rss_bytes: u64,
    pub emulate_latency: bool,
    pub uptime_seconds: f64,
    pub requests: u64,
    pub errors: u64,
    pub latency: LatencyAccuracy,
}

#[derive(Serialize)]
struct StatsFile<'a> {
    metrics: nandlab_core::Metrics,
    config: &'a Config,
    seed: u64,
    version: &'static str,
    serve: ServeStats,
}

/// The simulator behind the NBD server.
pub struct SimEngine {
    device: Device,
    resolved: Resolved,
    image: PathBuf,
    image_bytes: u64,
    recovered: bool,
    mount_seconds: f64,
    start: Instant,
    /// Simulated time at `start` (after any start-up reads), so arrivals continue from it.
    time_base_ns: u64,
    last_arrival_ns: u64,
    requests: u64,
    errors: u64,
    simulated: LatencyHistogram,
    achieved: LatencyHistogram,
    abs_error: LatencyHistogram,
    relative_error_bp: LatencyHistogram,
    stats_path: Option<PathBuf>,
    stats_written: Instant,
    mount: nandlab_store::MountReport,
    classifier: Option<Arc<Mutex<Classifier>>>,
    image_file: Option<std::fs::File>,
    checkpoints_written: u64,
    checkpoint_written: Instant,
    /// The platform's own reply overhead (socket write, wake-up), learnt from achieved
    /// latencies and subtracted from each release instant so that achieved ≈ simulated (the
    /// virtual platform "calibrates its own overhead out").
    overhead_ns: u64,
    /// Simulated latency of each request in flight, by its receive instant.
    in_flight: std::collections::HashMap<Instant, u64>,
}

/// Largest correction of the overhead estimate per completion: the estimate tracks the median
/// lateness without being thrown by one slow reply.
const OVERHEAD_STEP_MAX_NS: i64 = 2_000;

impl SimEngine {
    /// Opens (and recovers) or creates the image and builds the device.
    pub fn open(
        resolved: Resolved,
        image: &Path,
        stats_path: Option<PathBuf>,
    ) -> Result<Self, ServeError> {
        let started = Instant::now();
        let exists = std::fs::metadata(image).map(|m| m.len() > 0).unwrap_or(false);
        let g = resolved.geometry;
        let classifier = (resolved.config.serve.store == "metadata-only")
            .then(|| Arc::new(Mutex::new(Classifier::new(g.page_size_bytes, g.logical_pages))));
        let (mut device, image_bytes, mount) = if exists {
            let how = if resolved.config.serve.recovery == "checkpoint" {
                nandlab_store::Mount::Checkpoint
            } else {
                nandlab_store::Mount::Scan
            };
            let (mut media, mount) = FileMedia::open(image, &resolved, how)?;
            if let Some(c) = &classifier {
                media.set_metadata_only(Arc::clone(c));
            }
            let bytes = media.image_bytes();
            (Device::recover(&resolved, Box::new(media), 0)?, bytes, mount)
        } else {
            let mut media = FileMedia::create(image, &resolved)?;
            if let Some(c) = &classifier {
                media.set_metadata_only(Arc::clone(c));
            }
            let bytes = media.image_bytes();
            let device = Device::with_media(&resolved, Box::new(media), None)?;
            (device, bytes, nandlab_store::MountReport::default())
        };
        if let (Some(c), true) = (&classifier, exists) {
            relearn(&mut device, c, g.page_size_bytes, g.logical_pages);
        }
        // Requests arrive as the clients send them: the engine never runs ahead of them, and a
        // request whose operations wait in a die queue gets its completion predicted (replies
        // go out in the order the device finishes them).
        device.set_real_time(true);
        let now = Instant::now();
        let time_base_ns = device.now_ns();
        let mut engine = Self {
            device,
            resolved,
            image: image.to_path_buf(),
            image_bytes,
            recovered: exists,
            mount_seconds: (now - started).as_secs_f64(),
            start: now,
            time_base_ns,
            last_arrival_ns: time_base_ns,
            requests: 0,
            errors: 0,
            simulated: LatencyHistogram::default(),
            achieved: LatencyHistogram::default(),
            abs_error: LatencyHistogram::default(),
            relative_error_bp: LatencyHistogram::default(),
            stats_path,
            stats_written: now,
            mount,
            classifier,
            image_file: std::fs::File::open(image).ok(),
            checkpoints_written: 0,
            checkpoint_written: now,
            overhead_ns: 0,
            in_flight: std::collections::HashMap::new(),
        };
        // A checkpoint at once: the recovered FTL allocates free blocks in a new order, and the
        // roll-forward of the next mount relies on the checkpoint's order.
        if engine.resolved.config.serve.recovery == "checkpoint" {
            let _ = engine.write_checkpoint();
        }
        Ok(engine)
    }

    #[must_use]
    pub fn mount_seconds(&self) -> f64 {
        self.mount_seconds
    }

    #[must_use]
    pub fn recovered(&self) -> bool {
        self.recovered
    }

    /// What the start-up repaired or completed, in words (`None`: nothing, a clean image).
    #[must_use]
    pub fn repairs_summary(&self) -> Option<String> {
        let m = &self.mount;
        let f = self.device.recovery();
        let items = [
            (u64::from(m.superblock_repaired), "superblock copy repaired"),
            (m.block_headers_repaired, "block header(s) repaired"),
            (m.block_headers_lost, "block header(s) lost (erase count estimated)"),
            (m.oob_records_repaired, "OOB record(s) repaired from their mirror"),
            (m.torn_pages, "torn page(s) of an interrupted write ignored"),
            (m.erases_completed, "interrupted erase(s) completed"),
            (m.checkpoints_rejected, "checkpoint slot(s) rejected"),
            (m.nvram_cells_repaired, "NVRAM header(s) repaired"),
            (m.nvram_pages_damaged, "NVRAM page(s) damaged: their LPNs read as errors"),
            (m.copies_rewritten, "damaged metadata copies rewritten from their mirror"),
            (u64::from(f.erased_blocks), "block(s) of an interrupted release erased"),
            (u64::from(f.sealed_blocks), "partly programmed block(s) sealed"),
            (u64::from(f.repair_merges), "interrupted merge(s) completed"),
            (u64::from(f.nvram_pages_restored), "RAM-region page(s) restored from NVRAM"),
            (u64::from(f.nvram_pages_lost), "RAM-region page(s) lost to the failed battery"),
        ];
        let said: Vec<String> =
            items.iter().filter(|(n, _)| *n > 0).map(|(n, what)| format!("{n} {what}")).collect();
        (!said.is_empty()).then(|| said.join(", "))
    }

    /// How the image was mounted.
    #[must_use]
    pub fn mount_report(&self) -> nandlab_store::MountReport {
        self.mount
    }

    /// Writes a checkpoint when the recovery mode uses them; false if that failed.
    fn write_checkpoint(&mut self) -> bool {
        if self.resolved.config.serve.recovery != "checkpoint" {
            return true;
        }
        let ok = match self.device.checkpoint() {
            Ok(()) => {
                self.checkpoints_written += 1;
                true
            }
            Err(_) => {
                self.errors += 1;
                false
            }
        };
        self.checkpoint_written = Instant::now();
        ok
    }

    /// Everything the stats file holds, as JSON.
    #[must_use]
    pub fn stats_json(&self) -> String {
        let c = &self.resolved.config;
        let file = StatsFile {
            metrics: self.device.metrics(),
            config: c,
            seed: c.run.seed,
            version: nandlab_version::VERSION_STRING,
            serve: ServeStats {
                image: self.image.clone(),
                image_bytes: self.image_bytes,
                recovered: self.recovered,
                recovery: c.serve.recovery.clone(),
                mount_seconds: self.mount_seconds,
                mounted_from_checkpoint: self.mount.from_checkpoint,
                mount_blocks_scanned: self.mount.blocks_scanned,
                checkpoints_written: self.checkpoints_written,
                mount_repairs: self.mount,
                ftl_recovery: self.device.recovery(),
                store: c.serve.store.clone(),
                metadata_pages_kept: self.classifier.as_ref().map_or(0, |k| lock(k).kept_pages),
                data_pages_dropped: self.classifier.as_ref().map_or(0, |k| lock(k).dropped_pages),
                image_allocated_bytes: self.image_file.as_ref().map_or(0, |f| {
                    use std::os::unix::fs::MetadataExt;
                    f.metadata().map(|m| m.blocks() * 512).unwrap_or(0)
                }),
                rss_bytes: rss_bytes(),
                emulate_latency: c.serve.emulate_latency,
                uptime_seconds: self.start.elapsed().as_secs_f64(),
                requests: self.requests,
                errors: self.errors,
                latency: LatencyAccuracy {
                    requests: self.achieved.count(),
                    simulated_ns: self.simulated.summary(),
                    achieved_ns: self.achieved.summary(),
                    abs_error_ns: self.abs_error.summary(),
                    relative_error_bp_ge_200us: self.relative_error_bp.summary(),
                    calibrated_overhead_ns: self.overhead_ns,
                },
            },
        };
        serde_json::to_string_pretty(&file).expect("stats always serialize")
    }

    fn write_stats(&mut self) {
        let Some(path) = &self.stats_path else { return };
        // Write a sibling file and rename it over the target: readers never see half a file.
        let tmp = path.with_extension("json.tmp");
        let json = self.stats_json();
        if std::fs::write(&tmp, json + "\n").and_then(|()| std::fs::rename(&tmp, path)).is_err() {
            self.errors += 1;
        }
        self.stats_written = Instant::now();
    }

    fn arrival_ns(&mut self, received: Instant) -> u64 {
        let ns =
            self.time_base_ns + received.saturating_duration_since(self.start).as_nanos() as u64;
        // Requests from different connections reach the engine in channel order, which can
        // differ from their receive stamps by a few microseconds; simulated time must not go
        // backwards.
        self.last_arrival_ns = self.last_arrival_ns.max(ns);
        self.last_arrival_ns
    }

    fn run(&mut self, req: &IoRequest) -> Result<(u64, Vec<u8>), RequestError> {
        let arrival = self.arrival_ns(req.received);
        let off = req.offset_bytes;
        let len = u64::from(req.length_bytes);
        let mut out = Vec::new();
        let completion = match req.kind {
            CommandKind::Read => {
                out = vec![0u8; len as usize];
                self.device
                    .dispatch(
                        Submission::new(&Request::read(off, len).at(arrival))
                            .io(Io::Read(&mut out)),
                    )
                    .map(Dispatched::completion)?
            }
            CommandKind::Write => self
                .device
                .dispatch(
                    Submission::new(&Request::write(off, len).at(arrival)).io(Io::Write(&req.data)),
                )
                .map(Dispatched::completion)?,
            CommandKind::WriteZeroes => {
                // Zeroes are written, not trimmed: a trim leaves no record on flash, and the
                // zeroes must survive a restart. Requests may exceed the payload limit: they are
                // written in chunks that arrive together.
                let chunk = len.min(u64::from(MAX_REQUEST_BYTES));
                let zeros = vec![0u8; chunk as usize];
                let mut done = 0;
                let mut last = None;
                while done < len {
                    let n = chunk.min(len - done);
                    let req = Request::write(off + done, n).at(arrival);
                    last = Some(
                        self.device
                            .dispatch(Submission::new(&req).io(Io::Write(&zeros[..n as usize])))
                            .map(Dispatched::completion)?,
                    );
                    done += n;
                }
                last.expect("write-zeroes of length 0 never reaches the engine")
            }
            CommandKind::Trim => self
                .device
                .dispatch(Submission::new(&Request::trim(off, len).at(arrival)))
                .map(Dispatched::completion)?,
            CommandKind::Flush => {
                let flush = Request {
                    kind: RequestKind::Flush,
                    offset_bytes: 0,
                    length_bytes: 0,
                    arrival_ns: Some(arrival),
                };
                self.device.dispatch(Submission::new(&flush)).map(Dispatched::completion)?
            }
            CommandKind::Cache => return Ok((0, out)),
        };
        let mut complete_ns = completion.complete_ns;
        if req.fua {
            // The write is durable once its own operations and the write-back a sync does
            // (the buffer's dirty pages) have ended.
            let synced = self.device.sync_until().map_err(RequestError::Media)?;
            complete_ns = complete_ns.max(synced.unwrap_or(0));
        }
        Ok((complete_ns - completion.arrival_ns, out))
    }
}

impl Engine for SimEngine {
    fn export(&self) -> ExportInfo {
        let g = &self.resolved.geometry;
        let c = &self.resolved.config;
        ExportInfo {
            name: c.serve.export_name.clone(),
            description: format!(
                "{} simulated SSD: {} FTL, {} cleaning, {} placement; {} blocks x {} pages x \
                 {} B",
                nandlab_version::VERSION_STRING,
                c.ftl.kind,
                c.ftl.cleaning,
                c.ftl.placement,
                g.blocks,
                g.pages_per_block,
                g.page_size_bytes
            ),
            size_bytes: g.logical_bytes(),
            min_block_bytes: g.sector_size_bytes as u32,
            // NBD wants a power of two; the effective page need not be one (3 lock-stepped
            // channels of 8 KiB pages make 24 KiB). The largest power of two dividing it: a
            // client's aligned requests of that size never straddle a page.
            preferred_block_bytes: (1u64 << g.page_size_bytes.trailing_zeros())
                .max(g.sector_size_bytes)
                .max(512) as u32,
            max_block_bytes: MAX_REQUEST_BYTES,
            read_only: false,
        }
    }

    fn submit(&mut self, req: IoRequest) -> IoOutcome {
        self.requests += 1;
        match self.run(&req) {
            Ok((latency_ns, data)) => {
                let release_at = if self.resolved.config.serve.emulate_latency {
                    if self.in_flight.len() > 1 << 16 {
                        self.in_flight.clear(); // Replies lost with their connections.
                    }
                    self.in_flight.insert(req.received, latency_ns);
                    let delay = latency_ns.saturating_sub(self.overhead_ns);
                    req.received + Duration::from_nanos(delay)
                } else {
                    req.received
                };
                IoOutcome { error: None, data, release_at }
            }
            Err(e) => {
                self.errors += 1;
                IoOutcome::err(errno_of(&e), req.received)
            }
        }
    }

    fn completed(
        &mut self,
        _kind: CommandKind,
        received: Instant,
        replied: Instant,
        _release_at: Instant,
    ) {
        let achieved = replied.saturating_duration_since(received).as_nanos() as u64;
        self.achieved.record(achieved);
        if !self.resolved.config.serve.emulate_latency {
            return;
        }
        let Some(simulated) = self.in_flight.remove(&received) else { return };
        // Feedback on the overhead estimate: late replies raise it, early ones lower it. Only
        // replies that could be held (simulated latency above the overhead) say anything.
        if simulated > self.overhead_ns {
            let late = achieved as i64 - simulated as i64;
            let step = (late / 8).clamp(-OVERHEAD_STEP_MAX_NS, OVERHEAD_STEP_MAX_NS);
            self.overhead_ns = (self.overhead_ns as i64 + step).max(0) as u64;
        }
        self.simulated.record(simulated);
        let err = achieved.abs_diff(simulated);
        self.abs_error.record(err);
        if simulated >= 200_000 {
            self.relative_error_bp.record(err * 10_000 / simulated);
        }
    }

    fn tick(&mut self) {
        let s = &self.resolved.config.serve;
        let checkpoint_every = Duration::from_secs_f64(s.checkpoint_interval_s);
        let stats_every = Duration::from_secs_f64(s.stats_interval_s);
        if self.checkpoint_written.elapsed() >= checkpoint_every {
            let _ = self.write_checkpoint();
        }
        if self.stats_written.elapsed() >= stats_every {
            self.write_stats();
        }
    }

    fn shutdown(&mut self) {
        // The RAM region (DEB's EBR) is written back here, so the image is complete.
        let written_back = self.device.shutdown().is_ok();
        if !written_back {
            self.errors += 1;
        }
        let checkpointed = self.write_checkpoint();
        // Last, and only when every write of the stop reached the image: the record tells the
        // next start-up that no write was interrupted.
        if written_back && checkpointed && self.device.record_clean_stop().is_err() {
            self.errors += 1;
        }
        self.write_stats();
    }
}

/// Serves `engine` until SIGTERM/SIGINT or shutdown (blocks).
pub fn serve(engine: Box<SimEngine>, options: ServeOptions) -> std::io::Result<ServeReport> {
    nandlab_nbd::serve(engine, options)
}

/// Serves on a new thread (tests): the shutdown handle, the server thread and the bound address.
pub fn spawn(
    engine: Box<SimEngine>,
    options: ServeOptions,
) -> std::io::Result<(
    ShutdownHandle,
    std::thread::JoinHandle<std::io::Result<ServeReport>>,
    BoundAddress,
)> {
    nandlab_nbd::spawn(engine, options)
}

#[cfg(test)]
mod tests {
    use super::*;
    use nandlab_core::MediaError;
    use std::io::ErrorKind;

    #[test]
    fn media_errors_map_to_nbd_errors_by_kind() {
        let media = |kind| RequestError::Media(MediaError::new(kind, "image.img: page 3"));
        assert_eq!(errno_of(&media(ErrorKind::StorageFull)), Errno::NoSpc);
        for kind in [ErrorKind::Other, ErrorKind::PermissionDenied, ErrorKind::InvalidData] {
            assert_eq!(errno_of(&media(kind)), Errno::Io, "{kind:?}");
        }
        let io = std::io::Error::from_raw_os_error(5); // EIO from the kernel
        let eio = RequestError::Media(MediaError::io("image.img: page 3: data read", io));
        assert_eq!(errno_of(&eio), Errno::Io);
        let enospc = std::io::Error::from_raw_os_error(28);
        let full = RequestError::Media(MediaError::io("image.img: page 3: data write", enospc));
        assert_eq!(errno_of(&full), Errno::NoSpc);
        let worn = RequestError::WornOut { retired_blocks: 3, host_write_bytes: 1 };
        assert_eq!(errno_of(&worn), Errno::Io);
        let range =
            RequestError::OutOfRange { offset_bytes: 0, length_bytes: 1, capacity_bytes: 0 };
        assert_eq!(errno_of(&range), Errno::Inval);
    }

    /// Goal: a device whose effective page is not a power of two (three lock-stepped channels)
    /// is served: the preferred block size it advertises is a power of two dividing the page.
    #[test]
    fn a_page_that_is_not_a_power_of_two_is_served() {
        let dir = nandlab_testkit::Scratch::new("nandlab-pref");
        let image = dir.join("pref.img");
        let config = Config::from_overrides(&[
            "device.channels_per_gang=3",
            "device.page_size_bytes=8192",
            "device.blocks=96",
            "device.pages_per_block=16",
        ])
        .unwrap();
        let resolved = resolve(&config, &image).unwrap();
        let engine = SimEngine::open(resolved, &image, None).unwrap();
        let e = engine.export();
        assert_eq!((e.min_block_bytes, e.preferred_block_bytes), (512, 8192));
    }

    /// Goal: a served drive keeps its clock: `run.timing = "off"` is refused by name, before
    /// any image is created.
    #[test]
    fn counts_only_is_refused() {
        let image =
            std::env::temp_dir().join(format!("nandlab-untimed-{}.img", std::process::id()));
        let config = Config::from_overrides(&["device.blocks=64", "run.timing=off"]).unwrap();
        let e = resolve(&config, &image).unwrap_err().to_string();
        assert!(e.contains("run.timing") && e.contains("off"), "{e}");
        assert!(!image.exists());
    }

    /// Goal: the served drive releases each reply at its simulated completion, so a read
    /// arriving after a write on another die is answered first (out of order).
    /// Method: two gangs (two dies); pages 0 and 1 written together land on dies 0 and 1; later
    /// a rewrite of page 0 (a 200 µs program on die 0) and, 1 µs after it, a read of page 1
    /// (die 1, 35 µs): the read's release instant comes first.
    #[test]
    fn replies_leave_in_the_order_the_device_finishes() {
        let dir = nandlab_testkit::Scratch::new("nandlab-ooo");
        let image = dir.join("ooo.img");
        let config = Config::from_overrides(&[
            "device.gangs=2",
            "device.blocks=64",
            "device.pages_per_block=32",
            "device.utilization=0.5",
        ])
        .unwrap();
        let resolved = resolve(&config, &image).unwrap();
        let mut engine = SimEngine::open(resolved, &image, None).unwrap();
        let t0 = Instant::now();
        let page = 4096;
        let request = |kind, offset_bytes: u64, received| IoRequest {
            kind,
            offset_bytes,
            length_bytes: page,
            fua: false,
            data: if kind == CommandKind::Write { vec![7; page as usize] } else { Vec::new() },
            received,
        };
        for lpn in 0..2 {
            let out = engine.submit(request(CommandKind::Write, lpn * u64::from(page), t0));
            assert!(out.error.is_none());
        }
        let t1 = t0 + Duration::from_millis(10);
        let write = engine.submit(request(CommandKind::Write, 0, t1));
        let read = engine.submit(request(
            CommandKind::Read,
            u64::from(page),
            t1 + Duration::from_micros(1),
        ));
        assert!(write.error.is_none() && read.error.is_none());
        assert_eq!(read.data, vec![7; page as usize]);
        assert!(
            read.release_at < write.release_at,
            "the read (die 1) leaves before the write (die 0): {:?} vs {:?}",
            read.release_at - t1,
            write.release_at - t1
        );
        engine.shutdown();
    }
}
