//! Configuration: parse (TOML, `--set key=value` overrides, JSON from Python) → `validate` →
//! `Resolved` (every default filled in, derived values computed and checked once).
//!
//! Every key has a default, so an empty config runs. Keys carry their unit in the name. Errors
//! name the dotted key at fault. Defaults live here and in `presets` only.

use serde::{Deserialize, Serialize};

use crate::error::ConfigError;
use crate::presets;

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    pub device: DeviceConfig,
    pub timing: TimingConfig,
    pub ftl: FtlConfig,
    pub workload: WorkloadConfig,
    pub run: RunConfig,
    pub serve: ServeConfig,
    pub buffer: BufferConfig,
    pub wear: WearConfig,
    pub deb: DebConfig,
    pub dac: DacConfig,
}

/// `[deb]`: the DEB placement (`ftl.placement = "deb"`, paper 004 §4.1, SPEC §3). Only that
/// placement may set these keys.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct DebConfig {
    /// Size of the Extra Buffer Region (battery-backed RAM). Default 4 MiB (the paper's); 0 =
    /// no EBR (the paper's "LFSS (No EBR)").
    pub ebr_size_bytes: Option<u64>,
    /// Stable-time interval boundaries in seconds, hottest first, strictly increasing; one
    /// flash region per value. Default [100, 200, 300, 400]: EBR [0, 100], hottest flash region
    /// [100, 200], ..., coldest [400, ∞) (see `placement::deb`).
    pub stable_time_intervals_s: Option<Vec<f64>>,
    /// Rule 5: write back when the EBR's used space would pass this fraction of it, down to
    /// below half of it. Default 1.0 (when full).
    pub ebr_write_back_threshold: Option<f64>,
    /// Wear-aware region moves at cleaning: an erased block goes to a hotter region when it is
    /// less worn, a colder one when more worn. Default true.
    pub wear_aware: Option<bool>,
}

/// `[dac]`: the DAC placement's RAM region (paper 004's "DAC with 4 MB" baseline). Only
/// `ftl.placement = "dac"` may set these keys.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct DacConfig {
    /// RAM as one more region above DAC's `ftl.regions` flash regions. Default 0 (none).
    pub ram_region_bytes: Option<u64>,
    /// When the RAM region's used space would pass this fraction of it, its oldest pages are
    /// demoted to the hottest flash region until it is below half of it. Default 1.0.
    pub ram_write_back_threshold: Option<f64>,
}

/// `[wear]`: wear leveling and endurance (`wear/`, SPEC §6; paper 003's LCTES'11 attachment).
/// Keys a kind does not use stay unset in the resolved config.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct WearConfig {
    /// `none`, `static` (Chang's SW Leveler), `lazy` (Algorithm 1).
    pub kind: String,
    /// Lazy: Δ, how far above the average erase count a victim may be before its erase
    /// re-maps a cold logical block onto it. Default 16 (the paper's).
    pub delta: Option<f64>,
    /// Lazy: retune Δ every session (Δ_next = sqrt(Δ·g/|λ|)). Default false.
    pub adaptive: Option<bool>,
    /// Adaptive Δ: λ, the overhead slope limit (% per unit of Δ). Default −0.1.
    pub lambda: Option<f64>,
    /// Adaptive Δ: session length in wear-leveling erases. Default 1000 (the paper's).
    pub session_wear_erases: Option<u64>,
    /// Static: TH, erases since the bitmap reset per erased set that force a set. Default 16.
    pub threshold: Option<f64>,
    /// Static: blocks per erase-bitmap set. Default 1 (the paper: "recently erased blocks").
    pub set_blocks: Option<u32>,
    /// Rated program/erase cycles per block; a block reaching it is retired. Default: the
    /// preset's `endurance_cycles`; 0 = unlimited.
    pub endurance_cycles: Option<u32>,
}

impl Default for WearConfig {
    fn default() -> Self {
        Self {
            kind: "none".into(),
            delta: None,
            adaptive: None,
            lambda: None,
            session_wear_erases: None,
            threshold: None,
            set_blocks: None,
            endurance_cycles: None,
        }
    }
}

/// `[buffer]`: a RAM buffer between the host and the FTL (`buffer/`, SPEC §5).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct BufferConfig {
    /// `none` (the paper's PLAIN), `lru`, `fab`, `bplru`, `cflru`.
    pub kind: String,
    /// Buffer capacity; a whole number of pages is used (rounded down). Default 8 MiB (paper
    /// 001: 8 MB is enough for 1 GB of flash).
    pub size_bytes: Option<u64>,
    /// CFLRU: the clean-first region as a fraction of the buffer. Default 0.5.
    pub cflru_window: Option<f64>,
}

impl Default for BufferConfig {
    fn default() -> Self {
        Self { kind: "none".into(), size_bytes: None, cflru_window: None }
    }
}

/// Default `buffer.size_bytes`.
pub const BUFFER_SIZE_BYTES_DEFAULT: u64 = 8 << 20;

/// `nandlab serve`: the simulated SSD as a block device over NBD.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct ServeConfig {
    /// Hold each reply until its simulated completion time.
    pub emulate_latency: bool,
    /// `full` (every page's payload in the image) or `metadata-only`.
    pub store: String,
    /// How tables are rebuilt at start-up: `scan` (every OOB record) or `checkpoint`.
    pub recovery: String,
    /// Export name announced to clients (clients may also connect with no name).
    pub export_name: String,
    /// How often the `--stats-json` file is rewritten.
    pub stats_interval_s: f64,
    /// How often a checkpoint is written with `serve.recovery = "checkpoint"` (LFSS: 30 s).
    pub checkpoint_interval_s: f64,
    /// The battery behind a RAM region (DEB's EBR, DAC's RAM region) of a served drive: `ok`
    /// (it is persisted in the image's NVRAM area on every write and restored at start-up) or
    /// `failed` (this start-up models a power cut with a dead battery: the NVRAM content is
    /// dropped and reported as lost; the host reads the older flash copies).
    pub ram_region_battery: String,
}

