//! # Benchmark suite generators (benchmarks paper §5.2; docs/ALGORITHMS.md §8)
//!
//! The benchmarks paper (docs/PAPERS.md) sorts user workloads into suites by what they stress —
//! Transfer (bulk sequential writes of new data: its Copy), Mapping (small writes scattered over a
//! wide area: its Install Linux), GC (rewrites of hot and cold data mixed: its Browser) and Buffer
//! (rewrites a RAM write buffer absorbs) — and characterises each by the figures of its Table 3,
//! which the analyser (`analyze`) measures. These generators write synthetic traces that land on
//! such figures: each suite is a parameter set (defaults: the paper's Table 3 row) of one seeded
//! generator, and the analyser checks them (tests: within ±2 points).
//!
//! ## The generator
//!
//! Writes only (the paper replays writes), one device, arrivals with exponential gaps. Each
//! write comes from one of three streams:
//!
//! - **sequential**: continues where the previous sequential write ended, into space never
//!   written (a file being copied). The stream starts at `partition_offset_bytes`, so its
//!   writes' alignment is that offset's (63 sectors, 32,256 bytes, by default: the MBR
//!   partition of the paper's Windows XP hosts, which is why Table 3 finds 0 % aligned);
//! - **fresh**: new data at a random place (a new file, an ext group's header area), never
//!   sequential;
//! - **rewrite**: data written before, again: with probability `hot_fraction` one of the
//!   `hot_extents` most recently written pieces (hot), else any piece written so far (cold) —
//!   the hot/cold mix of the life-cycle view.
//!
//! Which stream writes next, and whether a non-sequential write is 4 KiB aligned, is drawn
//! at random with a probability that starts at the target and is corrected by the running
//! deficit (`p = target + gain × (target × n − achieved)`, clamped), so the achieved sequential
//! ratio (by count), rewrite ratio (by bytes) and alignment ratio (by count) track their
//! targets to within a few writes while the choice stays random. Candidate addresses that
//! would accidentally count as sequential (starting where one of the last 10 writes ended) or
//! as a rewrite (a fresh write over written space) are drawn again. `area_bytes` of the
//! address space is used, in `groups` groups (ext-style block groups: fresh writes go to the
//! first `group_header_bytes` of a random group when `group_header_bytes` > 0).

use crate::{TraceOp, TraceRecord};

/// The suites.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SuiteKind {
    /// Bulk sequential writes of new data (the paper's Copy).
    Transfer,
    /// Small writes scattered over a wide area (the paper's Install Linux).
    Mapping,
    /// Rewrites of hot and cold data mixed (the paper's Browser).
    Gc,
    /// Rewrites that come back within milliseconds (ours).
    Buffer,
}

/// The names `nandlab suite` takes.
pub const SUITE_NAMES: &[&str] = &["transfer", "mapping", "gc", "buffer"];

impl SuiteKind {
    /// The suite `name` (one of `SUITE_NAMES`) names.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "transfer" => Some(Self::Transfer),
            "mapping" => Some(Self::Mapping),
            "gc" => Some(Self::Gc),
            "buffer" => Some(Self::Buffer),
            _ => None,
        }
    }

    /// The suite's name in `SUITE_NAMES`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Transfer => "transfer",
            Self::Mapping => "mapping",
            Self::Gc => "gc",
            Self::Buffer => "buffer",
        }
    }
}

/// A suite's parameters (every one can be overridden: `SuiteParams::set`).
#[derive(Clone, Debug, PartialEq)]
pub struct SuiteParams {
    /// Which suite's defaults these started from.
    pub kind: SuiteKind,
    /// Seed of the generator's random choices.
    pub seed: u64,
    /// Bytes to write in all.
    pub write_bytes: u64,
    /// Address space the writes may use.
    pub area_bytes: u64,
    /// Target rewrite ratio (bytes, in [0, 1]; the analyser's definition).
    pub rewrite_ratio: f64,
    /// Target sequential ratio (writes, in [0, 1]).
    pub sequential_ratio: f64,
    /// Target alignment ratio (writes 4 KiB aligned in offset and length, in [0, 1]).
    pub alignment_ratio: f64,
    /// Request sizes of the sequential and fresh streams: (bytes, weight).
    pub request_bytes: Vec<(u64, f64)>,
    /// Request sizes of the rewrite stream.
    pub rewrite_request_bytes: Vec<(u64, f64)>,
    /// Where the sequential stream starts (its writes' alignment).
    pub partition_offset_bytes: u64,
    /// Share of rewrites that go to recently written pieces.
    pub hot_fraction: f64,
    /// Recent pieces that count as hot.
    pub hot_extents: usize,
    /// ext-style block groups (fresh writes go to a group's header area when
    /// `group_header_bytes` > 0).
    pub groups: u64,
    /// Bytes at the start of each group that fresh writes go to (0: anywhere).
    pub group_header_bytes: u64,
    /// Mean gap between writes.
    pub interarrival_ns: u64,
}

