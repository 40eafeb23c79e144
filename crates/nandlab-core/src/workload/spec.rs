//! The workload family's configuration: the raw `[workload]` table (the keys every kind shares;
//! the kinds' own keys are declared in `kinds`), its checks, and the FAT volume's
//! `[workload.fs]` table of the file-system kinds.

use serde::{Deserialize, Serialize};

use crate::error::ConfigError;
use crate::flash::Geometry;
use crate::spec::{check, fraction as validate_fraction, one_of, ExtraKeys};

/// `[workload]`: the keys every workload kind shares. A kind's own keys (`hot_access_fraction`,
/// `phases`, `path`, `fs`, `media`, ...) are declared in its file (`kinds`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct WorkloadConfig {
    /// `sequential`, `uniform`, `hotcold`, `phases`, `trace`, `postmark`, `embedded`,
    /// `media-player` (`kinds`).
    pub kind: String,
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
    /// Closed-loop arrivals: requests kept outstanding at once (the host's queue depth; a new
    /// request arrives when one completes). Open-loop arrivals (`poisson`, `fixed`, trace
    /// timestamps) keep their times and take no queue depth. Default 1.
    pub queue_depth: u32,
    /// The kinds' parameters (`spec::Params`).
    #[serde(flatten)]
    pub extra: ExtraKeys,
}

impl WorkloadConfig {
    /// A kind's parameter as recorded (`None`: unset, or not of type `T`), e.g. the volume
    /// (`param::<FsConfig>("fs")`) after resolution.
    #[must_use]
    pub fn param<T: serde::de::DeserializeOwned>(&self, key: &str) -> Option<T> {
        let v = self.extra.get(key)?.clone()?;
        serde_json::from_value(v).ok()
    }
}

impl Default for WorkloadConfig {
    fn default() -> Self {
        Self {
            kind: "uniform".into(),
            warmup_passes: None,
            passes: None,
            repeat: 1,
            prefill: None,
            request_bytes: None,
            read_fraction: 0.0,
            arrival: "closed".into(),
            arrival_rate_per_s: None,
            duration_s: None,
            queue_depth: 1,
            extra: ExtraKeys::new(),
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
    /// The effective values for `postmark` or, `embedded`, the embedded workload.
    #[must_use]
    pub fn params(&self, embedded: bool) -> FsParams {
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

/// Largest `workload.queue_depth`: far beyond NVMe's practical depths (a few thousand), small
/// enough that the in-flight bookkeeping stays trivial.
pub const QUEUE_DEPTH_MAX: u32 = 65_536;

/// Longest stretch of simulated time a synthetic workload's arrivals may span, 10^9 s (about 32
/// years; u64 nanoseconds hold 584 years).
pub const MAX_WORKLOAD_SPAN_S: f64 = 1e9;

/// The shared keys: fractions, arrivals, lengths (with the kind's `default_passes`), the queue
/// depth.
pub(super) fn validate_shared(
    w: &mut WorkloadConfig,
    g: &Geometry,
    default_passes: (f64, f64),
) -> Result<(), ConfigError> {
    validate_fraction(w.read_fraction, "workload.read_fraction", false)?;
    check(
        w.read_fraction < 1.0,
        "workload.read_fraction",
        "must be below 1: a synthetic workload's length is counted in page writes (reads are \
         extra requests), so a workload of reads only would never end",
    )?;
    one_of(&w.arrival, "workload.arrival", &["closed", "poisson", "fixed"])?;
    let warmup = *w.warmup_passes.get_or_insert(default_passes.0);
    let passes = *w.passes.get_or_insert(default_passes.1);
    check(warmup.is_finite() && warmup >= 0.0, "workload.warmup_passes", "must be >= 0")?;
    check(passes.is_finite() && passes > 0.0, "workload.passes", "must be > 0")?;
    check(w.repeat >= 1, "workload.repeat", "must be at least 1 (the measured part runs K times)")?;
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
    if w.arrival == "closed" {
        let why = "closed arrivals issue each request when one in flight completes; set \
                   workload.arrival = \"poisson\" or \"fixed\" for timed arrivals";
        check(w.arrival_rate_per_s.is_none(), "workload.arrival_rate_per_s", why)?;
        check(w.duration_s.is_none(), "workload.duration_s", why)?;
    } else {
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
    check(
        w.queue_depth == 1 || w.arrival == "closed",
        "workload.queue_depth",
        "applies to closed-loop arrivals only: open-loop arrivals (poisson, fixed, a trace's \
         timestamps) keep their times, however many requests that leaves in flight; use \
         workload.arrival = \"closed\" (traces: workload.trace_timing = \"closed\")",
    )
}
