//! Portable-media-player workloads on a FAT volume: `workload.kind = "media-player"`
//! (docs/ALGORITHMS.md §5, §10; FAB paper).
//!
//! # What this models
//!
//! The FAB paper (docs/PAPERS.md) evaluates its RAM buffer on traces of three portable media
//! players recorded on a FAT32 file system (Table I), on 512 MB to 2 GB of flash: a digital camera
//! (picture files of about 1 MB), an MP3 player (4–5 MB files) and a movie player (15–30 MB files).
//! Its §3 describes the pattern that matters to a buffer: "a long sequential access for media data
//! and several short accesses for metadata of the file". The traces are not public; this module
//! produces that pattern from the FAT volume model of `fat.rs`: files are written and played back
//! whole, and every write rewrites a few FAT, directory and FSInfo sectors.
//!
//! `workload.media` picks the player; it sets the defaults of the `[workload.fs]` keys
//! (`spec::MediaDefaults`; MB = 10^6 bytes, as media files and cards are quoted):
//!
//! | media | `file_bytes_min` ..= `file_bytes_max` | `read_bias` |
//! |---|---|---|
//! | `camera` (default) | 900,000 ..= 1,100,000 ("about 1 MB", ±10 %) | 0.1 |
//! | `mp3` | 4,000,000 ..= 5,000,000 | 0.3 |
//! | `movie` | 15,000,000 ..= 30,000,000 | 0.3 |
//!
//! Sizes are uniform in the range. The other keys default alike for every player:
//! `cluster_bytes` 4096 (so 512 MB–2 GB volumes have 131k–524k clusters: FAT32),
//! `directories` 1 (the player's folder — DCIM/100xxxxx, MUSIC, VIDEO — modelled as one
//! subdirectory of the root; new files go to a random one of them, 0 puts them in the root),
//! `record_bytes` 65536 (the application's write call: data written between FAT updates),
//! `fill_fraction` 0.9 (the volume's high-water mark) and `data_align_bytes` the cluster size.
//!
//! # Volume
//!
//! The layout of `fat.rs` laid out by `FatLayout::with_reserved` with 2 reserved sectors: boot
//! sector, FSInfo sector (sector 1), then padding to `data_align_bytes`, the two FATs, the fixed
//! 32-sector root directory and the clusters. The entry width follows the cluster count as in
//! `fat.rs`, so a volume under 65,525 clusters (e.g. 64 MiB with 4 KiB clusters) is FAT16 and
//! has no FSInfo sector: its FSInfo writes below do not happen. The root directory stays the
//! fixed FAT16-style area even on FAT32 (a FAT32 root is a cluster chain); the files live in
//! subdirectories, so only the folders' entries are in it.
//!
//! # What each operation writes
//!
//! The driver of a removable-media player keeps the FAT write-through (a card may be pulled at
//! any time): every write call of the application reaches the FAT at once. In order:
//!
//! - **write a new file** of `n` bytes: the directory entry's sector (the entry created with
//!   size 0; a full subdirectory first grows by a cluster, written in full, and its FAT
//!   sectors); then `⌈n / record_bytes⌉` write calls, each: allocate the clusters the call
//!   needs (next-fit, `fat.rs`), write its data sectors (requests of at most 128 sectors), then
//!   the FAT sectors of the newly linked clusters — the previous last cluster's entry and the
//!   new ones — in FAT 1 then FAT 2 (a call inside an already allocated cluster writes no FAT);
//!   at close, the directory entry's sector (final size, first cluster) and the FSInfo sector
//!   (free-cluster count, next-free hint).
//! - **delete**: the directory entry's sector, the FAT sectors of the freed chain (FAT 1 then
//!   FAT 2), the FSInfo sector. No data.
//! - **play**: reads of the file's data sectors, in order, in requests of at most 128 sectors
//!   (FAT and directory sectors are assumed cached; the access date is not updated).
//!
//! # Sequence
//!
//! 1. Optional prefill (`workload.prefill`, default on: every logical page written once — the
//!    card was full before it was formatted) and the format (boot and FSInfo sectors, both
//!    FATs, root directory), as for the other file-system kinds.
//! 2. Population (not measured): the folders are created, then new files are written until the
//!    next one would not fit under the high-water mark, ⌊`fill_fraction` × clusters⌋ allocated
//!    clusters (the file's clusters plus one if its directory must grow).
//! 3. Warm-up (not measured; `workload.warmup_passes`, default 0): operations as in 4 until
//!    `warmup_passes` × the logical bytes have been written.
//! 4. `StartMeasurement`, then operations: with probability `read_bias` (and at least one file
//!    on the volume) play a uniformly random file; otherwise write a new file, first deleting
//!    files until it fits under the high-water mark (and, with `directories = 0`, until the
//!    fixed root has a free entry) — a user freeing space for new pictures or songs. By
//!    default the oldest file goes first (`workload.fs.delete_order = "oldest"`): with next-fit
//!    allocation the volume is then a circular log and every file is contiguous, as the FAB paper
//!    describes its traces ("most PMP data are contiguous multimedia", §III-B).
//!    `delete_order = "random"` deletes uniformly random files instead; the holes they leave
//!    split new files across the remains of old ones, so blocks at file boundaries are written
//!    partly now and partly much later (experiments/fab/RESULTS.md shows what that does to a
//!    block-level buffer). The run stops after the operation during which the sectors written since
//!    `StartMeasurement` (data and metadata) reach `workload.passes` × the logical bytes:
//!    the FAB paper's traces write 0.8–1.8 × their flash size (Table I), the default 1.0 is one
//!    volume's worth.
//!
//! Choices and sizes come from `Prng::for_stream(run.seed, "workload")`. Requests are
//! closed-loop (no arrival times). `request_bytes`, `read_fraction` and the hot/cold keys do
//! not apply; `workload.fs.files`, `transactions` and `create_bias` are config errors.

