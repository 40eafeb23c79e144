//! # Trace analysis: the benchmarks paper's workload characterisation (its §4 and §5.2)
//!
//! The paper is cited in docs/PAPERS.md; the figures are summarised in docs/ALGORITHMS.md §8.
//!
//! One streaming pass over a trace's records gives the paper's macroscopic figures (its
//! Table 3: data transferred, rewrite ratio, sequential ratio, typical request length,
//! alignment ratio) and the data behind its microscopic views (Figures 4–6: the LBA of each
//! write over the request index, the life cycle of rewritten data, the seek distance), then
//! names the benchmark suite the trace belongs to (Transfer, Mapping, GC or Buffer) with the
//! figures that decided it.
//!
//! ## Definitions
//!
//! The paper's where it gives one, ours (marked) where it is silent. Every figure is over
//! **writes** — the paper replays writes — except `read_bytes` and the request counts.
//!
//! - **Data transferred** = read bytes + write bytes.
//! - **Rewrite ratio** = bytes written to addresses the trace had already written ÷ bytes
//!   written. Addresses are tracked per device in 512-byte sectors; a write that covers part
//!   of a sector counts that sector (capped at the write's own bytes in each 4 KiB page).
//!   (The paper divides "the update data amount" by "the overall data transferred" in its
//!   example; for a write-only trace, as its were, the two agree.)
//! - **Sequential ratio** = share of writes that start where one of the previous
//!   `sequential_window` writes (default 10) ended — the paper's "error of the sequential
//!   activity is set to 10: if the logical addresses of the Nth write and N+10th write are
//!   contiguous, the action is considered a sequential write". The first write is not
//!   sequential.
//! - **Typical request length** = the most frequent write length (ties: the longer); the
//!   share of the most frequent lengths is reported too.
//! - **Alignment ratio** = share of writes whose offset and length are both multiples of
//!   `alignment_bytes` (default 4 KiB, a flash page). (Ours: the paper does not define it.)
//! - **Life cycle** of a rewrite = the time since the previous write to the same 4 KiB page
//!   (the paper's definition 2); a histogram in powers of two of nanoseconds plus sampled
//!   (address, life cycle) points. Short life cycles mark hot data, long ones cold data.
//! - **Seek distance** of write N = its offset − the end of write N−1 (same device), signed;
//!   a histogram of its magnitude in powers of two of bytes (bucket 0: exactly contiguous).
//!
//! Sampled series keep at most `sample_points` points: every k-th point, k doubling (and
//! every other kept point dropped) whenever the buffer fills — deterministic, streaming, and
//! evenly spread over the trace.
//!
//! ## Suites (ours, from the paper's reasoning in §5.2)
//!
//! In this order, the first rule that holds names the suite:
//! 1. **none** — the trace writes nothing.
//! 2. **Transfer** — rewrite ratio < 5 % and sequential ratio ≥ 80 %: bulk sequential writes
//!    of new data (the paper's Copy: 0.1 % rewrite, 96 % sequential) test transfer speed.
//! 3. **GC** — rewrite ratio ≥ 50 %: most writes update live data, so the device cleans
//!    constantly (the paper's Browser: 80 % rewrite, 4 KiB, hot and cold mixed).
//! 4. **Buffer** — at least 20 % of the written bytes are rewrites that come back within
//!    `buffer_window_ns` (default 1 s) of their previous write: a RAM write buffer would absorb
//!    them.
//! 5. **Mapping** — sequential ratio < 50 %: writes scattered over the address space (the
//!    paper's Linux install: 25 % sequential, 4 KiB, over group headers) test the mapping.
//! 6. **Transfer** otherwise (mostly sequential).

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};

use crate::{TraceError, TraceOp, TraceRecord};

/// Bytes per sector of the rewrite map.
pub const SECTOR_BYTES: u64 = 512;
/// Bytes per page of the rewrite map and the life cycle.
pub const PAGE_BYTES: u64 = 4096;
const SECTORS_PER_PAGE: u64 = PAGE_BYTES / SECTOR_BYTES;

/// How to analyse a trace.
#[derive(Clone, Debug)]
pub struct AnalyzeOptions {
    /// Writes back a write may follow and still count as sequential (the paper's 10).
    pub sequential_window: usize,
    /// Alignment the alignment ratio checks (bytes, > 0).
    pub alignment_bytes: u64,
    /// Points kept per sampled series (0: none).
    pub sample_points: usize,
    /// Life cycle under which a rewrite counts as one a write buffer absorbs (suite rule 4).
    pub buffer_window_ns: u64,
}