const KIB: u64 = 1024;
const MIB: u64 = 1024 * 1024;

impl SuiteParams {
    /// The suite's defaults: the benchmarks paper's Table 3 row for it (Transfer: Copy, GC:
    /// Browser, Mapping: Install Linux; Buffer: ours, short rewrites of small writes).
    #[must_use]
    pub fn new(kind: SuiteKind) -> Self {
        let base = Self {
            kind,
            seed: 1,
            write_bytes: 256 * MIB,
            area_bytes: 16 * 1024 * MIB,
            rewrite_ratio: 0.0,
            sequential_ratio: 0.0,
            alignment_ratio: 0.0,
            request_bytes: vec![(4 * KIB, 1.0)],
            rewrite_request_bytes: vec![(4 * KIB, 1.0)],
            partition_offset_bytes: 63 * 512,
            hot_fraction: 0.5,
            hot_extents: 64,
            groups: 1,
            group_header_bytes: 0,
            interarrival_ns: 1_000_000,
        };
        match kind {
            // Copy: 0.1 % rewrite, 96 % sequential, 64 KiB, 0 % aligned; the rewrites are
            // directory and allocation-table updates.
            SuiteKind::Transfer => Self {
                rewrite_ratio: 0.001,
                sequential_ratio: 0.96,
                request_bytes: vec![(64 * KIB, 1.0)],
                hot_fraction: 0.9,
                ..base
            },
            // Install Linux: 18 % rewrite, 25 % sequential, 4 KiB and 128 KiB, 0 % aligned,
            // scattered over ext3 group headers (128 MiB groups) of a wide area.
            SuiteKind::Mapping => Self {
                rewrite_ratio: 0.18,
                sequential_ratio: 0.25,
                request_bytes: vec![(4 * KIB, 0.7), (128 * KIB, 0.3)],
                groups: 128,
                group_header_bytes: 4 * MIB,
                ..base
            },
            // Browser: 80 % rewrite, 4 % sequential, 4 KiB, 31 % aligned, hot and cold mixed.
            SuiteKind::Gc => Self {
                rewrite_ratio: 0.80,
                sequential_ratio: 0.04,
                alignment_ratio: 0.31,
                area_bytes: 2 * 1024 * MIB,
                write_bytes: 64 * MIB,
                ..base
            },
            // Ours: small writes, 40 % of the bytes rewritten within milliseconds of their
            // last write (a log or index file updated in place): what a RAM buffer absorbs.
            SuiteKind::Buffer => Self {
                rewrite_ratio: 0.40,
                sequential_ratio: 0.50,
                hot_fraction: 1.0,
                hot_extents: 8,
                write_bytes: 64 * MIB,
                interarrival_ns: 100_000,
                ..base
            },
        }
    }