use super::kinds::{Generator, Plan};
use super::spec::{FsConfig, FsParams, WorkloadConfig, MEDIA_NAMES};
use super::WorkloadSpec;
use crate::error::ConfigError;
use crate::flash::Geometry;
use crate::request::{Request, RequestKind};
use crate::rng::Prng;
use crate::spec::{check, one_of, Params};

use super::fat::{
    DirId, ExtentQueue, FatLayout, FatVolume, FsFile, MAX_TRANSFER_SECTORS, ROOT, ROOT_DIR_ENTRIES,
    SECTOR_BYTES,
};
use super::WorkItem;

/// Reserved sectors of a media-player volume: the boot sector and the FSInfo sector.
pub const MEDIA_RESERVED_SECTORS: u64 = 2;

/// Allocated clusters a volume may hold under `fill_fraction`.
fn high_water_clusters(layout: &FatLayout, fill_fraction: f64) -> u64 {
    ((layout.clusters as f64 * fill_fraction).floor() as u64).min(layout.clusters)
}

/// The resolved plan of `media-player`: the volume's parameters (those of `workload.media`
/// where not set).
#[derive(Clone, Debug)]
pub struct MediaPlan {
    pub fs: FsParams,
    /// The volume laid out (and checked to hold the player's files) at resolution.
    pub layout: FatLayout,
}