impl Default for AnalyzeOptions {
    fn default() -> Self {
        AnalyzeOptions {
            sequential_window: 10,
            alignment_bytes: 4096,
            sample_points: 10_000,
            buffer_window_ns: 1_000_000_000,
        }
    }
}

/// The benchmark suites of the benchmarks paper (§5.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Suite {
    /// The trace has no writes.
    None,
    /// Sequential writes of new data: transfer speed.
    Transfer,
    /// Random writes over a wide area: the address mapping.
    Mapping,
    /// Mostly rewrites: garbage collection.
    Gc,
    /// Rewrites that come back quickly: the write buffer.
    Buffer,
}

impl Suite {
    /// `"none"`, `"transfer"`, `"mapping"`, `"gc"` or `"buffer"`.
    pub fn name(self) -> &'static str {
        match self {
            Suite::None => "none",
            Suite::Transfer => "transfer",
            Suite::Mapping => "mapping",
            Suite::Gc => "gc",
            Suite::Buffer => "buffer",
        }
    }
}

/// A histogram over powers of two: bucket 0 holds the value 0, bucket i ≥ 1 the values in
/// [2^(i−1), 2^i).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Log2Histogram {
    /// Counts per bucket (trailing empty buckets omitted).
    pub counts: Vec<u64>,
}

impl Log2Histogram {
    fn record(&mut self, v: u64) {
        let i = (64 - v.leading_zeros()) as usize;
        if self.counts.len() <= i {
            self.counts.resize(i + 1, 0);
        }
        self.counts[i] += 1;
    }

    /// The lower bound of bucket `i`.
    pub fn bucket_floor(i: usize) -> u64 {
        if i == 0 {
            0
        } else {
            1u64 << (i - 1)
        }
    }

    /// Values recorded.
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }
}

/// A series of points thinned to a bounded size (see the module doc).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sampled<T> {
    /// The kept points, in trace order.
    pub points: Vec<T>,
    /// One point in `stride` was kept.
    pub stride: u64,
    seen: u64,
    cap: usize,
}

impl<T> Sampled<T> {
    fn new(cap: usize) -> Self {
        Sampled { points: Vec::new(), stride: 1, seen: 0, cap }
    }

    #[inline]
    fn offer(&mut self, make: impl FnOnce() -> T) {
        if self.cap == 0 {
            return;
        }
        if self.seen.is_multiple_of(self.stride) {
            if self.points.len() == self.cap {
                // Keep every other point and sample half as often from now on.
                let mut i = 0;
                self.points.retain(|_| {
                    i += 1;
                    i % 2 == 1
                });
                self.stride *= 2;
                if !self.seen.is_multiple_of(self.stride) {
                    self.seen += 1;
                    return;
                }
            }
            self.points.push(make());
        }
        self.seen += 1;
    }
}

/// One write in the LBA-over-index view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LbaPoint {
    /// Index of the write among the trace's writes (0-based).
    pub write_index: u64,
    /// Its device.
    pub device: u64,
    /// Its offset in bytes.
    pub offset_bytes: u64,
}

/// One rewrite in the life-cycle view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LifePoint {
    /// The rewritten page's offset in bytes.
    pub offset_bytes: u64,
    /// Time since that page's previous write.
    pub life_ns: u64,
}

/// One write in the seek-distance view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeekPoint {
    /// The write's offset in bytes.
    pub offset_bytes: u64,
    /// Its offset − the previous write's end (same device).
    pub seek_bytes: i64,
}