impl Default for ServeConfig {
    fn default() -> Self {
        Self {
            emulate_latency: true,
            store: "full".into(),
            recovery: "scan".into(),
            export_name: "nandlab".into(),
            stats_interval_s: 1.0,
            checkpoint_interval_s: 30.0,
            ram_region_battery: "ok".into(),
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct DeviceConfig {
    /// Named preset giving default geometry and timing (`nandlab presets`).
    pub preset: String,
    pub page_size_bytes: Option<u64>,
    pub pages_per_block: Option<u32>,
    /// Physical erase blocks. Unset: from `device.logical_bytes` ÷ `device.utilization`, from the
    /// trace's footprint for trace workloads, or the preset's default.
    pub blocks: Option<u32>,
    /// Logical pages ÷ physical pages. Default 0.8.
    pub utilization: Option<f64>,
    /// Logical capacity exported to the host (alternative to `device.utilization`).
    pub logical_bytes: Option<u64>,
    pub sector_size_bytes: u64,
    /// The device's RAM for data: the buffer (`buffer.size_bytes`) and a RAM region
    /// (`deb.ebr_size_bytes`, `dac.ram_region_bytes`) must fit in it together. Default a quarter
    /// of the flash's physical bytes, at least 64 MiB.
    pub ram_bytes: Option<u64>,
}

impl Default for DeviceConfig {
    fn default() -> Self {
        Self {
            preset: "generic".into(),
            page_size_bytes: None,
            pages_per_block: None,
            blocks: None,
            utilization: None,
            logical_bytes: None,
            sector_size_bytes: 512,
            ram_bytes: None,
        }
    }
}

/// Overrides of the preset's per-page timing.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct TimingConfig {
    pub read_page_ns: Option<u64>,
    pub program_page_ns: Option<u64>,
    pub erase_block_ns: Option<u64>,
    pub transfer_page_ns: Option<u64>,
    /// Copyback time per page; 0 disables copyback (copy = read + 2 transfers + program).
    pub copy_page_ns: Option<u64>,
    pub ram_page_ns: Option<u64>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct FtlConfig {
    /// FTL kind: `"page"` (page-mapped log-structured store), or the hybrid log-block FTLs
    /// `"bast"`, `"sast"`, `"fast"`.
    pub kind: String,
    /// Victim selection: `greedy`, `cost-benefit`, `cat`, `fifo`, `random-d`.
    pub cleaning: String,
    /// Data placement: `none` (one log), `dac`, `oracle`, `deb`.
    pub placement: String,
    /// Number of logs / DAC regions (flash regions: a RAM region is extra). Default 1 for
    /// `none`, 4 for `dac`, 2 for `oracle`; `deb`: one per stable-time interval.
    pub regions: Option<u32>,
    /// DAC time threshold for promotion/demotion; unset = no threshold.
    pub time_threshold_s: Option<f64>,
    /// The cleaner runs while fewer free blocks remain. Default and minimum: one more than the
    /// number of logs one victim's pages can be copied into (see
    /// `placement::cleaner_destinations_max`), so a cleaning step can never run out of blocks.
    pub gc_free_blocks_min: Option<u32>,
    /// Sample size of the `random-d` policy.
    pub random_d: u32,
    /// Upper bound on blocks examined by one victim search of the age-dependent policies.
    pub victim_scan_limit: u32,
    /// Oracle log boundaries as next-write distances in units of the logical capacity
    /// (host page writes ÷ logical pages), ascending; `regions - 1` values. Default: geometric
    /// around 1.0 with ratio 4.
    pub oracle_boundaries_passes: Option<Vec<f64>>,
    /// Hybrid kinds: log blocks in the pool (FAST: one of them is the sequential log).
    /// Default 8.
    pub log_blocks: Option<u32>,
    /// SAST: logical blocks per group (N). Default 4.
    pub group_data_blocks: Option<u32>,
    /// SAST: log blocks a group may hold (K). Default 2.
    pub group_log_blocks: Option<u32>,
    /// BAST: how a full log block is recycled: `merge-only` (default), `cost-based`,
    /// `periodic`, `optimal` (paper 002).
    pub recycling: Option<String>,
    /// `periodic` recycling: merge after this many consecutive migrations. Default N_p / 2.
    pub migration_period: Option<u32>,
}

impl FtlConfig {
    /// Logical blocks a block-mapped kind maps as a unit (SAST: a group; BAST, FAST: 1); 0 for
    /// the page FTL, which maps single pages.
    #[must_use]
    pub fn mapping_granule_blocks(&self) -> u64 {
        match self.kind.as_str() {
            "page" => 0,
            "sast" => u64::from(self.group_data_blocks.unwrap_or(SAST_GROUP_DATA_BLOCKS).max(1)),
            _ => 1,
        }
    }
}

impl Default for FtlConfig {
    fn default() -> Self {
        Self {
            kind: "page".into(),
            cleaning: "greedy".into(),
            placement: "none".into(),
            regions: None,
            time_threshold_s: None,
            gc_free_blocks_min: None,
            random_d: 8,
            victim_scan_limit: 65_536,
            oracle_boundaries_passes: None,
            log_blocks: None,
            group_data_blocks: None,
            group_log_blocks: None,
            recycling: None,
            migration_period: None,
        }
    }
}

/// One phase of a `phases` workload.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PhaseConfig {
    /// `uniform` or `hotcold`.
    pub kind: String,
    #[serde(default)]
    pub hot_access_fraction: Option<f64>,
    #[serde(default)]
    pub hot_data_fraction: Option<f64>,
    /// Length in bytes written (alternative: `passes`).
    #[serde(default)]
    pub bytes: Option<u64>,
    /// Length in host page writes ÷ logical pages.
    #[serde(default)]
    pub passes: Option<f64>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct WorkloadConfig {
    /// `sequential`, `uniform`, `hotcold`, `phases`, `trace`, `postmark`, `embedded`,
    /// `media-player`.
    pub kind: String,
    /// Hot/cold "x/y": fraction x of accesses go to fraction y of the data.
    pub hot_access_fraction: f64,
    pub hot_data_fraction: f64,
    /// Host page writes excluded from the metrics, as multiples of the logical page count
    /// (trace workloads: number of warm-up replays of the trace; media-player: sectors written
    /// after the population ÷ logical sectors, default 0).
    pub warmup_passes: Option<f64>,
    /// Measured host page writes as multiples of the logical page count (trace workloads: number
    /// of measured replays; media-player: sectors written ÷ logical sectors, default 1).
    pub passes: Option<f64>,
    /// Issue the measured part this many times in a row (prefill and warm-up happen once):
    /// "replay a trace or workload K times" for wear and stability studies. Generated
    /// workloads repeat the identical measured sequence, shifted in time; trace workloads
    /// replay the trace `passes` × `repeat` times measured. Default 1.
    pub repeat: u64,
    /// Write every logical page once, sequentially, before warm-up (not measured).
    pub prefill: Option<bool>,
    /// Size of each synthetic request. Default: one page.
    pub request_bytes: Option<u64>,
    /// Fraction of synthetic requests that are reads (same address distribution).
    pub read_fraction: f64,
    /// `closed` (next request when the previous one completes) or `poisson`.
    pub arrival: String,
    /// Poisson arrival rate; alternatively `workload.duration_s` spreads the requests evenly.
    pub arrival_rate_per_s: Option<f64>,
    pub duration_s: Option<f64>,
    /// Phases of a `phases` workload. Default: the DAC paper's four-phase server run.
    pub phases: Option<Vec<PhaseConfig>>,
    /// Trace file (any supported format, optionally gzip-compressed).
    pub path: Option<String>,
    /// Trace format; unset = detected from the content.
    pub format: Option<String>,
    /// Keep only this device / volume / LUN of the trace.
    pub device: Option<u64>,
    /// How trace addresses are fitted onto the device: `auto`, `error`, `fold`, `compact`.
    pub fit: String,
    /// Chunk size of `compact` fitting. Default: one erase block.
    pub compact_chunk_bytes: Option<u64>,
    /// Trace arrival times: `trace` (open loop at the trace's timestamps) or `closed`.
    pub trace_timing: String,
    /// `media-player`: the player whose files are written and played, `camera`, `mp3` or
    /// `movie` (paper 001, Table I). Default `camera`; no other kind takes it.
    pub media: Option<String>,
    /// `[workload.fs]`: the FAT volume and file-system workload of `postmark`, `embedded` and
    /// `media-player`.
    pub fs: Option<FsConfig>,
}

impl Default for WorkloadConfig {
    fn default() -> Self {
        Self {
            kind: "uniform".into(),
            hot_access_fraction: 0.9,
            hot_data_fraction: 0.1,
            warmup_passes: None,
            passes: None,
            repeat: 1,
            prefill: None,
            request_bytes: None,
            read_fraction: 0.0,
            arrival: "closed".into(),
            arrival_rate_per_s: None,
            duration_s: None,
            phases: None,
            path: None,
            format: None,
            device: None,
            fit: "auto".into(),
            compact_chunk_bytes: None,
            trace_timing: "trace".into(),
            media: None,
            fs: None,
        }
    }
}

/// `[workload.fs]`: the FAT volume and the file-system workload run on it
/// (`workload/fat.rs`, `workload/media.rs`). Unset keys take the defaults of the workload kind
/// (and, for `media-player`, of `workload.media`); keys a kind does not use stay unset in the
/// resolved config.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct FsConfig {
    /// Cluster size, a multiple of 512. Default 4096.
    pub cluster_bytes: Option<u64>,
    /// Postmark, media-player: subdirectories of the root holding the files (0: files in the
    /// root). Default 50 (media-player: 1).
    pub directories: Option<u32>,
    /// Postmark: initial files (default 500); embedded: log files (default 4).
    pub files: Option<u32>,
    /// Postmark, media-player: file sizes are uniform in [min, max]. Default 512 and 512
    /// (embedded: max 65536, the size at which a log file wraps around; media-player: per
    /// `workload.media`, see `MediaDefaults`).
    pub file_bytes_min: Option<u64>,
    pub file_bytes_max: Option<u64>,
    /// Postmark transactions or embedded record appends. Default 10000.
    pub transactions: Option<u64>,
    /// Postmark: probability that a transaction's create/delete is a create. Default 0.5.
    pub create_bias: Option<f64>,
    /// Postmark: probability that a transaction's read/append is a read. Default 0.5.
    /// Media-player: probability that an operation plays a file rather than writing a new one
    /// (per `workload.media`).
    pub read_bias: Option<f64>,
    /// Embedded: bytes per appended record. Default 64. Media-player: bytes per write call of
    /// the recording application (the FAT is updated after each). Default 65536.
    pub record_bytes: Option<u64>,
    /// The data region starts at a multiple of this many bytes (the boot area is padded), as
    /// flash-card formatters align clusters to pages and erase blocks. Default: the cluster
    /// size; 512 lays the volume out unaligned, MS-DOS style.
    pub data_align_bytes: Option<u64>,
    /// Media-player: the volume's high-water mark as a fraction of its clusters, in (0, 1].
    /// Population fills the volume to it, and files are deleted to keep under it. Default 0.9.
    pub fill_fraction: Option<f64>,
    /// Media-player: which files are deleted to make room: `oldest` (the volume is used as a
    /// circular log, files stay contiguous) or `random` (holes fragment new files). Default
    /// `oldest`.
    pub delete_order: Option<String>,
}

/// `[workload.fs]` with every default of one workload kind filled in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FsParams {
    pub cluster_bytes: u64,
    pub directories: u32,
    pub files: u32,
    pub file_bytes_min: u64,
    pub file_bytes_max: u64,
    pub transactions: u64,
    pub create_bias: f64,
    pub read_bias: f64,
    pub record_bytes: u64,
    pub data_align_bytes: u64,
    pub fill_fraction: f64,
    /// Media-player: delete the oldest file (true) or a random one.
    pub delete_oldest: bool,
}

/// The media players of `workload.media` (paper 001, Table I).
pub const MEDIA_NAMES: &[&str] = &["camera", "mp3", "movie"];

/// The `[workload.fs]` defaults of one media player. Sizes are in decimal megabytes (10^6
/// bytes), as media files and memory cards are quoted.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MediaDefaults {
    pub file_bytes_min: u64,
    pub file_bytes_max: u64,
    pub read_bias: f64,
}

impl MediaDefaults {
    /// The defaults of `media` (one of `MEDIA_NAMES`; anything else gets the camera's).
    #[must_use]
    pub fn of(media: &str) -> Self {
        const MB: u64 = 1_000_000;
        match media {
            // "MP3 files are about 4-5 Mbytes"; songs are played back more often than a
            // camera's pictures are viewed.
            "mp3" => Self { file_bytes_min: 4 * MB, file_bytes_max: 5 * MB, read_bias: 0.3 },
            // "Movie files are about 15-30 Mbytes".
            "movie" => Self { file_bytes_min: 15 * MB, file_bytes_max: 30 * MB, read_bias: 0.3 },
            // "Picture files are about 1 Mbytes": a JPEG's size varies with the scene, ±10 %.
            // Table I's camera trace is pictures taken: no playback by default (random
            // playback, `read_bias` > 0, is studied in experiments/fab).
            _ => Self { file_bytes_min: 900_000, file_bytes_max: 1_100_000, read_bias: 0.0 },
        }
    }
}