impl Plan for MediaPlan {
    fn generator(&self, spec: &WorkloadSpec) -> Result<Box<dyn Generator>, ConfigError> {
        Ok(Box::new(MediaWorkload::with(spec, self)?))
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// `workload.media` (default `camera`) and `[workload.fs]` of `media-player`: the keys it uses
/// get the defaults of the media; the Postmark/embedded keys it does not use are errors. The
/// volume must hold the player's files. Both are recorded.
pub fn resolve_media_volume(
    w: &WorkloadConfig,
    params: &mut Params<'_>,
    g: &Geometry,
) -> Result<MediaPlan, ConfigError> {
    check(
        w.arrival == "closed",
        "workload.arrival",
        "postmark, embedded and media-player workloads are closed-loop (use arrival = \"closed\")",
    )?;
    let media: String = params.or("media", "camera".to_string())?;
    one_of(&media, "workload.media", MEDIA_NAMES)?;
    let mut fs: FsConfig = params.get("fs")?.unwrap_or_default();
    let (p, layout) = media_fs(&mut fs, &media, g)?;
    params.set("fs", &fs);
    Ok(MediaPlan { fs: p, layout })
}

/// `[workload.fs]` of `media-player` with `media`'s defaults filled in and checked.
fn media_fs(
    fs: &mut FsConfig,
    media: &str,
    g: &Geometry,
) -> Result<(FsParams, FatLayout), ConfigError> {
    for (set, key) in [
        (fs.files.is_some(), "workload.fs.files"),
        (fs.transactions.is_some(), "workload.fs.transactions"),
        (fs.create_bias.is_some(), "workload.fs.create_bias"),
    ] {
        check(
            !set,
            key,
            "media-player does not use it: the volume is filled to workload.fs.fill_fraction and \
             the run's length is workload.passes",
        )?;
    }
    let p = fs.media_params(media);
    check(
        p.cluster_bytes >= 512 && p.cluster_bytes.is_multiple_of(512),
        "workload.fs.cluster_bytes",
        "must be a positive multiple of 512",
    )?;
    check(
        p.data_align_bytes >= 512 && p.data_align_bytes.is_multiple_of(512),
        "workload.fs.data_align_bytes",
        "must be a positive multiple of 512",
    )?;
    check(p.file_bytes_min >= 1, "workload.fs.file_bytes_min", "must be at least 1")?;
    check(
        p.file_bytes_min <= p.file_bytes_max,
        "workload.fs.file_bytes_min",
        "must be at most workload.fs.file_bytes_max",
    )?;
    check(
        (0.0..1.0).contains(&p.read_bias),
        "workload.fs.read_bias",
        "must be in [0, 1): a player that only plays never writes the measured volume",
    )?;
    check(p.record_bytes >= 1, "workload.fs.record_bytes", "must be at least 1")?;
    check(
        p.fill_fraction > 0.0 && p.fill_fraction <= 1.0,
        "workload.fs.fill_fraction",
        "must be in (0, 1]",
    )?;
    fs.cluster_bytes = Some(p.cluster_bytes);
    fs.data_align_bytes = Some(p.data_align_bytes);
    fs.directories = Some(p.directories);
    fs.file_bytes_min = Some(p.file_bytes_min);
    fs.file_bytes_max = Some(p.file_bytes_max);
    fs.read_bias = Some(p.read_bias);
    fs.record_bytes = Some(p.record_bytes);
    fs.fill_fraction = Some(p.fill_fraction);
    let order = fs.delete_order.get_or_insert_with(|| "oldest".into());
    one_of(order, "workload.fs.delete_order", &["oldest", "random"])?;
    let layout = check_volume(&p, g)?;
    Ok((p, layout))
}

/// Lays the media-player volume a config describes out and checks that a largest file always
/// fits under the high-water mark once every file has been deleted: the folders and all the
/// clusters they can grow to (each folder sized for every file the mark can hold), plus the
/// file (`resolve_media_volume`).
pub fn check_volume(p: &FsParams, g: &Geometry) -> Result<FatLayout, ConfigError> {
    let layout = FatLayout::with_reserved(
        g.logical_bytes() / SECTOR_BYTES,
        p.cluster_bytes,
        p.data_align_bytes,
        MEDIA_RESERVED_SECTORS,
    )?;
    let dirs = u64::from(p.directories);
    if dirs > ROOT_DIR_ENTRIES {
        return Err(ConfigError::new(
            "workload.fs.directories",
            format!("the root directory holds {ROOT_DIR_ENTRIES} entries"),
        ));
    }
    let cluster = layout.cluster_bytes();
    let mark = high_water_clusters(&layout, p.fill_fraction);
    let files_max = mark / p.file_bytes_min.div_ceil(cluster).max(1);
    let dir_clusters = dirs * (files_max + 2).div_ceil(layout.entries_per_cluster());
    let needed = dir_clusters.saturating_add(p.file_bytes_max.div_ceil(cluster));
    if needed > mark {
        return Err(ConfigError::new(
            "workload.fs.file_bytes_max",
            format!(
                "a {}-byte file and {dirs} folders need up to {needed} clusters of {cluster} \
                 bytes, but the {}-byte volume's high-water mark (workload.fs.fill_fraction = \
                 {}) is {mark} of its {} clusters: lower workload.fs.file_bytes_max, raise \
                 workload.fs.fill_fraction, or enlarge the device",
                p.file_bytes_max,
                g.logical_bytes(),
                p.fill_fraction,
                layout.clusters
            ),
        ));
    }
    Ok(layout)
}

/// Sectors by what they hold.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SectorCounts {
    /// File data written.
    pub data: u64,
    /// FAT sectors written (both copies).
    pub fat: u64,
    /// Directory sectors written: entries, and folders' clusters when created or grown.
    pub directory: u64,
    /// FSInfo sectors written.
    pub fsinfo: u64,
    /// File data read (playback).
    pub read: u64,
}

impl SectorCounts {
    #[must_use]
    pub fn written(&self) -> u64 {
        self.data + self.metadata()
    }