/// What one pass over a trace found (see the module doc for every definition).
#[derive(Clone, Debug, PartialEq)]
pub struct Analysis {
    /// Records of every kind.
    pub requests: u64,
    /// Read records.
    pub read_requests: u64,
    /// Write records.
    pub write_requests: u64,
    /// Trim records.
    pub trim_requests: u64,
    /// Flush records.
    pub flush_requests: u64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// Written bytes that landed on sectors already written.
    pub rewrite_bytes: u64,
    /// Writes counted sequential.
    pub sequential_writes: u64,
    /// Writes aligned to `alignment_bytes`.
    pub aligned_writes: u64,
    /// Distinct 4 KiB pages written.
    pub written_pages: u64,
    /// Smallest offset of any write (0 without writes).
    pub write_min_offset_bytes: u64,
    /// Largest end of any write (0 without writes).
    pub write_max_end_bytes: u64,
    /// Time of the last record.
    pub duration_ns: u64,
    /// The most frequent write lengths, most frequent first (ties: longer first), at most 8,
    /// with their counts.
    pub write_lengths_top: Vec<(u64, u64)>,
    /// Rewritten bytes whose life cycle is under `buffer_window_ns`.
    pub rewrite_bytes_short: u64,
    /// Life cycles of rewrites (per rewritten page), log2 of ns.
    pub life_cycle_ns: Log2Histogram,
    /// |seek distance| of writes after the first on their device, log2 of bytes.
    pub seek_bytes: Log2Histogram,
    /// Sampled writes: LBA over write index (benchmarks paper, Figs. 4a, 5a, 6a).
    pub lba_series: Sampled<LbaPoint>,
    /// Sampled rewrites: life cycle over address (Fig. 4b).
    pub life_series: Sampled<LifePoint>,
    /// Sampled writes: seek distance over address (Fig. 5b).
    pub seek_series: Sampled<SeekPoint>,
    /// The sequential window the analysis ran with.
    pub sequential_window: usize,
    /// The alignment it checked.
    pub alignment_bytes: u64,
    /// The buffer window of suite rule 4.
    pub buffer_window_ns: u64,
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

impl Analysis {
    /// Read bytes + write bytes.
    pub fn data_transferred_bytes(&self) -> u64 {
        self.read_bytes.saturating_add(self.write_bytes)
    }

    /// Rewritten bytes ÷ written bytes (0 without writes).
    pub fn rewrite_ratio(&self) -> f64 {
        ratio(self.rewrite_bytes, self.write_bytes)
    }

    /// Sequential writes ÷ writes.
    pub fn sequential_ratio(&self) -> f64 {
        ratio(self.sequential_writes, self.write_requests)
    }

    /// Aligned writes ÷ writes.
    pub fn alignment_ratio(&self) -> f64 {
        ratio(self.aligned_writes, self.write_requests)
    }

    /// The most frequent write length (0 without writes).
    pub fn request_bytes_typical(&self) -> u64 {
        self.write_lengths_top.first().map_or(0, |&(b, _)| b)
    }

    /// Share of rewritten bytes that came back within `buffer_window_ns`.
    pub fn short_rewrite_ratio(&self) -> f64 {
        ratio(self.rewrite_bytes_short, self.rewrite_bytes)
    }

    /// Share of written bytes that are rewrites back within `buffer_window_ns` (suite rule 4).
    pub fn short_rewrite_share(&self) -> f64 {
        ratio(self.rewrite_bytes_short, self.write_bytes)
    }

    /// The suite and the reason, from the rules in the module doc.
    pub fn suite(&self) -> (Suite, String) {
        let rw = self.rewrite_ratio();
        let seq = self.sequential_ratio();
        let short = self.short_rewrite_share();
        let pct = |x: f64| format!("{:.1} %", 100.0 * x);
        if self.write_requests == 0 {
            return (Suite::None, "the trace has no writes".into());
        }
        if rw < 0.05 && seq >= 0.8 {
            return (
                Suite::Transfer,
                format!(
                    "rewrite ratio {} < 5 % and sequential ratio {} >= 80 %: bulk sequential \
                     writes of new data",
                    pct(rw),
                    pct(seq)
                ),
            );
        }
        if rw >= 0.5 {
            return (
                Suite::Gc,
                format!("rewrite ratio {} >= 50 %: most writes update live data", pct(rw)),
            );
        }
        if short >= 0.2 {
            return (
                Suite::Buffer,
                format!(
                    "{} of the written bytes rewrite data written less than {} ms before \
                     (>= 20 %): a write buffer absorbs them",
                    pct(short),
                    self.buffer_window_ns / 1_000_000
                ),
            );
        }
        if seq < 0.5 {
            return (
                Suite::Mapping,
                format!(
                    "sequential ratio {} < 50 % with rewrite ratio {} < 50 %: writes scattered \
                     over {} of address space",
                    pct(seq),
                    pct(rw),
                    human_bytes(
                        self.write_max_end_bytes.saturating_sub(self.write_min_offset_bytes)
                    )
                ),
            );
        }
        (
            Suite::Transfer,
            format!(
                "sequential ratio {} >= 50 % with rewrite ratio {} < 50 %: mostly sequential",
                pct(seq),
                pct(rw)
            ),
        )
    }
}

/// "216.4 GiB". (nandlab-core has the same formatter, `memory::human_bytes`; this crate stands
/// alone and does not depend on it.)
fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// Multiplicative hashing for the page map: keys are (device, page) pairs whose low bits are
/// already well spread; SipHash would cost more than the rest of the per-write work.
#[derive(Clone, Copy, Default)]
struct PageHash;

struct PageHasher(u64);

impl Hasher for PageHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(26) ^ v).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