impl FsConfig {
    /// The effective values for `workload.kind = kind` (`postmark` or `embedded`).
    #[must_use]
    pub fn params(&self, kind: &str) -> FsParams {
        let embedded = kind == "embedded";
        FsParams {
            cluster_bytes: self.cluster_bytes.unwrap_or(4096),
            directories: self.directories.unwrap_or(50),
            files: self.files.unwrap_or(if embedded { 4 } else { 500 }),
            file_bytes_min: self.file_bytes_min.unwrap_or(512),
            file_bytes_max: self.file_bytes_max.unwrap_or(if embedded { 65_536 } else { 512 }),
            transactions: self.transactions.unwrap_or(10_000),
            create_bias: self.create_bias.unwrap_or(0.5),
            read_bias: self.read_bias.unwrap_or(0.5),
            record_bytes: self.record_bytes.unwrap_or(64),
            data_align_bytes: self
                .data_align_bytes
                .unwrap_or_else(|| self.cluster_bytes.unwrap_or(4096)),
            fill_fraction: self.fill_fraction.unwrap_or(FILL_FRACTION_DEFAULT),
            delete_oldest: self.delete_order.as_deref() != Some("random"),
        }
    }

    /// The effective values for `workload.kind = "media-player"` with `workload.media = media`.
    /// `files`, `transactions` and `create_bias` do not apply and are 0.
    #[must_use]
    pub fn media_params(&self, media: &str) -> FsParams {
        let d = MediaDefaults::of(media);
        let cluster_bytes = self.cluster_bytes.unwrap_or(4096);
        FsParams {
            cluster_bytes,
            // The player keeps its files in one folder (DCIM/100xxxxx, MUSIC, VIDEO).
            directories: self.directories.unwrap_or(1),
            files: 0,
            file_bytes_min: self.file_bytes_min.unwrap_or(d.file_bytes_min),
            file_bytes_max: self.file_bytes_max.unwrap_or(d.file_bytes_max),
            transactions: 0,
            create_bias: 0.0,
            read_bias: self.read_bias.unwrap_or(d.read_bias),
            record_bytes: self.record_bytes.unwrap_or(MEDIA_RECORD_BYTES_DEFAULT),
            data_align_bytes: self.data_align_bytes.unwrap_or(cluster_bytes),
            fill_fraction: self.fill_fraction.unwrap_or(FILL_FRACTION_DEFAULT),
            delete_oldest: self.delete_order.as_deref() != Some("random"),
        }
    }
}

const FILL_FRACTION_DEFAULT: f64 = 0.9;
/// A recording application's write call: 64 KiB, the largest transfer of the FAT driver.
const MEDIA_RECORD_BYTES_DEFAULT: u64 = 65_536;