    /// FAT, directory and FSInfo sectors written.
    #[must_use]
    pub fn metadata(&self) -> u64 {
        self.fat + self.directory + self.fsinfo
    }
}

/// Counts of what a media-player workload did. The file and sector counts cover the measured
/// part (after `StartMeasurement`) only.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MediaStats {
    /// Files written by the population phase.
    pub files_populated: u64,
    /// Sectors written after the format and before `StartMeasurement` (population, warm-up).
    pub unmeasured: SectorCounts,
    pub files_written: u64,
    pub files_deleted: u64,
    pub files_played: u64,
    pub sectors: SectorCounts,
    /// Write calls that found the volume full (the file is closed short). Delete-to-fit makes
    /// room first, so this stays 0.
    pub dropped_full: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    Prefill(u64),
    /// The prefill has ended: `WorkItem::PrefillDone` is next.
    EndPrefill,
    Format,
    Populate,
    Warmup,
    Measure,
    Run,
    Done,
}

/// What the sectors an operation writes outside the FAT and the reserved area hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Holds {
    Data,
    Directory,
}

/// A `media-player` workload: `WorkItem`s from the FAT volume model.
#[derive(Clone, Debug)]
pub struct MediaWorkload {
    p: FsParams,
    vol: FatVolume,
    rng: Prng,
    stage: Stage,
    logical_pages: u64,
    page_size_bytes: u64,
    /// Allocated clusters the volume may hold (`fill_fraction` × clusters).
    high_water_clusters: u64,
    /// Sectors the warm-up and the measured part write.
    warmup_sectors: u64,
    measured_sectors: u64,
    /// `stats.unmeasured.written()` when the warm-up started.
    warmup_from: u64,
    /// The player's folders (empty: files in the root).
    dirs: Vec<DirId>,
    /// Files on the volume.
    live: Vec<FsFile>,
    /// Requests of the current operation.
    pending: ExtentQueue,
    stats: MediaStats,
    estimated_requests: u64,
}

impl MediaWorkload {
    #[cfg(test)]
    /// The workload of a resolved config with `workload.kind = "media-player"`.
    pub fn new(r: &WorkloadSpec) -> Result<Self, ConfigError> {
        match r.plan.as_any().downcast_ref::<MediaPlan>() {
            Some(plan) => Self::with(r, plan),
            None => Err(ConfigError::new(
                "workload.kind",
                format!("{:?} is not the media-player workload", r.config.kind),
            )),
        }
    }