impl BuildHasher for PageHash {
    type Hasher = PageHasher;
    fn build_hasher(&self) -> PageHasher {
        PageHasher(0)
    }
}

/// Pages per chunk of the page map: 2^13 pages = 32 MiB of address space.
const CHUNK_PAGES: u64 = 1 << 13;

/// The written sectors and last write time of `CHUNK_PAGES` consecutive pages of one device
/// (`sectors` 0: never written).
struct Chunk {
    sectors: Box<[u8]>,
    last_write_ns: Box<[u64]>,
}

/// Every written page's state, in chunks allocated as the trace reaches them: a write costs an
/// array index (plus a hash lookup when it leaves the previous write's chunk), and memory grows
/// with the address ranges written, about 9 bytes per page of each 32 MiB range touched.
struct PageMap {
    index: HashMap<(u64, u64), u32, PageHash>,
    chunks: Vec<Chunk>,
    /// The last chunk looked up: (device, chunk number, index).
    last: Option<(u64, u64, u32)>,
}

impl PageMap {
    fn new() -> Self {
        PageMap { index: HashMap::with_hasher(PageHash), chunks: Vec::new(), last: None }
    }

    #[inline]
    fn chunk(&mut self, device: u64, chunk: u64) -> &mut Chunk {
        let i = match self.last {
            Some((d, c, i)) if d == device && c == chunk => i,
            _ => {
                let next = self.chunks.len() as u32;
                let i = *self.index.entry((device, chunk)).or_insert(next);
                if i == next {
                    self.chunks.push(Chunk {
                        sectors: vec![0u8; CHUNK_PAGES as usize].into_boxed_slice(),
                        last_write_ns: vec![0u64; CHUNK_PAGES as usize].into_boxed_slice(),
                    });
                }
                self.last = Some((device, chunk, i));
                i
            }
        };
        &mut self.chunks[i as usize]
    }
}

/// Per device: the ends of the last `sequential_window` writes and of the last write.
struct DeviceState {
    device: u64,
    recent_ends: Vec<u64>,
    next: usize,
    last_end: Option<u64>,
}

/// The streaming analyser: feed it records in trace order, then `finish`.
pub struct Analyzer {
    a: Analysis,
    pages: PageMap,
    lengths: HashMap<u64, u64, PageHash>,
    devices: Vec<DeviceState>,
}

impl Analyzer {
    /// An analyser with `options` (an `alignment_bytes` of 0 is taken as 1).
    pub fn new(options: &AnalyzeOptions) -> Self {
        let cap = options.sample_points;
        Analyzer {
            a: Analysis {
                requests: 0,
                read_requests: 0,
                write_requests: 0,
                trim_requests: 0,
                flush_requests: 0,
                read_bytes: 0,
                write_bytes: 0,
                rewrite_bytes: 0,
                sequential_writes: 0,
                aligned_writes: 0,
                written_pages: 0,
                write_min_offset_bytes: u64::MAX,
                write_max_end_bytes: 0,
                duration_ns: 0,
                write_lengths_top: Vec::new(),
                rewrite_bytes_short: 0,
                life_cycle_ns: Log2Histogram::default(),
                seek_bytes: Log2Histogram::default(),
                lba_series: Sampled::new(cap),
                life_series: Sampled::new(cap),
                seek_series: Sampled::new(cap),
                sequential_window: options.sequential_window,
                alignment_bytes: options.alignment_bytes.max(1),
                buffer_window_ns: options.buffer_window_ns,
            },
            pages: PageMap::new(),
            lengths: HashMap::with_hasher(PageHash),
            devices: Vec::new(),
        }
    }

    /// Accounts one record.
    pub fn record(&mut self, r: &TraceRecord) {
        let a = &mut self.a;
        a.requests += 1;
        a.duration_ns = a.duration_ns.max(r.time_ns);
        match r.op {
            TraceOp::Read => {
                a.read_requests += 1;
                a.read_bytes = a.read_bytes.saturating_add(r.length_bytes);
            }
            TraceOp::Trim => a.trim_requests += 1,
            TraceOp::Flush => a.flush_requests += 1,
            TraceOp::Write => self.write(r),
        }
    }