impl WorkloadConfig {
    /// `[workload.fs]` with the defaults of this kind (and media) filled in.
    #[must_use]
    pub fn fs_params(&self) -> FsParams {
        let fs = self.fs.clone().unwrap_or_default();
        if self.kind == "media-player" {
            fs.media_params(self.media.as_deref().unwrap_or("camera"))
        } else {
            fs.params(&self.kind)
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct RunConfig {
    pub seed: u64,
    /// Run the O(n) invariant checker every this many requests (0 = never). For tests.
    pub check_every_requests: u64,
    /// Record a wear sample (`metrics.wear_samples`) each time the host has written another
    /// this many bytes, counted over the whole run (prefill and warm-up included, so the curve
    /// starts at the fresh device), plus one at the end. Unset: no sampling.
    pub sample_every_bytes: Option<u64>,
    /// RAM the run may use. A configuration whose estimated tables (`memory::estimate`) do not
    /// fit is refused before anything is allocated. Unset: what the machine allows the process
    /// (the smallest of available memory, the cgroup limit and the address-space limit).
    pub memory_limit_bytes: Option<u64>,
}

impl Default for RunConfig {
    fn default() -> Self {
        Self {
            seed: 1,
            check_every_requests: 0,
            sample_every_bytes: None,
            memory_limit_bytes: None,
        }
    }
}

pub use crate::flash::{Geometry, Timing};

/// A validated configuration with every default filled in. The `config` field is the filled
/// config itself (what `print-config` shows and every result records).
#[derive(Clone, Debug, Serialize)]
pub struct Resolved {
    pub config: Config,
    pub geometry: Geometry,
    pub timing: Timing,
    pub regions: u32,
    pub gc_free_blocks_min: u32,
    /// The device is a served drive (`nandlab serve`), which must be able to recover from a
    /// crash at any instant: the hybrid FTLs then keep one more block spare (recovery may have
    /// to finish a merge a crash interrupted, which needs a free block) — also against
    /// retirement of worn blocks. Set by the serve front, never by a config key.
    #[serde(skip)]
    pub served: bool,
}

const UTILIZATION_DEFAULT: f64 = 0.8;

impl Resolved {
    /// The wear leveler's parameters for a host with `units` units (`wear::WearHost::units`)
    /// and `erases_so_far` erases already done.
    #[must_use]
    pub fn wear_params(&self, units: u32, erases_so_far: u64) -> crate::wear::WearParams {
        let w = &self.config.wear;
        crate::wear::WearParams {
            delta: w.delta.unwrap_or(WEAR_DELTA_DEFAULT),
            adaptive: w.adaptive.unwrap_or(false).then(|| {
                (w.lambda.unwrap_or(WEAR_LAMBDA_DEFAULT), w.session_wear_erases.unwrap_or(1000))
            }),
            threshold: w.threshold.unwrap_or(WEAR_THRESHOLD_DEFAULT),
            set_blocks: w.set_blocks.unwrap_or(1),
            units,
            physical_blocks: self.geometry.blocks,
            erases_so_far,
            seed: self.config.run.seed,
        }
    }

    /// Pages of the page FTL's RAM region: DEB's EBR or DAC's RAM region (0 without one).
    #[must_use]
    pub fn ram_region_pages(&self) -> u32 {
        let c = &self.config;
        let bytes = match c.ftl.placement.as_str() {
            "deb" => c.deb.ebr_size_bytes.unwrap_or(0),
            "dac" => c.dac.ram_region_bytes.unwrap_or(0),
            _ => 0,
        };
        (bytes / self.geometry.page_size_bytes) as u32
    }

    /// Rule 5's threshold as a fraction of the RAM region.
    #[must_use]
    pub fn ram_write_back_threshold(&self) -> f64 {
        let c = &self.config;
        match c.ftl.placement.as_str() {
            "deb" => c.deb.ebr_write_back_threshold,
            _ => c.dac.ram_write_back_threshold,
        }
        .unwrap_or(1.0)
    }

    /// Pages the RAM buffer holds (0 without one).
    #[must_use]
    pub fn buffer_pages(&self) -> u32 {
        let b = &self.config.buffer;
        match (b.kind.as_str(), b.size_bytes) {
            ("none", _) | (_, None) => 0,
            (_, Some(size)) => (size / self.geometry.page_size_bytes) as u32,
        }
    }
}

impl Config {
    /// Parses TOML text. `source` names the file in errors.
    pub fn from_toml(text: &str, source: &str) -> Result<Self, ConfigError> {
        let value: toml::Value = toml::from_str(text).map_err(|e| {
            ConfigError::new("", format!("{source}: {}", toml_error_message(text, &e)))
        })?;
        Self::from_value(value)
    }

    /// Parses a `toml::Value` table (the result of merging files and overrides).
    pub fn from_value(value: toml::Value) -> Result<Self, ConfigError> {
        let text = toml::to_string(&value).map_err(|e| ConfigError::new("", e.to_string()))?;
        toml::from_str::<Config>(&text).map_err(|e| {
            let message = e.message().to_string();
            // serde names the unknown field but not its table: report the best key we have.
            let key = e.span().and_then(|span| key_at(&text, span.start)).unwrap_or_default();
            ConfigError::new(key, message)
        })
    }

    /// Parses JSON (the Python front end's config dicts).
    pub fn from_json(text: &str) -> Result<Self, ConfigError> {
        let json: serde_json::Value =
            serde_json::from_str(text).map_err(|e| ConfigError::new("", e.to_string()))?;
        let value = json_to_toml(&json, "")?;
        Self::from_value(value)
    }

    /// The default config with `key=value` overrides applied (what `nandlab run --set ...` does
    /// without a file).
    pub fn from_overrides<S: AsRef<str>>(overrides: &[S]) -> Result<Self, ConfigError> {
        let mut v = Self::default().to_value();
        let o: Vec<String> = overrides.iter().map(|s| s.as_ref().to_string()).collect();
        apply_overrides(&mut v, &o)?;
        Self::from_value(v)
    }

    /// The config as a TOML value (for merging overrides on top).
    #[must_use]
    pub fn to_value(&self) -> toml::Value {
        toml::Value::try_from(self).expect("a Config always serializes")
    }
}

/// Applies `key=value` overrides to a TOML table. The value is parsed as a TOML value (so
/// `0.9`, `true`, `[1, 2]` keep their types); anything that does not parse is taken as a string.
pub fn apply_overrides(base: &mut toml::Value, overrides: &[String]) -> Result<(), ConfigError> {
    for item in overrides {
        let Some((key, raw)) = item.split_once('=') else {
            return Err(ConfigError::new(item.as_str(), "an override must look like key=value"));
        };
        let key = key.trim();
        let raw = raw.trim();
        if key.is_empty() || key.split('.').any(str::is_empty) {
            return Err(ConfigError::new(key, "empty key or key segment"));
        }
        let value = parse_scalar(raw);
        set_path(base, key, value)?;
    }
    Ok(())
}

fn parse_scalar(raw: &str) -> toml::Value {
    let wrapped = format!("v = {raw}");
    match toml::from_str::<toml::Table>(&wrapped) {
        Ok(mut t) => t.remove("v").unwrap_or_else(|| toml::Value::String(raw.to_string())),
        Err(_) => toml::Value::String(raw.to_string()),
    }
}

fn set_path(root: &mut toml::Value, key: &str, value: toml::Value) -> Result<(), ConfigError> {
    let mut node = root;
    let segments: Vec<&str> = key.split('.').collect();
    for (i, segment) in segments.iter().enumerate() {
        let table = node
            .as_table_mut()
            .ok_or_else(|| ConfigError::new(key, "this key's parent is not a table"))?;
        if i + 1 == segments.len() {
            table.insert((*segment).to_string(), value);
            return Ok(());
        }
        node = table
            .entry((*segment).to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    }
    unreachable!("a key has at least one segment")
}

fn json_to_toml(json: &serde_json::Value, key: &str) -> Result<toml::Value, ConfigError> {
    Ok(match json {
        serde_json::Value::Null => {
            return Err(ConfigError::new(key, "null is not a value: omit the key instead"))
        }
        serde_json::Value::Bool(b) => toml::Value::Boolean(*b),
        serde_json::Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                toml::Value::Integer(i)
            } else if let Some(u) = n.as_u64() {
                toml::Value::Integer(
                    i64::try_from(u).map_err(|_| ConfigError::new(key, "integer too large"))?,
                )
            } else {
                toml::Value::Float(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        serde_json::Value::String(s) => toml::Value::String(s.clone()),
        serde_json::Value::Array(items) => toml::Value::Array(
            items.iter().map(|v| json_to_toml(v, key)).collect::<Result<_, _>>()?,
        ),
        serde_json::Value::Object(map) => {
            let mut table = toml::Table::new();
            for (k, v) in map {
                let child = if key.is_empty() { k.clone() } else { format!("{key}.{k}") };
                if v.is_null() {
                    continue; // None from Python means "use the default".
                }
                table.insert(k.clone(), json_to_toml(v, &child)?);
            }
            toml::Value::Table(table)
        }
    })
}

/// Best-effort dotted key of the TOML line containing byte `offset` of `text`.
fn key_at(text: &str, offset: usize) -> Option<String> {
    let mut table = String::new();
    let mut pos = 0;
    for line in text.lines() {
        let end = pos + line.len();
        let trimmed = line.trim();
        if trimmed.starts_with('[') {
            table = trimmed.trim_matches(|c| c == '[' || c == ']').to_string();
        }
        if offset <= end {
            let name = trimmed.split('=').next().unwrap_or("").trim();
            if trimmed.starts_with('[') || name.is_empty() {
                return Some(table);
            }
            return Some(if table.is_empty() { name.into() } else { format!("{table}.{name}") });
        }
        pos = end + 1;
    }
    None
}

fn check(cond: bool, key: &str, message: impl Into<String>) -> Result<(), ConfigError> {
    if cond {
        Ok(())
    } else {
        Err(ConfigError::new(key, message))
    }
}

fn one_of(value: &str, key: &str, allowed: &[&str]) -> Result<(), ConfigError> {
    check(
        allowed.contains(&value),
        key,
        format!("unknown value {value:?}; expected one of {}", allowed.join(", ")),
    )
}

pub const CLEANING_NAMES: &[&str] = &["greedy", "cost-benefit", "cat", "fifo", "random-d"];
pub const PLACEMENT_NAMES: &[&str] = &["none", "dac", "oracle", "deb"];
pub const WORKLOAD_KINDS: &[&str] = &[
    "sequential",
    "uniform",
    "hotcold",
    "phases",
    "trace",
    "postmark",
    "embedded",
    "media-player",
];

impl Config {
    /// Validates every field and cross-field relation and fills in every default.
    pub fn resolve(&self) -> Result<Resolved, ConfigError> {
        let mut c = self.clone();
        validate_run(&c.run)?;
        let preset = presets::preset(&c.device.preset).ok_or_else(|| {
            ConfigError::new(
                "device.preset",
                format!(
                    "unknown preset {:?}; expected one of {}",
                    c.device.preset,
                    presets::preset_names().join(", ")
                ),
            )
        })?;
        // Block-mapped FTLs map whole logical blocks (SAST: whole groups): a logical size
        // derived from the utilization is rounded down to that granule.
        let granule_blocks = c.ftl.mapping_granule_blocks();
        let d = &mut c.device;
        let page_size_bytes = *d.page_size_bytes.get_or_insert(preset.page_size_bytes);
        let pages_per_block = *d.pages_per_block.get_or_insert(preset.pages_per_block);
        check(d.sector_size_bytes >= 1, "device.sector_size_bytes", "must be at least 1")?;
        check(
            page_size_bytes >= d.sector_size_bytes
                && page_size_bytes.is_multiple_of(d.sector_size_bytes),
            "device.page_size_bytes",
            format!("must be a positive multiple of the sector size {}", d.sector_size_bytes),
        )?;
        check(
            page_size_bytes <= MAX_PAGE_SIZE_BYTES,
            "device.page_size_bytes",
            format!(
                "must be at most {MAX_PAGE_SIZE_BYTES} bytes (1 MiB: flash pages are 512 B to \
                 64 KiB, an effective page striped over a gang a few hundred KiB)"
            ),
        )?;
        check(
            (2..=32_768).contains(&pages_per_block),
            "device.pages_per_block",
            "must be between 2 and 32768",
        )?;
        if let Some(u) = d.utilization {
            check(u > 0.0 && u < 1.0, "device.utilization", "must be in (0, 1)")?;
        }
        let (blocks, logical_pages) = match (d.blocks, d.logical_bytes, d.utilization) {
            (Some(b), Some(lb), Some(u)) => {
                // Over-determined: accepted only when consistent, which is what a resolved
                // config (every result records one) looks like, so results re-run as they are.
                let lp = lb.div_ceil(page_size_bytes);
                let exact = lp as f64 / (f64::from(b) * f64::from(pages_per_block));
                if (exact - u).abs() > 1e-9 {
                    return Err(ConfigError::new(
                        "device.utilization",
                        format!(
                            "device.blocks, device.logical_bytes and device.utilization \
                             over-determine the device and disagree (those blocks and bytes give \
                             utilization {exact:.6}): set two of them"
                        ),
                    ));
                }
                (b, lp)
            }
            (Some(b), Some(lb), None) => (b, lb.div_ceil(page_size_bytes)),
            (b, Some(lb), u) => {
                let lp = lb.div_ceil(page_size_bytes);
                let u = u.unwrap_or(UTILIZATION_DEFAULT);
                let pages = (lp as f64 / u).ceil() as u64;
                let blocks =
                    b.map_or_else(|| u32::try_from(pages.div_ceil(u64::from(pages_per_block))), Ok);
                let blocks = blocks.map_err(|_| {
                    ConfigError::new("device.logical_bytes", "device too large (over 2^32 blocks)")
                })?;
                (blocks, lp)
            }
            (b, None, u) => {
                let blocks = b.unwrap_or(preset.blocks);
                let u = u.unwrap_or(UTILIZATION_DEFAULT);
                let physical = u64::from(blocks) * u64::from(pages_per_block);
                let lp = (physical as f64 * u).floor() as u64;
                let granule = granule_blocks * u64::from(pages_per_block);
                (blocks, if granule > 0 && lp >= granule { lp - lp % granule } else { lp })
            }
        };
        d.blocks = Some(blocks);
        let geometry = Geometry {
            page_size_bytes,
            pages_per_block,
            blocks,
            logical_pages,
            sector_size_bytes: d.sector_size_bytes,
        };
        d.utilization = Some(geometry.utilization());
        d.logical_bytes = Some(geometry.logical_bytes());
        check(blocks >= 4, "device.blocks", "must be at least 4")?;
        check(logical_pages >= 1, "device.logical_bytes", "the device has no logical pages")?;
        check(
            geometry.physical_pages() < u64::from(u32::MAX),
            "device.blocks",
            "more than 2^32 - 1 physical pages are not supported",
        )?;

        let timing = resolve_timing(&mut c.timing, preset.timing);
        validate_timing(&timing)?;

        let f = &mut c.ftl;
        one_of(&f.kind, "ftl.kind", FTL_KINDS)?;
        if f.kind != "page" {
            resolve_hybrid(f, &geometry)?;
            validate_workload(&mut c.workload, &geometry)?;
            validate_serve(&c.serve)?;
            validate_buffer(&mut c.buffer, &geometry)?;
            validate_ram(&mut c, &geometry)?;
            validate_wear(&mut c.wear, preset.endurance_cycles)?;
            return Ok(Resolved {
                config: c,
                geometry,
                timing,
                regions: 1,
                gc_free_blocks_min: 0,
                served: false,
            });
        }
        for (set, key) in [
            (f.log_blocks.is_some(), "ftl.log_blocks"),
            (f.group_data_blocks.is_some(), "ftl.group_data_blocks"),
            (f.group_log_blocks.is_some(), "ftl.group_log_blocks"),
            (f.recycling.is_some(), "ftl.recycling"),
            (f.migration_period.is_some(), "ftl.migration_period"),
        ] {
            check(!set, key, "only the hybrid FTL kinds (bast, sast, fast) use log blocks")?;
        }
        one_of(&f.cleaning, "ftl.cleaning", CLEANING_NAMES)?;
        one_of(&f.placement, "ftl.placement", PLACEMENT_NAMES)?;
        let deb_regions =
            c.deb.stable_time_intervals_s.as_ref().map_or(DEB_INTERVALS_S.len(), Vec::len);
        check(
            f.placement != "deb" || (1..=64).contains(&deb_regions),
            "deb.stable_time_intervals_s",
            "needs 1 to 64 values (one flash region each)",
        )?;
        let default_regions = match f.placement.as_str() {
            "dac" => 4,
            "oracle" => 2,
            "deb" => deb_regions as u32,
            _ => 1,
        };
        let regions = *f.regions.get_or_insert(default_regions);
        check(
            f.placement != "deb" || regions as usize == deb_regions,
            "ftl.regions",
            format!(
                "DEB has one flash region per stable-time interval: deb.stable_time_intervals_s \
                 gives {deb_regions}; leave ftl.regions unset"
            ),
        )?;
        check((1..=64).contains(&regions), "ftl.regions", "must be between 1 and 64")?;
        check(
            f.placement != "none" || regions == 1,
            "ftl.regions",
            "placement \"none\" is one log: use ftl.placement = \"dac\" or \"oracle\" for more",
        )?;
        if let Some(t) = f.time_threshold_s {
            check(t.is_finite() && t >= 0.0, "ftl.time_threshold_s", "must be >= 0")?;
            check(
                f.placement == "dac",
                "ftl.time_threshold_s",
                "only the DAC placement uses a time threshold",
            )?;
        }
        check(f.random_d >= 1, "ftl.random_d", "must be at least 1")?;
        check(f.victim_scan_limit >= 1, "ftl.victim_scan_limit", "must be at least 1")?;
        if f.placement == "oracle" {
            let b = f.oracle_boundaries_passes.get_or_insert_with(|| {
                (0..regions - 1)
                    .map(|i| 4f64.powf(f64::from(i) - f64::from(regions - 2) / 2.0))
                    .collect()
            });
            check(
                b.len() == regions as usize - 1,
                "ftl.oracle_boundaries_passes",
                format!("needs regions - 1 = {} values", regions - 1),
            )?;
            check(
                b.windows(2).all(|w| w[0] < w[1]) && b.iter().all(|v| *v > 0.0),
                "ftl.oracle_boundaries_passes",
                "values must be positive and strictly increasing",
            )?;
        } else {
            check(
                f.oracle_boundaries_passes.is_none(),
                "ftl.oracle_boundaries_passes",
                "only the oracle placement uses boundaries",
            )?;
        }
        let destinations = crate::placement::cleaner_destinations_max(
            &f.placement,
            regions,
            f.time_threshold_s.is_some(),
        );
        let gc_free_blocks_min = *f.gc_free_blocks_min.get_or_insert(destinations + 1);
        check(
            gc_free_blocks_min > destinations,
            "ftl.gc_free_blocks_min",
            format!(
                "must be at least {}: one cleaning step may open a block in each of {destinations} \
                 log(s) before it frees its victim",
                destinations + 1
            ),
        )?;
        // Blocks that can never hold valid data at steady state: the free reserve plus one open
        // block per region. With fewer spare pages than that, the cleaner could find every
        // closed block full of valid pages and make no progress.
        let spare_blocks_min = u64::from(gc_free_blocks_min) + u64::from(regions) + 1;
        let spare_pages = geometry.physical_pages().saturating_sub(logical_pages);
        check(
            spare_pages >= spare_blocks_min * u64::from(pages_per_block),
            "device.utilization",
            format!(
                "leaves {spare_pages} spare pages; the cleaner needs at least \
                 {spare_blocks_min} spare blocks (gc_free_blocks_min + regions + 1); lower the \
                 utilization or add blocks"
            ),
        )?;

        validate_workload(&mut c.workload, &geometry)?;
        validate_serve(&c.serve)?;
        validate_buffer(&mut c.buffer, &geometry)?;
        // The oracle foresees the host's page writes; behind a buffer the FTL sees the buffer's
        // write-backs instead (fewer, reordered, padded), whose future it does not know. Found
        // by the run_small fuzz target (the cursor passed foreseen rewrites).
        check(
            c.ftl.placement != "oracle" || c.buffer.kind == "none",
            "buffer.kind",
            "the oracle placement knows the host's future page writes, not a buffer's \
             write-backs: use buffer.kind = \"none\" with ftl.placement = \"oracle\"",
        )?;
        validate_ram(&mut c, &geometry)?;
        validate_wear(&mut c.wear, preset.endurance_cycles)?;
        Ok(Resolved { config: c, geometry, timing, regions, gc_free_blocks_min, served: false })
    }
}

/// `[buffer]`: a known kind, a size of at least one page; defaults filled in only for the keys
/// the kind uses (a `none` buffer records no size).
fn validate_buffer(b: &mut BufferConfig, g: &Geometry) -> Result<(), ConfigError> {
    one_of(&b.kind, "buffer.kind", crate::buffer::BUFFER_KINDS)?;
    if b.kind == "none" {
        check(
            b.size_bytes.is_none(),
            "buffer.size_bytes",
            "buffer.kind = \"none\" has no buffer: set buffer.kind too",
        )?;
        check(
            b.cflru_window.is_none(),
            "buffer.cflru_window",
            "only buffer.kind = \"cflru\" has a window",
        )?;
        return Ok(());
    }
    let size = *b.size_bytes.get_or_insert(BUFFER_SIZE_BYTES_DEFAULT);
    check(
        size >= g.page_size_bytes,
        "buffer.size_bytes",
        format!("{size} bytes hold no page of {} bytes", g.page_size_bytes),
    )?;
    check(
        size / g.page_size_bytes < u64::from(u32::MAX / 2),
        "buffer.size_bytes",
        "more than 2^31 pages are not supported",
    )?;
    if b.kind == "cflru" {
        let w = *b.cflru_window.get_or_insert(0.5);
        check(w.is_finite() && w > 0.0 && w <= 1.0, "buffer.cflru_window", "must be in (0, 1]")?;
    } else {
        check(
            b.cflru_window.is_none(),
            "buffer.cflru_window",
            "only buffer.kind = \"cflru\" has a window",
        )?;
    }
    Ok(())
}

/// Paper 004's stable-time interval boundaries (seconds, hottest first).
pub const DEB_INTERVALS_S: [f64; 4] = [100.0, 200.0, 300.0, 400.0];
/// Paper 004's EBR: 4 MB.
pub const EBR_SIZE_BYTES_DEFAULT: u64 = 4 << 20;
const RAM_BYTES_MIN_DEFAULT: u64 = 64 << 20;

/// `[deb]`, `[dac]` and `device.ram_bytes`: each placement's keys filled in, other placements'
/// keys rejected; the RAM region and the buffer must fit the device's RAM together.
fn validate_ram(c: &mut Config, g: &Geometry) -> Result<(), ConfigError> {
    let placement = c.ftl.placement.as_str();
    let d = &mut c.deb;
    if placement == "deb" {
        let key = "deb.stable_time_intervals_s";
        let iv = d.stable_time_intervals_s.get_or_insert_with(|| DEB_INTERVALS_S.to_vec());
        check((1..=64).contains(&iv.len()), key, "needs 1 to 64 values (one flash region each)")?;
        check(
            iv.iter().all(|v| v.is_finite() && *v > 0.0),
            key,
            "values must be positive, finite seconds",
        )?;
        if let Some(i) = iv.windows(2).position(|w| w[0] >= w[1]) {
            return Err(ConfigError::new(
                key,
                format!(
                    "must be strictly increasing, hottest region first: value {} ({} s) is \
                     followed by {} s",
                    i,
                    iv[i],
                    iv[i + 1]
                ),
            ));
        }
        d.ebr_size_bytes.get_or_insert(EBR_SIZE_BYTES_DEFAULT);
        let t = *d.ebr_write_back_threshold.get_or_insert(1.0);
        check(
            t.is_finite() && t > 0.0 && t <= 1.0,
            "deb.ebr_write_back_threshold",
            "must be in (0, 1] (a fraction of the EBR)",
        )?;
        d.wear_aware.get_or_insert(true);
    } else {
        for (set, key) in [
            (d.ebr_size_bytes.is_some(), "deb.ebr_size_bytes"),
            (d.stable_time_intervals_s.is_some(), "deb.stable_time_intervals_s"),
            (d.ebr_write_back_threshold.is_some(), "deb.ebr_write_back_threshold"),
            (d.wear_aware.is_some(), "deb.wear_aware"),
        ] {
            check(!set, key, "only ftl.placement = \"deb\" uses it")?;
        }
    }
    let a = &mut c.dac;
    if placement == "dac" {
        if *a.ram_region_bytes.get_or_insert(0) > 0 {
            let t = *a.ram_write_back_threshold.get_or_insert(1.0);
            check(
                t.is_finite() && t > 0.0 && t <= 1.0,
                "dac.ram_write_back_threshold",
                "must be in (0, 1] (a fraction of the RAM region)",
            )?;
        } else {
            check(
                a.ram_write_back_threshold.is_none(),
                "dac.ram_write_back_threshold",
                "there is no RAM region: set dac.ram_region_bytes too",
            )?;
        }
    } else {
        for (set, key) in [
            (a.ram_region_bytes.is_some(), "dac.ram_region_bytes"),
            (a.ram_write_back_threshold.is_some(), "dac.ram_write_back_threshold"),
        ] {
            check(!set, key, "only ftl.placement = \"dac\" uses it")?;
        }
    }
    let (region_key, region_bytes) = match placement {
        "deb" => ("deb.ebr_size_bytes", c.deb.ebr_size_bytes.unwrap_or(0)),
        "dac" => ("dac.ram_region_bytes", c.dac.ram_region_bytes.unwrap_or(0)),
        _ => ("", 0),
    };
    if region_bytes > 0 {
        check(
            region_bytes >= g.page_size_bytes,
            region_key,
            format!("{region_bytes} bytes hold no page of {} bytes", g.page_size_bytes),
        )?;
        check(
            g.physical_pages() + region_bytes / g.page_size_bytes < u64::from(u32::MAX) / 2,
            region_key,
            "the flash pages and the RAM region's pages together must stay below 2^31",
        )?;
    }
    let physical_bytes = g.physical_pages() * g.page_size_bytes;
    let budget = *c.device.ram_bytes.get_or_insert((physical_bytes / 4).max(RAM_BYTES_MIN_DEFAULT));
    let buffer = if c.buffer.kind == "none" { 0 } else { c.buffer.size_bytes.unwrap_or(0) };
    if region_bytes + buffer > budget {
        let key = if region_bytes > 0 { region_key } else { "buffer.size_bytes" };
        let what = match (region_bytes > 0, buffer > 0) {
            (true, true) => format!(
                "the RAM region ({region_bytes} bytes) and the buffer ({buffer} bytes) need {} \
                 bytes of RAM together",
                region_bytes + buffer
            ),
            (true, false) => format!("the RAM region needs {region_bytes} bytes of RAM"),
            _ => format!("the buffer needs {buffer} bytes of RAM"),
        };
        return Err(ConfigError::new(
            key,
            format!(
                "{what}, more than the device's RAM budget device.ram_bytes = {budget}; shrink \
                 it or raise device.ram_bytes"
            ),
        ));
    }
    Ok(())
}

const WEAR_DELTA_DEFAULT: f64 = 16.0;
const WEAR_LAMBDA_DEFAULT: f64 = -0.1;
const WEAR_THRESHOLD_DEFAULT: f64 = 16.0;

/// `[wear]`: a known kind; each kind's keys filled in, other kinds' keys rejected; endurance
/// from the preset unless set.
fn validate_wear(w: &mut WearConfig, preset_cycles: u64) -> Result<(), ConfigError> {
    one_of(&w.kind, "wear.kind", crate::wear::WEAR_KINDS)?;
    w.endurance_cycles.get_or_insert(preset_cycles.min(u64::from(u32::MAX)) as u32);
    let lazy = w.kind == "lazy";
    let only = |set: bool, key: &str, kind: &str| {
        check(!set, key, format!("only wear.kind = \"{kind}\" uses it"))
    };
    if lazy {
        let d = *w.delta.get_or_insert(WEAR_DELTA_DEFAULT);
        check(d.is_finite() && d >= 0.0, "wear.delta", "must be >= 0")?;
        if *w.adaptive.get_or_insert(false) {
            let l = *w.lambda.get_or_insert(WEAR_LAMBDA_DEFAULT);
            check(l.is_finite() && l < 0.0, "wear.lambda", "must be negative (the paper: -0.1)")?;
            let s = *w.session_wear_erases.get_or_insert(1000);
            check(s >= 1, "wear.session_wear_erases", "must be at least 1")?;
        } else {
            for (set, key) in [
                (w.lambda.is_some(), "wear.lambda"),
                (w.session_wear_erases.is_some(), "wear.session_wear_erases"),
            ] {
                check(!set, key, "only adaptive Δ uses it: set wear.adaptive = true too")?;
            }
        }
    } else {
        for (set, key) in [
            (w.delta.is_some(), "wear.delta"),
            (w.adaptive.is_some(), "wear.adaptive"),
            (w.lambda.is_some(), "wear.lambda"),
            (w.session_wear_erases.is_some(), "wear.session_wear_erases"),
        ] {
            only(set, key, "lazy")?;
        }
    }
    if w.kind == "static" {
        let t = *w.threshold.get_or_insert(WEAR_THRESHOLD_DEFAULT);
        check(t.is_finite() && t >= 1.0, "wear.threshold", "must be >= 1")?;
        let s = *w.set_blocks.get_or_insert(1);
        check(s >= 1, "wear.set_blocks", "must be at least 1")?;
    } else {
        only(w.threshold.is_some(), "wear.threshold", "static")?;
        only(w.set_blocks.is_some(), "wear.set_blocks", "static")?;
    }
    Ok(())
}

fn validate_serve(sv: &ServeConfig) -> Result<(), ConfigError> {
    one_of(&sv.store, "serve.store", &["full", "metadata-only"])?;
    one_of(&sv.recovery, "serve.recovery", &["scan", "checkpoint"])?;
    one_of(&sv.ram_region_battery, "serve.ram_region_battery", &["ok", "failed"])?;
    check(
        sv.stats_interval_s.is_finite() && sv.stats_interval_s > 0.0,
        "serve.stats_interval_s",
        "must be > 0",
    )?;
    check(
        sv.checkpoint_interval_s.is_finite() && sv.checkpoint_interval_s > 0.0,
        "serve.checkpoint_interval_s",
        "must be > 0",
    )
}

pub const FTL_KINDS: &[&str] = &["page", "bast", "sast", "fast"];
pub const LOG_BLOCKS_DEFAULT: u32 = 8;
const SAST_GROUP_DATA_BLOCKS: u32 = 4;
const SAST_GROUP_LOG_BLOCKS: u32 = 2;

/// Defaults and checks of the hybrid kinds (SPEC §4). Page-FTL keys must keep their defaults:
/// a hybrid FTL has no cleaner policy, placement or regions.
fn resolve_hybrid(f: &mut FtlConfig, g: &Geometry) -> Result<(), ConfigError> {
    let kind = f.kind.clone();
    let not_page = |key: &str, what: &str| {
        ConfigError::new(
            key,
            format!("{what} belongs to the page FTL; ftl.kind = {kind:?} has none"),
        )
    };
    if f.cleaning != "greedy" {
        return Err(not_page("ftl.cleaning", "victim selection"));
    }
    if f.placement != "none" || f.regions.is_some_and(|r| r != 1) {
        let key = if f.placement != "none" { "ftl.placement" } else { "ftl.regions" };
        return Err(not_page(key, "data placement"));
    }
    for (set, key) in [
        (f.time_threshold_s.is_some(), "ftl.time_threshold_s"),
        (f.gc_free_blocks_min.is_some(), "ftl.gc_free_blocks_min"),
        (f.oracle_boundaries_passes.is_some(), "ftl.oracle_boundaries_passes"),
    ] {
        if set {
            return Err(not_page(key, "this setting"));
        }
    }
    let ppb = u64::from(g.pages_per_block);
    let logical_blocks = g.logical_pages.div_ceil(ppb);
    let log_blocks = *f.log_blocks.get_or_insert(LOG_BLOCKS_DEFAULT);
    let min_logs = if kind == "fast" { 2 } else { 1 };
    check(
        log_blocks >= min_logs,
        "ftl.log_blocks",
        if kind == "fast" {
            "FAST needs at least 2 log blocks: the sequential log and one random log"
        } else {
            "must be at least 1"
        },
    )?;
    let spare = u64::from(g.blocks).saturating_sub(logical_blocks);
    check(
        spare > u64::from(log_blocks),
        "ftl.log_blocks",
        format!(
            "{log_blocks} log blocks need {} spare blocks (one more for a merge's destination),              but the device has {} blocks for {logical_blocks} logical blocks: {spare} spare;              lower ftl.log_blocks or device.utilization, or add blocks",
            u64::from(log_blocks) + 1,
            g.blocks
        ),
    )?;
    if kind == "sast" {
        let n = *f.group_data_blocks.get_or_insert(SAST_GROUP_DATA_BLOCKS);
        let k = *f.group_log_blocks.get_or_insert(SAST_GROUP_LOG_BLOCKS.min(log_blocks));
        check(n >= 1, "ftl.group_data_blocks", "must be at least 1")?;
        check(
            logical_blocks % u64::from(n) == 0,
            "ftl.group_data_blocks",
            format!(
                "groups of {n} logical blocks do not divide the device's {logical_blocks} logical                  blocks; pick a divisor or set device.logical_bytes to a multiple of {} bytes",
                u64::from(n) * ppb * g.page_size_bytes
            ),
        )?;
        check(
            (1..=log_blocks).contains(&k),
            "ftl.group_log_blocks",
            format!("must be between 1 and ftl.log_blocks = {log_blocks}"),
        )?;
    } else {
        for (set, key) in [
            (f.group_data_blocks.is_some(), "ftl.group_data_blocks"),
            (f.group_log_blocks.is_some(), "ftl.group_log_blocks"),
        ] {
            check(!set, key, "only SAST has groups (BAST is N = 1, K = 1)")?;
        }
    }
    let recycling = f.recycling.get_or_insert_with(|| "merge-only".into()).clone();
    one_of(&recycling, "ftl.recycling", crate::ftl::hybrid::recycling::RECYCLING_NAMES)?;
    check(
        recycling == "merge-only" || kind == "bast",
        "ftl.recycling",
        format!(
            "{recycling:?} uses paper 002's migration, which is defined for a log block owned by              one data block: use ftl.kind = \"bast\""
        ),
    )?;
    if recycling == "periodic" {
        let p = *f.migration_period.get_or_insert(g.pages_per_block / 2);
        check(p >= 1, "ftl.migration_period", "must be at least 1")?;
    } else {
        check(
            f.migration_period.is_none(),
            "ftl.migration_period",
            "only ftl.recycling = \"periodic\" uses a migration period",
        )?;
    }
    Ok(())
}

fn resolve_timing(t: &mut TimingConfig, p: Timing) -> Timing {
    let copy = t.copy_page_ns.or(p.copy_page_ns).filter(|&ns| ns > 0);
    let timing = Timing {
        read_page_ns: *t.read_page_ns.get_or_insert(p.read_page_ns),
        program_page_ns: *t.program_page_ns.get_or_insert(p.program_page_ns),
        erase_block_ns: *t.erase_block_ns.get_or_insert(p.erase_block_ns),
        transfer_page_ns: *t.transfer_page_ns.get_or_insert(p.transfer_page_ns),
        copy_page_ns: copy,
        ram_page_ns: *t.ram_page_ns.get_or_insert(p.ram_page_ns),
    };
    t.copy_page_ns = Some(copy.unwrap_or(0));
    timing
}

/// A TOML syntax error as "line L, column C: what" (the parser's message with the position
/// of its span in `text`).
#[must_use]
pub fn toml_error_message(text: &str, e: &toml::de::Error) -> String {
    let Some(span) = e.span() else { return e.message().to_string() };
    let mut end = span.start.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let before = &text[..end];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    format!("line {line}, column {column}: {}", e.message())
}

/// Largest page a device may have: a bound a real device is far inside, and that keeps
/// per-page scratch buffers small.
pub const MAX_PAGE_SIZE_BYTES: u64 = 1 << 20;

/// Longest flash or RAM operation accepted, 10 s (a NOR segment erase, the slowest operation of
/// the presets, takes under 1 s): with simulated time in u64 nanoseconds (584 years), a run
/// would need over 10^9 operations at this bound to overflow, and the device checks that too.
pub const MAX_OPERATION_NS: u64 = 10_000_000_000;

/// Longest stretch of simulated time a synthetic workload's arrivals may span, 10^9 s (about 32
/// years; u64 nanoseconds hold 584 years).
pub const MAX_WORKLOAD_SPAN_S: f64 = 1e9;

fn validate_timing(t: &Timing) -> Result<(), ConfigError> {
    let ops = [
        ("timing.read_page_ns", t.read_page_ns),
        ("timing.program_page_ns", t.program_page_ns),
        ("timing.erase_block_ns", t.erase_block_ns),
        ("timing.transfer_page_ns", t.transfer_page_ns),
        ("timing.copy_page_ns", t.copy_page_ns.unwrap_or(0)),
        ("timing.ram_page_ns", t.ram_page_ns),
    ];
    for (key, ns) in ops {
        check(
            ns <= MAX_OPERATION_NS,
            key,
            format!(
                "{ns} ns is longer than any flash operation: at most {MAX_OPERATION_NS} (10 s)"
            ),
        )?;
    }
    Ok(())
}

fn validate_fraction(v: f64, key: &str, open: bool) -> Result<(), ConfigError> {
    let ok = if open { v > 0.0 && v < 1.0 } else { (0.0..=1.0).contains(&v) };
    check(ok, key, if open { "must be in (0, 1)" } else { "must be in [0, 1]" })
}

/// `[run]`: a sampling interval, when given, is positive (0 would sample on every byte; leave
/// the key unset for no sampling).
fn validate_run(r: &RunConfig) -> Result<(), ConfigError> {
    if let Some(b) = r.sample_every_bytes {
        check(b > 0, "run.sample_every_bytes", "must be > 0 (leave it unset for no sampling)")?;
    }
    if let Some(b) = r.memory_limit_bytes {
        check(
            b > 0,
            "run.memory_limit_bytes",
            "must be > 0 (leave it unset to use the machine's)",
        )?;
    }
    Ok(())
}

fn validate_workload(w: &mut WorkloadConfig, g: &Geometry) -> Result<(), ConfigError> {
    one_of(&w.kind, "workload.kind", WORKLOAD_KINDS)?;
    validate_fraction(w.hot_access_fraction, "workload.hot_access_fraction", true)?;
    validate_fraction(w.hot_data_fraction, "workload.hot_data_fraction", true)?;
    validate_fraction(w.read_fraction, "workload.read_fraction", false)?;
    check(
        w.read_fraction < 1.0,
        "workload.read_fraction",
        "must be below 1: a synthetic workload's length is counted in page writes (reads are \
         extra requests), so a workload of reads only would never end",
    )?;
    one_of(&w.arrival, "workload.arrival", &["closed", "poisson"])?;
    one_of(&w.fit, "workload.fit", &["auto", "error", "fold", "compact"])?;
    one_of(&w.trace_timing, "workload.trace_timing", &["trace", "closed"])?;
    let is_trace = w.kind == "trace";
    // A media-player run warms up by populating its volume, and paper 001's traces write
    // about one volume's worth (Table I: 0.8 to 1.8 × the flash size).
    let is_media = w.kind == "media-player";
    let warmup = *w.warmup_passes.get_or_insert(if is_trace || is_media { 0.0 } else { 1.0 });
    let passes = *w.passes.get_or_insert(if is_trace || is_media { 1.0 } else { 2.0 });
    check(warmup.is_finite() && warmup >= 0.0, "workload.warmup_passes", "must be >= 0")?;
    check(passes.is_finite() && passes > 0.0, "workload.passes", "must be > 0")?;
    check(w.repeat >= 1, "workload.repeat", "must be at least 1 (the measured part runs K times)")?;
    if is_trace {
        check(
            warmup.fract() == 0.0 && passes.fract() == 0.0,
            "workload.passes",
            "for trace workloads, passes and warmup_passes count whole replays of the trace",
        )?;
        check(w.path.is_some(), "workload.path", "a trace workload needs a trace file path")?;
    }
    w.prefill.get_or_insert(true);
    let request_bytes = *w.request_bytes.get_or_insert(g.page_size_bytes);
    check(
        request_bytes >= 1 && request_bytes <= g.logical_bytes(),
        "workload.request_bytes",
        "must be between 1 and the logical capacity",
    )?;
    if let Some(r) = w.arrival_rate_per_s {
        check(r.is_finite() && r > 0.0, "workload.arrival_rate_per_s", "must be > 0")?;
    }
    if let Some(d) = w.duration_s {
        check(d.is_finite() && d > 0.0, "workload.duration_s", "must be > 0")?;
        check(
            d <= MAX_WORKLOAD_SPAN_S,
            "workload.duration_s",
            format!("must be at most {MAX_WORKLOAD_SPAN_S:.0e} s (simulated time is u64 ns)"),
        )?;
    }
    if w.arrival == "poisson" {
        check(
            w.arrival_rate_per_s.is_some() != w.duration_s.is_some(),
            "workload.arrival_rate_per_s",
            "poisson arrivals need exactly one of workload.arrival_rate_per_s or \
             workload.duration_s",
        )?;
    }
    validate_applicable(w)?;
    if w.kind == "phases" {
        let phases = w.phases.get_or_insert_with(default_phases);
        check(!phases.is_empty(), "workload.phases", "needs at least one phase")?;
        for (i, p) in phases.iter_mut().enumerate() {
            let key = format!("workload.phases[{i}]");
            one_of(&p.kind, &format!("{key}.kind"), &["uniform", "hotcold"])?;
            if p.kind == "hotcold" {
                let x = *p.hot_access_fraction.get_or_insert(w.hot_access_fraction);
                let y = *p.hot_data_fraction.get_or_insert(w.hot_data_fraction);
                validate_fraction(x, &format!("{key}.hot_access_fraction"), true)?;
                validate_fraction(y, &format!("{key}.hot_data_fraction"), true)?;
            }
            check(
                p.bytes.is_some() != p.passes.is_some(),
                &format!("{key}.passes"),
                "each phase needs exactly one of bytes or passes",
            )?;
            if let Some(v) = p.passes {
                check(v.is_finite() && v > 0.0, &format!("{key}.passes"), "must be > 0")?;
            }
        }
    }
    if let Some(c) = w.compact_chunk_bytes {
        check(
            c >= g.page_size_bytes && c % g.page_size_bytes == 0,
            "workload.compact_chunk_bytes",
            "must be a positive multiple of the page size",
        )?;
    }
    if is_media {
        let media = w.media.get_or_insert_with(|| "camera".into());
        one_of(media, "workload.media", MEDIA_NAMES)?;
    } else {
        check(
            w.media.is_none(),
            "workload.media",
            "only workload.kind = \"media-player\" plays media",
        )?;
    }
    if matches!(w.kind.as_str(), "postmark" | "embedded" | "media-player") {
        validate_fs(w, g)?;
    }
    Ok(())
}

/// Keys a workload kind does not use are errors, not silently ignored: the trace keys for a
/// synthetic kind, `[workload.fs]` for a kind without a file system, phases for a kind without
/// phases, a Poisson rate or duration with closed arrivals. (Only keys resolution never fills
/// are checked, so a resolved config, which every result records, resolves again.)
fn validate_applicable(w: &WorkloadConfig) -> Result<(), ConfigError> {
    let not_for = |set: bool, key: &str, why: &str| {
        check(!set, key, format!("does not apply to workload.kind = {:?}: {why}", w.kind))
    };
    if w.kind != "trace" {
        let trace_only = "only a trace workload (workload.kind = \"trace\") takes it";
        not_for(w.path.is_some(), "workload.path", trace_only)?;
        not_for(w.format.is_some(), "workload.format", trace_only)?;
        not_for(w.device.is_some(), "workload.device", trace_only)?;
        not_for(w.fit != "auto", "workload.fit", trace_only)?;
        not_for(w.compact_chunk_bytes.is_some(), "workload.compact_chunk_bytes", trace_only)?;
        not_for(w.trace_timing != "trace", "workload.trace_timing", trace_only)?;
    }
    if !matches!(w.kind.as_str(), "postmark" | "embedded" | "media-player") {
        not_for(
            w.fs.is_some(),
            "workload.fs",
            "only the file-system workloads (postmark, embedded, media-player) have a volume",
        )?;
    }
    if w.kind != "phases" {
        not_for(
            w.phases.is_some(),
            "workload.phases",
            "only workload.kind = \"phases\" has phases",
        )?;
    }
    if w.arrival == "closed" {
        let why = "closed arrivals issue each request when the previous one completes; set \
                   workload.arrival = \"poisson\" for timed arrivals";
        check(w.arrival_rate_per_s.is_none(), "workload.arrival_rate_per_s", why)?;
        check(w.duration_s.is_none(), "workload.duration_s", why)?;
    }
    Ok(())
}

/// `[workload.fs]` of the file-system workloads: fills the kind's defaults, checks each key and
/// that the FAT volume can hold the files.
fn validate_fs(w: &mut WorkloadConfig, g: &Geometry) -> Result<(), ConfigError> {
    check(
        w.arrival == "closed",
        "workload.arrival",
        "postmark, embedded and media-player workloads are closed-loop (use arrival = \"closed\")",
    )?;
    if w.kind == "media-player" {
        return validate_media_fs(w, g);
    }
    let embedded = w.kind == "embedded";
    let fs = w.fs.get_or_insert_with(FsConfig::default);
    check(
        fs.fill_fraction.is_none(),
        "workload.fs.fill_fraction",
        "only workload.kind = \"media-player\" fills its volume to a high-water mark",
    )?;
    check(
        fs.delete_order.is_none(),
        "workload.fs.delete_order",
        "only workload.kind = \"media-player\" deletes files to make room",
    )?;
    let p = fs.params(&w.kind);
    check(
        p.cluster_bytes >= 512 && p.cluster_bytes.is_multiple_of(512),
        "workload.fs.cluster_bytes",
        "must be a positive multiple of 512",
    )?;
    check(p.files >= 1, "workload.fs.files", "must be at least 1")?;
    check(p.file_bytes_max >= 1, "workload.fs.file_bytes_max", "must be at least 1")?;
    check(
        p.data_align_bytes >= 512 && p.data_align_bytes.is_multiple_of(512),
        "workload.fs.data_align_bytes",
        "must be a positive multiple of 512",
    )?;
    fs.cluster_bytes = Some(p.cluster_bytes);
    fs.data_align_bytes = Some(p.data_align_bytes);
    fs.files = Some(p.files);
    fs.file_bytes_max = Some(p.file_bytes_max);
    fs.transactions = Some(p.transactions);
    if embedded {
        check(p.record_bytes >= 1, "workload.fs.record_bytes", "must be at least 1")?;
        check(
            p.record_bytes <= p.file_bytes_max,
            "workload.fs.record_bytes",
            "must be at most workload.fs.file_bytes_max",
        )?;
        fs.record_bytes = Some(p.record_bytes);
    } else {
        check(p.file_bytes_min >= 1, "workload.fs.file_bytes_min", "must be at least 1")?;
        check(
            p.file_bytes_min <= p.file_bytes_max,
            "workload.fs.file_bytes_min",
            "must be at most workload.fs.file_bytes_max",
        )?;
        validate_fraction(p.create_bias, "workload.fs.create_bias", false)?;
        validate_fraction(p.read_bias, "workload.fs.read_bias", false)?;
        fs.directories = Some(p.directories);
        fs.file_bytes_min = Some(p.file_bytes_min);
        fs.create_bias = Some(p.create_bias);
        fs.read_bias = Some(p.read_bias);
    }
    crate::workload::fat::check_volume(&w.kind, &p, g)?;
    Ok(())
}

/// `[workload.fs]` of `media-player`: the keys it uses get the defaults of `workload.media`;
/// the Postmark/embedded keys it does not use are errors.
fn validate_media_fs(w: &mut WorkloadConfig, g: &Geometry) -> Result<(), ConfigError> {
    let media = w.media.clone().unwrap_or_else(|| "camera".into());
    let fs = w.fs.get_or_insert_with(FsConfig::default);
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
    let p = fs.media_params(&media);
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
    crate::workload::media::check_volume(&p, g)?;
    Ok(())
}

/// The DAC paper's server run: after the prefill, four phases of equal length alternating
/// 90/10 locality and uniform access. Each phase writes 40 MB onto 24 MB × 0.9 of data in the
/// paper, i.e. 1.85 passes over the logical space.
fn default_phases() -> Vec<PhaseConfig> {
    let passes = 40.0 / (24.0 * 0.9);
    ["hotcold", "uniform", "hotcold", "uniform"]
        .iter()
        .map(|k| PhaseConfig {
            kind: (*k).into(),
            hot_access_fraction: (*k == "hotcold").then_some(0.9),
            hot_data_fraction: (*k == "hotcold").then_some(0.1),
            bytes: None,
            passes: Some(passes),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(overrides: &[&str]) -> Result<Resolved, ConfigError> {
        Config::from_overrides(overrides)?.resolve()
    }

    #[test]
    fn defaults_resolve() {
        let r = resolve(&[]).unwrap();
        assert_eq!(r.geometry.blocks, 4096);
        assert_eq!(r.geometry.pages_per_block, 64);
        assert_eq!(r.geometry.logical_pages, (4096.0 * 64.0 * 0.8f64).floor() as u64);
        assert_eq!(r.regions, 1);
        assert_eq!(r.gc_free_blocks_min, 2);
        let r = resolve(&["ftl.placement=dac", "ftl.time_threshold_s=60"]).unwrap();
        assert_eq!(r.gc_free_blocks_min, 3);
        let r = resolve(&["ftl.placement=oracle", "ftl.regions=4"]).unwrap();
        assert_eq!(r.gc_free_blocks_min, 5);
        let e = resolve(&["ftl.placement=oracle", "ftl.gc_free_blocks_min=2"]).unwrap_err();
        assert_eq!(e.key, "ftl.gc_free_blocks_min");
    }

    #[test]
    fn overrides_keep_types() {
        let r = resolve(&["device.utilization=0.9", "ftl.placement=dac", "run.seed=7"]).unwrap();
        assert_eq!(r.regions, 4);
        assert_eq!(r.config.run.seed, 7);
        assert!((r.geometry.utilization() - 0.9).abs() < 1e-5);
    }

    #[test]
    fn errors_name_the_key() {
        let e = resolve(&["ftl.cleaning=lru"]).unwrap_err();
        assert_eq!(e.key, "ftl.cleaning");
        let e = resolve(&["device.utilization=1.5"]).unwrap_err();
        assert_eq!(e.key, "device.utilization");
        let e = resolve(&["device.bogus=1"]).unwrap_err();
        assert!(e.to_string().contains("bogus"), "{e}");
        let e = resolve(&["device.utilization=0.9995"]).unwrap_err();
        assert_eq!(e.key, "device.utilization");
        let e = resolve(&["ftl.regions=3"]).unwrap_err();
        assert_eq!(e.key, "ftl.regions");
        let e = resolve(&["device.page_size_bytes=1000"]).unwrap_err();
        assert_eq!(e.key, "device.page_size_bytes");
        let e = resolve(&["workload.kind=trace"]).unwrap_err();
        assert_eq!(e.key, "workload.path");
    }

    #[test]
    fn a_resolved_config_resolves_to_itself() {
        let r = resolve(&["device.utilization=0.85", "ftl.placement=oracle"]).unwrap();
        let again = r.config.resolve().unwrap();
        assert_eq!(again.config, r.config);
        assert_eq!(again.geometry, r.geometry);
        let e = resolve(&[
            "device.blocks=64",
            "device.logical_bytes=1048576",
            "device.utilization=0.5",
        ])
        .unwrap_err();
        assert_eq!(e.key, "device.utilization");
    }

    #[test]
    fn logical_bytes_sizes_the_device() {
        let r = resolve(&["device.logical_bytes=104857600", "device.utilization=0.5"]).unwrap();
        assert_eq!(r.geometry.logical_pages, 25_600);
        assert_eq!(r.geometry.blocks, 800);
    }

    #[test]
    fn oracle_default_boundaries() {
        let r = resolve(&["ftl.placement=oracle", "ftl.regions=4"]).unwrap();
        assert_eq!(r.config.ftl.oracle_boundaries_passes, Some(vec![0.25, 1.0, 4.0]));
        let r = resolve(&["ftl.placement=oracle"]).unwrap();
        assert_eq!(r.config.ftl.oracle_boundaries_passes, Some(vec![1.0]));
    }

    #[test]
    fn json_config() {
        let c = Config::from_json(r#"{"device": {"blocks": 64, "utilization": null}}"#).unwrap();
        assert_eq!(c.device.blocks, Some(64));
        let e = Config::from_json(r#"{"ftl": {"nope": 1}}"#).unwrap_err();
        assert!(e.to_string().contains("nope"));
    }
}