    /// The workload of `plan` on the device and seed of `r`.
    fn with(r: &WorkloadSpec, plan: &MediaPlan) -> Result<Self, ConfigError> {
        let w = &r.config;
        let p = plan.fs;
        let layout = plan.layout;
        let g = r.geometry;
        let sectors_of =
            |passes: f64| (passes * g.logical_bytes() as f64 / SECTOR_BYTES as f64).ceil() as u64;
        let prefill = if w.prefill == Some(false) { 0 } else { g.logical_pages };
        let mut me = Self {
            p,
            vol: FatVolume::new(layout),
            rng: Prng::for_stream(r.seed, "workload"),
            stage: if prefill > 0 { Stage::Prefill(0) } else { Stage::Format },
            logical_pages: g.logical_pages,
            page_size_bytes: g.page_size_bytes,
            high_water_clusters: high_water_clusters(&layout, p.fill_fraction),
            warmup_sectors: sectors_of(w.warmup_passes.unwrap_or(0.0)),
            measured_sectors: sectors_of(w.passes.unwrap_or(1.0)),
            warmup_from: 0,
            dirs: Vec::new(),
            live: Vec::new(),
            pending: ExtentQueue::default(),
            stats: MediaStats::default(),
            estimated_requests: 0,
        };
        me.estimated_requests = prefill.saturating_add(me.estimate_after_prefill());
        Ok(me)
    }

    /// Requests this workload will issue, roughly (for progress bars).
    #[must_use]
    pub fn estimated_requests(&self) -> u64 {
        self.estimated_requests
    }

    #[cfg(test)]
    /// The volume model (its state after the items generated so far).
    #[must_use]
    pub fn volume(&self) -> &FatVolume {
        &self.vol
    }

    #[cfg(test)]
    /// Files on the volume now.
    #[must_use]
    pub fn files(&self) -> &[FsFile] {
        &self.live
    }

    #[cfg(test)]
    /// The high-water mark, in allocated clusters.
    #[must_use]
    pub fn high_water_clusters(&self) -> u64 {
        self.high_water_clusters
    }

    #[cfg(test)]
    #[must_use]
    pub fn stats(&self) -> MediaStats {
        self.stats
    }

    /// Requests after the prefill (see `estimate`).
    fn estimate_after_prefill(&self) -> u64 {
        self.estimate(false)
    }

    /// Requests of the measured part (after `StartMeasurement`), roughly (for progress bars of
    /// repeated runs, `workload.repeat`).
    #[must_use]
    pub fn estimated_measured_requests(&self) -> u64 {
        self.estimate(true)
    }

    /// Requests after the prefill (`measured_only`: of the measured operations only), from the
    /// mean file: its write calls (data in 128-sector requests, a FAT sector per copy when the
    /// call adds clusters), entry, close; a delete per written file once the volume is full;
    /// plays in proportion `read_bias / (1 - read_bias)`.
    fn estimate(&self, measured_only: bool) -> u64 {
        let l = self.vol.layout();
        let p = &self.p;
        let chunks = |sectors: u64| sectors.div_ceil(MAX_TRANSFER_SECTORS);
        let fsinfo = u64::from(l.fsinfo_sector.is_some());
        let format = 1 + 2 * chunks(l.fat_sectors) + chunks(l.root_dir_sectors);
        let mean = p.file_bytes_min.midpoint(p.file_bytes_max).max(1);
        let calls = mean.div_ceil(p.record_bytes);
        let clusters = mean.div_ceil(l.cluster_bytes());
        let fat_writes = 2 * calls.min(clusters);
        let call_data = chunks(p.record_bytes.min(mean).div_ceil(SECTOR_BYTES));
        let write_requests = 1 + calls * call_data + fat_writes + 1 + fsinfo;
        let write_sectors = mean.div_ceil(SECTOR_BYTES) + fat_writes + 2 + fsinfo;
        let fat_chain = (clusters * l.fat_entry_bytes).div_ceil(SECTOR_BYTES);
        let (delete_requests, delete_sectors) = (3 + fsinfo, 1 + 2 * fat_chain + fsinfo);
        let populated = self.high_water_clusters / clusters.max(1);
        // In floating point: `passes` may ask for more than u64 arithmetic holds.
        let warmup = if measured_only { 0.0 } else { self.warmup_sectors as f64 };
        let sectors = warmup + self.measured_sectors as f64;
        let writes = (sectors / (write_sectors + delete_sectors) as f64).ceil();
        let plays = writes * p.read_bias / (1.0 - p.read_bias);
        let play_requests = chunks(mean.div_ceil(SECTOR_BYTES));
        let setup = if measured_only {
            0
        } else {
            format + 4 * u64::from(p.directories) + populated * write_requests
        };
        let total = setup as f64
            + writes * (write_requests + delete_requests) as f64
            + plays * play_requests as f64;
        total.round() as u64
    }