    fn device(&mut self, device: u64) -> &mut DeviceState {
        // Traces hold one device or a handful: a linear search beats hashing.
        let i = match self.devices.iter().position(|d| d.device == device) {
            Some(i) => i,
            None => {
                self.devices.push(DeviceState {
                    device,
                    recent_ends: Vec::with_capacity(self.a.sequential_window),
                    next: 0,
                    last_end: None,
                });
                self.devices.len() - 1
            }
        };
        &mut self.devices[i]
    }

    fn write(&mut self, r: &TraceRecord) {
        let (off, len, t) = (r.offset_bytes, r.length_bytes, r.time_ns);
        let end = off + len;
        let index = self.a.write_requests;
        self.a.write_requests += 1;
        self.a.write_bytes = self.a.write_bytes.saturating_add(len);
        self.a.write_min_offset_bytes = self.a.write_min_offset_bytes.min(off);
        self.a.write_max_end_bytes = self.a.write_max_end_bytes.max(end);
        *self.lengths.entry(len).or_insert(0) += 1;
        let align = self.a.alignment_bytes;
        if off.is_multiple_of(align) && len.is_multiple_of(align) {
            self.a.aligned_writes += 1;
        }
        // Sequential: starts where one of the last `window` writes on its device ended.
        let window = self.a.sequential_window;
        let d = self.device(r.device);
        let sequential = d.recent_ends.contains(&off);
        if window > 0 {
            if d.recent_ends.len() < window {
                d.recent_ends.push(end);
            } else {
                d.recent_ends[d.next] = end;
                d.next = (d.next + 1) % window;
            }
        }
        let seek = d.last_end.map(|e| off as i128 - e as i128);
        d.last_end = Some(end);
        let device = r.device;
        let a = &mut self.a;
        if sequential {
            a.sequential_writes += 1;
        }
        if let Some(s) = seek {
            let s = s.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64;
            a.seek_bytes.record(s.unsigned_abs());
            a.seek_series.offer(|| SeekPoint { offset_bytes: off, seek_bytes: s });
        }
        a.lba_series.offer(|| LbaPoint { write_index: index, device, offset_bytes: off });
        // Rewrites and life cycles, page by page.
        let mut page = off / PAGE_BYTES;
        let last_page = (end - 1) / PAGE_BYTES;
        while page <= last_page {
            let page_start = page * PAGE_BYTES;
            let lo = off.max(page_start);
            let hi = end.min(page_start + PAGE_BYTES);
            let first_sector = (lo - page_start) / SECTOR_BYTES;
            let end_sector = (hi - page_start).div_ceil(SECTOR_BYTES);
            let mask = (((1u16 << end_sector) - 1) & !((1u16 << first_sector) - 1)) as u8;
            debug_assert!(end_sector <= SECTORS_PER_PAGE);
            let chunk = self.pages.chunk(device, page / CHUNK_PAGES);
            let k = (page % CHUNK_PAGES) as usize;
            let old = chunk.sectors[k];
            if old == 0 {
                a.written_pages += 1;
            } else {
                let again = old & mask;
                if again != 0 {
                    let bytes = (u64::from(again.count_ones()) * SECTOR_BYTES).min(hi - lo);
                    a.rewrite_bytes += bytes;
                    let life = t.saturating_sub(chunk.last_write_ns[k]);
                    if life < a.buffer_window_ns {
                        a.rewrite_bytes_short += bytes;
                    }
                    a.life_cycle_ns.record(life);
                    a.life_series.offer(|| LifePoint { offset_bytes: page_start, life_ns: life });
                }
            }
            chunk.sectors[k] = old | mask;
            chunk.last_write_ns[k] = t;
            page += 1;
        }
    }

    /// The analysis of every record seen.
    pub fn finish(mut self) -> Analysis {
        let mut lengths: Vec<(u64, u64)> = self.lengths.into_iter().collect();
        lengths.sort_unstable_by(|x, y| y.1.cmp(&x.1).then(y.0.cmp(&x.0)));
        lengths.truncate(8);
        self.a.write_lengths_top = lengths;
        if self.a.write_requests == 0 {
            self.a.write_min_offset_bytes = 0;
        }
        self.a
    }
}

/// Analyses every record `records` yields (a [`crate::TraceReader`], or records built in
/// memory); stops at the first error.
pub fn analyze_records(
    records: impl IntoIterator<Item = Result<TraceRecord, TraceError>>,
    options: &AnalyzeOptions,
) -> Result<Analysis, TraceError> {
    let mut an = Analyzer::new(options);
    for r in records {
        an.record(&r?);
    }
    Ok(an.finish())
}