    /// Overrides one parameter by name (`--set key=value`); an unknown key or a bad value is
    /// an error naming it. Sizes are `BYTES[:WEIGHT],...`.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        let bad = |what: &str| format!("suite parameter {key}: {what}, not {value:?}");
        let int = || value.parse::<u64>().map_err(|_| bad("expected an integer"));
        let share = || {
            value
                .parse::<f64>()
                .ok()
                .filter(|v| (0.0..=1.0).contains(v))
                .ok_or_else(|| bad("expected a number in [0, 1]"))
        };
        match key {
            "seed" => self.seed = int()?,
            "write_bytes" => self.write_bytes = int()?,
            "area_bytes" => self.area_bytes = int()?,
            "rewrite_ratio" => self.rewrite_ratio = share()?,
            "sequential_ratio" => self.sequential_ratio = share()?,
            "alignment_ratio" => self.alignment_ratio = share()?,
            "hot_fraction" => self.hot_fraction = share()?,
            "hot_extents" => self.hot_extents = int()? as usize,
            "partition_offset_bytes" => self.partition_offset_bytes = int()?,
            "groups" => self.groups = int()?,
            "group_header_bytes" => self.group_header_bytes = int()?,
            "interarrival_ns" => self.interarrival_ns = int()?,
            "request_bytes" => self.request_bytes = sizes(value).map_err(|e| bad(&e))?,
            "rewrite_request_bytes" => {
                self.rewrite_request_bytes = sizes(value).map_err(|e| bad(&e))?;
            }
            _ => {
                return Err(format!(
                    "unknown suite parameter {key:?}; expected one of {}",
                    PARAM_NAMES.join(", ")
                ))
            }
        }
        Ok(())
    }

    /// Checks the parameters fit together.
    pub fn validate(&self) -> Result<(), String> {
        let check = |ok: bool, msg: String| if ok { Ok(()) } else { Err(msg) };
        check(self.write_bytes > 0, "write_bytes must be positive".into())?;
        let all = self.request_bytes.iter().chain(&self.rewrite_request_bytes);
        for &(b, w) in all {
            check(
                b > 0 && b.is_multiple_of(512) && b <= 64 * MIB && w > 0.0,
                format!("request sizes must be positive multiples of 512 up to 64 MiB, weights positive (got {b}:{w})"),
            )?;
        }
        check(self.groups >= 1, "groups must be at least 1".into())?;
        let group = self.area_bytes / self.groups;
        check(
            self.group_header_bytes <= group,
            format!("group_header_bytes must fit in a group of {group} bytes"),
        )?;
        check(self.hot_extents >= 1, "hot_extents must be at least 1".into())?;
        // Fresh data never overwrites: the area must hold everything written fresh, with room
        // to spare for random placement.
        check(
            self.area_bytes >= self.write_bytes.saturating_mul(4).max(64 * MIB),
            format!(
                "area_bytes ({}) must be at least 4 x write_bytes ({}) and 64 MiB",
                self.area_bytes, self.write_bytes
            ),
        )?;
        // The stream starts at the partition offset: at least half the area must follow it.
        check(
            self.partition_offset_bytes < self.area_bytes / 2,
            format!(
                "partition_offset_bytes ({}) must be less than half of area_bytes ({})",
                self.partition_offset_bytes, self.area_bytes
            ),
        )?;
        Ok(())
    }
}

/// The parameter names of `SuiteParams::set`.
pub const PARAM_NAMES: &[&str] = &[
    "seed",
    "write_bytes",
    "area_bytes",
    "rewrite_ratio",
    "sequential_ratio",
    "alignment_ratio",
    "request_bytes",
    "rewrite_request_bytes",
    "partition_offset_bytes",
    "hot_fraction",
    "hot_extents",
    "groups",
    "group_header_bytes",
    "interarrival_ns",
];

fn sizes(v: &str) -> Result<Vec<(u64, f64)>, String> {
    v.split(',')
        .map(|part| {
            let (b, w) = part.split_once(':').unwrap_or((part, "1"));
            let b = b.trim().parse::<u64>().map_err(|_| format!("bad size {b:?}"))?;
            let w = w.trim().parse::<f64>().map_err(|_| format!("bad weight {w:?}"))?;
            Ok((b, w))
        })
        .collect()
}

/// SplitMix64: small, seeded, reproducible across platforms.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn below(&mut self, n: u64) -> u64 {
        // Multiply-shift: bias below 2^-64 × n, irrelevant here.
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
    }
    fn pick(&mut self, sizes: &[(u64, f64)]) -> u64 {
        let total: f64 = sizes.iter().map(|s| s.1).sum();
        let mut x = self.unit() * total;
        for &(b, w) in sizes {
            if x < w {
                return b;
            }
            x -= w;
        }
        sizes.last().expect("sizes are not empty").0
    }
}