    /// Adds the extents the last operation pushed from index `from` on to the counts of the
    /// current part of the run.
    fn account(&mut self, from: usize, holds: Holds) {
        let l = *self.vol.layout();
        let counts = if self.stage == Stage::Run {
            &mut self.stats.sectors
        } else {
            &mut self.stats.unmeasured
        };
        for e in &self.pending.extents[from..] {
            let n = e.sectors;
            if e.kind == RequestKind::Read {
                counts.read += n;
            } else if e.sector < l.fat_start(0) {
                assert_eq!(
                    Some(e.sector),
                    l.fsinfo_sector,
                    "only FSInfo is rewritten after format"
                );
                counts.fsinfo += n;
            } else if e.sector < l.root_dir_start() {
                counts.fat += n;
            } else {
                match holds {
                    Holds::Data => counts.data += n,
                    Holds::Directory => counts.directory += n,
                }
            }
        }
    }

    /// Creates the player's folders (population).
    fn mkdirs(&mut self) {
        for _ in 0..self.p.directories {
            let from = self.pending.extents.len();
            // check_volume leaves room for the folders and the root has an entry for each.
            match self.vol.mkdir(ROOT, &mut self.pending.extents) {
                Ok(d) => self.dirs.push(d),
                Err(_) => self.stats.dropped_full += 1,
            }
            self.account(from, Holds::Directory);
        }
    }

    /// The folder and size of the next new file.
    fn draw_file(&mut self) -> (DirId, u64) {
        let dir = if self.dirs.is_empty() {
            ROOT
        } else {
            self.dirs[self.rng.below(self.dirs.len() as u64) as usize]
        };
        let spread = self.p.file_bytes_max - self.p.file_bytes_min;
        (dir, self.p.file_bytes_min + self.rng.below(spread.saturating_add(1)))
    }

    /// Whether a new `size`-byte file in `dir` fits under the high-water mark now.
    fn fits(&self, dir: DirId, size: u64) -> bool {
        let Ok(entry) = self.vol.entry_cost_clusters(dir) else { return false };
        let clusters = size.div_ceil(self.vol.layout().cluster_bytes()) + entry;
        self.vol.allocated_clusters() + clusters <= self.high_water_clusters
    }

    /// Writes a new file: entry, write calls (data then FAT), close (entry, FSInfo).
    fn write_file(&mut self, dir: DirId, size: u64) {
        let from = self.pending.extents.len();
        let Ok(mut file) = self.vol.create(dir, 0, &mut self.pending.extents) else {
            // `fits` checked the entry and room for it.
            self.stats.dropped_full += 1;
            return;
        };
        self.account(from, Holds::Directory);
        while file.size() < size {
            let from = self.pending.extents.len();
            let len = self.p.record_bytes.min(size - file.size());
            let at = file.size();
            let written = self.vol.write_data(&mut file, at, len, &mut self.pending.extents);
            self.account(from, Holds::Data);
            if written.is_err() {
                self.stats.dropped_full += 1;
                break;
            }
        }
        let from = self.pending.extents.len();
        self.vol.close(&file, &mut self.pending.extents);
        self.account(from, Holds::Directory);
        self.live.push(file);
    }

