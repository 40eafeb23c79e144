//! The workload family's configuration: the raw `[workload]` table (with `[workload.fs]` and
//! phases), its validation and defaults per kind, and the typed `WorkloadSpec` the generators
//! are built from (`Workload::new`, `Repeated::new`).

use serde::{Deserialize, Serialize};

use crate::error::ConfigError;
use crate::flash::Geometry;
use crate::spec::{check, fraction as validate_fraction, one_of};

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
    /// `closed` (next request when one in flight completes, `queue_depth` in flight),
    /// `poisson` (open loop, exponential gaps) or `fixed` (open loop, one every 1/rate s).
    pub arrival: String,
    /// Poisson or fixed arrival rate; alternatively `workload.duration_s` spreads the requests
    /// over that time.
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
    /// `movie` (FAB paper, Table I). Default `camera`; no other kind takes it.
    pub media: Option<String>,
    /// `[workload.fs]`: the FAT volume and file-system workload of `postmark`, `embedded` and
    /// `media-player`.
    pub fs: Option<FsConfig>,
    /// Closed-loop arrivals: requests kept outstanding at once (the host's queue depth; a new
    /// request arrives when one completes). Open-loop arrivals (`poisson`, `fixed`, trace
    /// timestamps) keep their times and take no queue depth. Default 1.
    pub queue_depth: u32,
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
            queue_depth: 1,
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

/// The media players of `workload.media` (FAB paper, Table I).
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
    /// A trace replay (`workload.kind = "trace"`), which the runner reads from its file.
    #[must_use]
    pub fn is_trace(&self) -> bool {
        self.kind == "trace"
    }

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

/// `workload.kind` values.
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

/// Largest `workload.queue_depth`: far beyond NVMe's practical depths (a few thousand), small
/// enough that the in-flight bookkeeping stays trivial.
pub const QUEUE_DEPTH_MAX: u32 = 65_536;

/// Longest stretch of simulated time a synthetic workload's arrivals may span, 10^9 s (about 32
/// years; u64 nanoseconds hold 584 years).
pub const MAX_WORKLOAD_SPAN_S: f64 = 1e9;

/// A resolved workload: the filled `[workload]` table, the device it addresses and the run's
/// seed — everything a generator needs.
#[derive(Clone, Debug)]
pub struct WorkloadSpec {
    pub config: WorkloadConfig,
    pub geometry: Geometry,
    pub seed: u64,
}

impl WorkloadSpec {
    /// `[workload]` resolved for a device of `g` (defaults of its kind filled in, keys other
    /// kinds use refused).
    pub fn resolve(w: &mut WorkloadConfig, g: &Geometry, seed: u64) -> Result<Self, ConfigError> {
        validate_workload(w, g)?;
        Ok(Self { config: w.clone(), geometry: *g, seed })
    }

    /// A trace replay (generated by `nandlab-run`, not here).
    #[must_use]
    pub fn is_trace(&self) -> bool {
        self.config.is_trace()
    }
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
    one_of(&w.arrival, "workload.arrival", &["closed", "poisson", "fixed"])?;
    one_of(&w.fit, "workload.fit", &["auto", "error", "fold", "compact"])?;
    one_of(&w.trace_timing, "workload.trace_timing", &["trace", "closed"])?;
    let is_trace = w.kind == "trace";
    // A media-player run warms up by populating its volume, and the FAB paper's traces write
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
    if w.arrival != "closed" {
        check(
            w.arrival_rate_per_s.is_some() != w.duration_s.is_some(),
            "workload.arrival_rate_per_s",
            format!(
                "{} arrivals need exactly one of workload.arrival_rate_per_s or \
                 workload.duration_s",
                w.arrival
            ),
        )?;
    }
    check(
        (1..=QUEUE_DEPTH_MAX).contains(&w.queue_depth),
        "workload.queue_depth",
        format!("must be between 1 and {QUEUE_DEPTH_MAX}"),
    )?;
    let open_loop = w.arrival != "closed" || (is_trace && w.trace_timing == "trace");
    check(
        w.queue_depth == 1 || !open_loop,
        "workload.queue_depth",
        "applies to closed-loop arrivals only: open-loop arrivals (poisson, fixed, a trace's \
         timestamps) keep their times, however many requests that leaves in flight; use \
         workload.arrival = \"closed\" (traces: workload.trace_timing = \"closed\")",
    )?;
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
        let why = "closed arrivals issue each request when one in flight completes; set \
                   workload.arrival = \"poisson\" or \"fixed\" for timed arrivals";
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