/// How strongly the running deficit corrects a choice (per write of deficit).
const GAIN: f64 = 0.05;
/// Writes back a write may follow and count as sequential (the analyser's default).
const WINDOW: usize = 10;
/// Tries before a fresh or rewrite address that would count as sequential is kept anyway.
const TRIES: usize = 16;

/// Streams a suite's writes (see the module doc).
pub struct SuiteGenerator {
    p: SuiteParams,
    rng: Rng,
    written: u64,
    time_ns: u64,
    writes: u64,
    sequential: u64,
    aligned: u64,
    rewrite_bytes: u64,
    cursor: u64,
    /// Ends of the last `WINDOW` writes.
    ends: [u64; WINDOW],
    /// Pieces written fresh so far (offset, length): rewrite targets.
    pieces: Vec<(u64, u64)>,
    /// Fresh space taken, by 512-byte sector of the area (fresh writes never overlap).
    taken: Vec<u64>,
}

impl SuiteGenerator {
    /// A generator of `p`'s suite (an error names a parameter that does not fit).
    pub fn new(p: SuiteParams) -> Result<Self, String> {
        p.validate()?;
        let sectors = p.area_bytes.div_ceil(512);
        Ok(Self {
            rng: Rng(p.seed ^ 0x0005_EED5_u64.rotate_left(32)),
            written: 0,
            time_ns: 0,
            writes: 0,
            sequential: 0,
            aligned: 0,
            rewrite_bytes: 0,
            cursor: p.partition_offset_bytes,
            ends: [u64::MAX; WINDOW],
            pieces: Vec::new(),
            taken: vec![0; sectors.div_ceil(64) as usize],
            p,
        })
    }

    fn corrected(&self, target: f64, achieved: u64, n: u64) -> f64 {
        (target + GAIN * (target * n as f64 - achieved as f64)).clamp(0.0, 1.0)
    }

    fn is_sequential(&self, offset: u64) -> bool {
        self.ends.contains(&offset)
    }

    fn sector_range(&self, offset: u64, len: u64) -> std::ops::Range<u64> {
        offset / 512..(offset + len).div_ceil(512)
    }

    fn free(&self, offset: u64, len: u64) -> bool {
        offset + len <= self.p.area_bytes
            && self
                .sector_range(offset, len)
                .all(|sc| self.taken[(sc / 64) as usize] >> (sc % 64) & 1 == 0)
    }

    fn take(&mut self, offset: u64, len: u64) {
        for sc in self.sector_range(offset, len) {
            self.taken[(sc / 64) as usize] |= 1 << (sc % 64);
        }
        self.pieces.push((offset, len));
    }

    /// A fresh write's address: random, free, not sequential by accident.
    fn fresh_offset(&mut self, len: u64, aligned: bool) -> Option<u64> {
        let p = &self.p;
        let (group, span) = (
            p.area_bytes / p.groups,
            if p.group_header_bytes > 0 { p.group_header_bytes } else { p.area_bytes / p.groups },
        );
        for _ in 0..TRIES * 4 {
            let g = self.rng.below(p.groups);
            let room = span.saturating_sub(len + 4 * KIB) / (4 * KIB);
            if room == 0 {
                return None;
            }
            let misalign = if aligned { 0 } else { 512 * (1 + self.rng.below(7)) };
            let offset = g * group + self.rng.below(room) * 4 * KIB + misalign;
            if self.free(offset, len) && !self.is_sequential(offset) {
                return Some(offset);
            }
        }
        None
    }