    /// Deletes the oldest file (`live` is in creation order) or a random one.
    fn delete_one(&mut self) {
        let file = if self.p.delete_oldest {
            self.live.remove(0)
        } else {
            let i = self.rng.below(self.live.len() as u64) as usize;
            self.live.swap_remove(i)
        };
        let from = self.pending.extents.len();
        self.vol.delete(file, &mut self.pending.extents);
        self.vol.write_fsinfo(&mut self.pending.extents);
        self.account(from, Holds::Directory);
        if self.stage == Stage::Run {
            self.stats.files_deleted += 1;
        }
    }

    fn play_random(&mut self) {
        let i = self.rng.below(self.live.len() as u64) as usize;
        let from = self.pending.extents.len();
        self.vol.read(&self.live[i], &mut self.pending.extents);
        self.account(from, Holds::Data);
        if self.stage == Stage::Run {
            self.stats.files_played += 1;
        }
    }

    /// One population step; `false` when the volume is at its high-water mark.
    fn populate_step(&mut self) -> bool {
        let (dir, size) = self.draw_file();
        if !self.fits(dir, size) {
            return false;
        }
        self.write_file(dir, size);
        self.stats.files_populated += 1;
        true
    }

    /// One operation of the warm-up or the measured part: play, or delete-to-fit and write.
    /// `false` when a file cannot be made to fit even on an empty volume (check_volume rules
    /// that out).
    fn operation(&mut self) -> bool {
        if !self.live.is_empty() && self.rng.unit_f64() < self.p.read_bias {
            self.play_random();
            return true;
        }
        let (dir, size) = self.draw_file();
        while !self.fits(dir, size) {
            if self.live.is_empty() {
                return false;
            }
            self.delete_one();
        }
        self.write_file(dir, size);
        if self.stage == Stage::Run {
            self.stats.files_written += 1;
        }
        true
    }

    /// Runs the next step of the current stage (pushing its extents) and moves on to the next
    /// stage when this one is over. Returns an item when the step is one.
    fn advance(&mut self) -> Option<WorkItem> {
        match self.stage {
            Stage::Prefill(page) => {
                self.stage = if page + 1 < self.logical_pages {
                    Stage::Prefill(page + 1)
                } else {
                    Stage::EndPrefill
                };
                let size = self.page_size_bytes;
                return Some(WorkItem::Request(Request::write(page * size, size)));
            }
            Stage::EndPrefill => {
                self.stage = Stage::Format;
                return Some(WorkItem::PrefillDone);
            }
            Stage::Format => {
                self.vol.format(&mut self.pending.extents);
                self.mkdirs();
                self.stage = Stage::Populate;
            }
            Stage::Populate => {
                if !self.populate_step() {
                    self.warmup_from = self.stats.unmeasured.written();
                    self.stage = Stage::Warmup;
                }
            }
            Stage::Warmup => {
                if self.stats.unmeasured.written() - self.warmup_from >= self.warmup_sectors {
                    self.stage = Stage::Measure;
                } else if !self.operation() {
                    self.stage = Stage::Done;
                }
            }
            Stage::Measure => {
                self.stage = Stage::Run;
                return Some(WorkItem::StartMeasurement);
            }
            Stage::Run => {
                if !self.operation() || self.stats.sectors.written() >= self.measured_sectors {
                    self.stage = Stage::Done;
                }
            }
            Stage::Done => {}
        }
        None
    }
}

impl Generator for MediaWorkload {
    fn estimated_requests(&self) -> u64 {
        MediaWorkload::estimated_requests(self)
    }
    fn estimated_measured_requests(&self) -> u64 {
        MediaWorkload::estimated_measured_requests(self)
    }
}

impl Iterator for MediaWorkload {
    type Item = WorkItem;

    fn next(&mut self) -> Option<WorkItem> {
        loop {
            if let Some(req) = self.pending.pop() {
                return Some(WorkItem::Request(req));
            }
            if self.stage == Stage::Done {
                return None;
            }
            if let Some(item) = self.advance() {
                return Some(item);
            }
        }
    }
}