    /// A rewrite's address: inside a piece written before (hot: a recent one), aligned if
    /// asked and possible; one that does not count as sequential by accident if one of a few
    /// draws gives it (the deficit correction absorbs the others).
    fn rewrite_offset(&mut self, len: u64, aligned: bool) -> Option<u64> {
        if self.pieces.is_empty() {
            return None;
        }
        let mut fallback = None;
        for _ in 0..TRIES {
            let n = self.pieces.len();
            let i = if self.rng.unit() < self.p.hot_fraction {
                n - 1 - self.rng.below(n.min(self.p.hot_extents) as u64) as usize
            } else {
                self.rng.below(n as u64) as usize
            };
            let (o, l) = self.pieces[i];
            // Candidate starts: sector steps inside the piece (4 KiB steps from the first
            // aligned sector when asked for alignment).
            let (first, step) =
                if aligned { (o.next_multiple_of(4 * KIB), 4 * KIB) } else { (o, 512) };
            if first + len > o + l {
                continue;
            }
            let offset = first + self.rng.below((o + l - len - first) / step + 1) * step;
            // An unaligned rewrite must not land on a 4 KiB boundary by chance.
            if !aligned && offset.is_multiple_of(4 * KIB) && len.is_multiple_of(4 * KIB) {
                continue;
            }
            if !self.is_sequential(offset) {
                return Some(offset);
            }
            fallback = Some(offset);
        }
        fallback
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Stream {
    Sequential,
    Fresh,
    Rewrite,
}

impl Iterator for SuiteGenerator {
    type Item = TraceRecord;

    fn next(&mut self) -> Option<TraceRecord> {
        if self.written >= self.p.write_bytes {
            return None;
        }
        let n = self.writes;
        let want_seq =
            self.rng.unit() < self.corrected(self.p.sequential_ratio, self.sequential, n);
        let aligned = self.rng.unit() < self.corrected(self.p.alignment_ratio, self.aligned, n);
        // The rewrite ratio is by bytes: its deficit is counted in 4 KiB units.
        let unit = 4 * KIB;
        let want_rewrite = self.rng.unit()
            < self.corrected(self.p.rewrite_ratio, self.rewrite_bytes / unit, self.written / unit);
        let mut pick = None;
        if want_seq {
            let len = self.rng.pick(&self.p.request_bytes);
            if self.free(self.cursor, len) {
                pick = Some((self.cursor, len, Stream::Sequential));
            } else {
                // The stream ran into written space: it goes on elsewhere, in its alignment.
                let cursor_aligned = self.p.partition_offset_bytes.is_multiple_of(4 * KIB);
                pick = self.fresh_offset(len, cursor_aligned).map(|o| (o, len, Stream::Sequential));
            }
        }
        if pick.is_none() && want_rewrite {
            let len = self.rng.pick(&self.p.rewrite_request_bytes);
            pick = self.rewrite_offset(len, aligned).map(|o| (o, len, Stream::Rewrite));
        }
        if pick.is_none() {
            let len = self.rng.pick(&self.p.request_bytes);
            pick = self.fresh_offset(len, aligned).map(|o| (o, len, Stream::Fresh));
        }
        // None: no free room found for new data (an area too small for the write bytes).
        let (offset, len, stream) = pick?;
        if self.is_sequential(offset) {
            self.sequential += 1;
        }
        if offset.is_multiple_of(4 * KIB) && len.is_multiple_of(4 * KIB) {
            self.aligned += 1;
        }
        match stream {
            Stream::Rewrite => self.rewrite_bytes += len,
            Stream::Fresh => self.take(offset, len),
            Stream::Sequential => {
                self.take(offset, len);
                self.cursor = offset + len;
            }
        }
        self.ends[(n as usize) % WINDOW] = offset + len;
        self.writes += 1;
        self.written += len;
        // Exponential gaps, in whole 100 ns ticks (MSR's clock).
        let gap = -(1.0 - self.rng.unit()).ln() * self.p.interarrival_ns as f64;
        let t = self.time_ns;
        self.time_ns += ((gap / 100.0).round() as u64).max(1) * 100;
        Some(TraceRecord {
            op: TraceOp::Write,
            offset_bytes: offset,
            length_bytes: len,
            time_ns: t,
            device: 0,
            line: n + 1,
        })
    }
}

/// One record as an MSR Cambridge CSV line (`Timestamp,Hostname,DiskNumber,Type,Offset,
/// Size,ResponseTime`, times in 100 ns ticks), the format `nandlab run` and `nandlab analyze`
/// read back exactly.
#[must_use]
pub fn msr_line(r: &TraceRecord, host: &str) -> String {
    let ty = match r.op {
        TraceOp::Read => "Read",
        _ => "Write",
    };
    format!("{},{host},{},{ty},{},{},0", r.time_ns / 100, r.device, r.offset_bytes, r.length_bytes)
}
