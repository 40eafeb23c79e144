//! Metrics (docs/ALGORITHMS.md §2.3): host and flash counters, write amplification, the DAC paper's
//! simplified cleaning cost, wear (erase-count mean, standard deviation, maximum, histogram),
//! flash busy time, latency percentiles and memory.
//!
//! Counters are windows: the device snapshots them when measurement starts (after warm-up) and
//! the report is the difference. Wear figures are device state at the end of the run (erase
//! counts accumulate over the device's whole life, warm-up included), as a user inspecting a
//! worn device would see them.

use serde::Serialize;

pub use crate::buffer::BufferCounters;
use crate::flash::Timing;
use crate::flash::{FlashCounters, Op};
pub use crate::ftl::RecycleStats;

/// Log-linear latency histogram: 64 power-of-two ranges × 32 linear sub-buckets, so any value
/// is recorded with under 3.2 % relative error in O(1) and without allocation.
#[derive(Clone, Debug)]
pub struct LatencyHistogram {
    buckets: Vec<u64>,
    count: u64,
    sum_ns: u128,
    max_ns: u64,
}

const SUB_BITS: u32 = 5;
const SUB: u64 = 1 << SUB_BITS;

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self { buckets: vec![0; (64 * SUB) as usize], count: 0, sum_ns: 0, max_ns: 0 }
    }
}

impl LatencyHistogram {
    #[inline]
    fn index(v: u64) -> usize {
        if v < SUB {
            return v as usize;
        }
        let msb = 63 - v.leading_zeros(); // >= SUB_BITS
        let shift = msb - SUB_BITS;
        let sub = (v >> shift) & (SUB - 1);
        ((u64::from(shift + 1) * SUB) + sub) as usize
    }

    /// Smallest value mapping to bucket `i` (inverse of `index`).
    fn lower(i: usize) -> u64 {
        let i = i as u64;
        if i < SUB {
            return i;
        }
        let shift = i / SUB - 1;
        (SUB + i % SUB) << shift
    }

    // Always inlined: it runs once or twice per request, and a call costs as much as its body.
    #[inline(always)]
    pub fn record(&mut self, ns: u64) {
        self.buckets[Self::index(ns)] += 1;
        self.count += 1;
        self.sum_ns += u128::from(ns);
        self.max_ns = self.max_ns.max(ns);
    }

    pub fn reset(&mut self) {
        self.buckets.fill(0);
        self.count = 0;
        self.sum_ns = 0;
        self.max_ns = 0;
    }

    #[must_use]
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Value at quantile `q` (0..=1): the midpoint of the bucket holding that rank.
    #[must_use]
    pub fn quantile(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        if q >= 1.0 {
            return self.max_ns;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        for (i, &c) in self.buckets.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let lo = Self::lower(i);
                let hi = Self::lower(i + 1).saturating_sub(1).max(lo);
                return (lo + (hi - lo) / 2).min(self.max_ns);
            }
        }
        self.max_ns
    }

    /// `[lowest ns, requests]` of every bucket holding a request, lowest first: the
    /// distribution itself (a CDF's steps), at the buckets' 3.2 % resolution.
    #[must_use]
    pub fn buckets(&self) -> Vec<[u64; 2]> {
        let held = self.buckets.iter().enumerate().filter(|&(_, &c)| c > 0);
        held.map(|(i, &c)| [Self::lower(i), c]).collect()
    }

    #[must_use]
    pub fn summary(&self) -> LatencySummary {
        LatencySummary {
            count: self.count,
            mean: if self.count == 0 { 0.0 } else { self.sum_ns as f64 / self.count as f64 },
            p50: self.quantile(0.50),
            p90: self.quantile(0.90),
            p99: self.quantile(0.99),
            p999: self.quantile(0.999),
            max: self.max_ns,
        }
    }
}

/// Latency distribution of one request kind, in nanoseconds.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq)]
pub struct LatencySummary {
    pub count: u64,
    pub mean: f64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub p999: u64,
    pub max: u64,
}

/// Wear figures over every block's erase count.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct WearSummary {
    pub mean: f64,
    pub stddev: f64,
    pub min: u32,
    pub max: u32,
    /// `[erase_count, blocks]` pairs for every erase count some block has.
    pub histogram: Vec<[u64; 2]>,
}

impl WearSummary {
    #[must_use]
    pub fn from_counts(counts: &[u32]) -> Self {
        if counts.is_empty() {
            return Self::default();
        }
        let n = counts.len() as f64;
        let mean = counts.iter().map(|&c| f64::from(c)).sum::<f64>() / n;
        let var = counts.iter().map(|&c| (f64::from(c) - mean).powi(2)).sum::<f64>() / n;
        let mut sorted = counts.to_vec();
        sorted.sort_unstable();
        let mut histogram: Vec<[u64; 2]> = Vec::new();
        for c in sorted {
            match histogram.last_mut() {
                Some(last) if last[0] == u64::from(c) => last[1] += 1,
                _ => histogram.push([u64::from(c), 1]),
            }
        }
        Self {
            mean,
            stddev: var.sqrt(),
            min: counts.iter().copied().min().unwrap_or(0),
            max: counts.iter().copied().max().unwrap_or(0),
            histogram,
        }
    }
}

/// Mean, standard deviation, minimum and maximum of erase counts: `WearSummary` without the
/// histogram (no sort, no allocation), cheap enough to take many times during a run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct WearStats {
    pub mean: f64,
    pub stddev: f64,
    pub min: u32,
    pub max: u32,
}

impl WearStats {
    /// O(blocks). Same arithmetic as `WearSummary::from_counts` (two passes, population
    /// standard deviation), so both give bit-identical figures for the same counts.
    #[must_use]
    pub fn from_counts(counts: &[u32]) -> Self {
        if counts.is_empty() {
            return Self::default();
        }
        let n = counts.len() as f64;
        let (mut sum, mut min, mut max) = (0.0f64, u32::MAX, 0u32);
        for &c in counts {
            sum += f64::from(c);
            min = min.min(c);
            max = max.max(c);
        }
        let mean = sum / n;
        let var = counts.iter().map(|&c| (f64::from(c) - mean).powi(2)).sum::<f64>() / n;
        Self { mean, stddev: var.sqrt(), min, max }
    }
}

/// The device's wear at one point of a run (`run.sample_every_bytes`), for stability plots
/// (lazy wear-leveling paper, Fig. 14: erase-count deviation against data written). Every count is
/// cumulative from the start of the run — prefill and warm-up included — because wear is a
/// property of the device's whole life, not of the measurement window.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq)]
pub struct WearSample {
    /// Bytes the host has written so far.
    pub host_write_bytes: u64,
    /// Blocks erased so far, whatever the reason (host, cleaner, wear leveler).
    pub erases: u64,
    /// Of `erases`, those the wear leveler caused.
    pub wear_leveling_erases: u64,
    /// Pages the wear leveler copied so far.
    pub wear_leveling_copies: u64,
    /// Pages programmed so far, all sources.
    pub flash_program_pages: u64,
    /// Erase counts over all blocks (`WearStats`).
    pub wear_mean: f64,
    pub wear_stddev: f64,
    pub wear_max: u32,
    pub wear_min: u32,
}

/// Host-side counters kept by the device.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HostCounters {
    pub read_requests: u64,
    pub write_requests: u64,
    pub trim_requests: u64,
    pub flush_requests: u64,
    pub read_pages: u64,
    pub write_pages: u64,
    pub trim_pages: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Reads of never-written or trimmed pages (answered without touching flash).
    pub unmapped_read_pages: u64,
    /// Flash reads done to merge a partial-page write with the page's old content.
    pub rmw_read_pages: u64,
}

macro_rules! sub_fields {
    ($a:expr, $b:expr, $T:ident { $($f:ident),* }) => {
        $T { $($f: $a.$f - $b.$f),* }
    };
}

impl std::ops::Sub for HostCounters {
    type Output = Self;
    fn sub(self, o: Self) -> Self {
        sub_fields!(
            self,
            o,
            HostCounters {
                read_requests,
                write_requests,
                trim_requests,
                flush_requests,
                read_pages,
                write_pages,
                trim_pages,
                read_bytes,
                write_bytes,
                unmapped_read_pages,
                rmw_read_pages
            }
        )
    }
}

/// Flash busy time by operation, in nanoseconds. A page copy is one `copy` (copyback, or the
/// read + transfers + program it stands for), not a read plus a program.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
pub struct FlashTime {
    pub read: u64,
    pub program: u64,
    pub copy: u64,
    pub erase: u64,
    /// Mapping-table page reads and programs (`ftl.mapping_zone_bytes`).
    pub mapping: u64,
}

/// The report of one run's measurement window. Field names are the public metric names
/// (JSON, Python, CSV columns).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Metrics {
    pub host_read_requests: u64,
    pub host_write_requests: u64,
    pub host_trim_requests: u64,
    pub host_flush_requests: u64,
    pub host_read_pages: u64,
    pub host_write_pages: u64,
    pub host_trim_pages: u64,
    pub host_read_bytes: u64,
    pub host_write_bytes: u64,
    pub unmapped_read_pages: u64,
    pub rmw_read_pages: u64,
    pub flash_read_pages: u64,
    pub flash_program_pages: u64,
    /// Valid pages copied by the cleaner (the DAC paper's TotalBlocksCopied).
    pub gc_copied_pages: u64,
    /// Blocks erased (the DAC paper's NumberOfErase).
    pub erases: u64,
    pub gc_victims: u64,
    pub victim_searches_capped: u64,
    /// Flash page programs ÷ host page writes.
    pub write_amplification: f64,
    /// SimplifiedCleaningCost = erases + gc_copied_pages / pages_per_block × 0.75.
    pub cleaning_cost: f64,
    pub wear_mean: f64,
    pub wear_stddev: f64,
    pub wear_min: u32,
    pub wear_max: u32,
    pub wear_histogram: Vec<[u64; 2]>,
    /// Time the flash spent on operations in the window.
    pub flash_busy_ns: u64,
    /// `flash_busy_ns` by operation (the block-recycling paper's breakdown).
    pub flash_time_ns: FlashTime,
    /// The FAB paper's execution-time breakdown (Fig. 7), buffer RAM time included.
    pub exec_time_ns: ExecTime,
    /// `buffer.kind` and its capacity in pages (0 without a buffer).
    pub buffer_kind: &'static str,
    pub buffer_pages: u64,
    /// What the RAM buffer did (all zero without one).
    pub buffer: BufferCounters,
    /// Mapping-table zones (`ftl.mapping_zone_bytes`): zone tables loaded from flash, changed
    /// tables written back on eviction, and their page reads and programs (included in
    /// `flash_read_pages`, `flash_program_pages` and so in `write_amplification`). All zero
    /// when the whole table is resident.
    pub mapping_zone_loads: u64,
    pub mapping_zone_write_backs: u64,
    pub mapping_read_pages: u64,
    pub mapping_program_pages: u64,
    /// Hybrid FTLs' block recycling by kind (docs/ALGORITHMS.md §4); all zero for the page FTL.
    pub switch_merges: RecycleStats,
    pub partial_merges: RecycleStats,
    pub full_merges: RecycleStats,
    pub migrations: RecycleStats,
    /// Log blocks erased with no valid page left (no copy needed).
    pub log_discards: RecycleStats,
    /// Simulated time the window spans.
    pub sim_time_ns: u64,
    pub read_latency_ns: LatencySummary,
    pub write_latency_ns: LatencySummary,
    /// The latency distributions: `[lowest ns of a bucket, requests]` for every bucket that
    /// holds a request (`LatencyHistogram::buckets`), for CDFs.
    pub read_latency_histogram_ns: Vec<[u64; 2]>,
    pub write_latency_histogram_ns: Vec<[u64; 2]>,
    /// Queueing delay of reads and writes: arrival to their first flash operation (the rest of
    /// the latency is service). Zero for requests served without flash (buffer hits).
    pub read_queue_ns: LatencySummary,
    pub write_queue_ns: LatencySummary,
    /// The parallel hardware's use (`engine`): IOPS, throughput, utilization per unit.
    #[serde(flatten)]
    pub parallel: ParallelMetrics,
    /// RAM of the FTL's tables (translation, region, lookup, indexes).
    pub table_memory_bytes: u64,
    /// RAM of the media model (OOB, erase counts; payload when stored).
    pub media_memory_bytes: u64,
    /// (table + media) bytes per physical page.
    pub memory_bytes_per_page: f64,
    /// The wear leveler's work (`wear.kind`; `None` without one): cumulative since the start.
    pub wear_leveling: Option<crate::wear::WearLevelingStats>,
    /// Erases and page copies done by wear leveling in the window (its overhead: the extra WA
    /// is `wear_leveling_copies ÷ host_write_pages`).
    pub wear_leveling_erases: u64,
    pub wear_leveling_copies: u64,
    /// Endurance and lifetime (`[wear]`).
    pub lifetime: LifetimeMetrics,
    /// The page FTL's RAM region (DEB's EBR, DAC's RAM region); `None` without one.
    pub ram_region: Option<RamRegionMetrics>,
    /// Wall-clock seconds of the whole run, prefill and warm-up included (front ends fill the
    /// wall-clock fields: the core has no clock).
    pub wall_seconds: f64,
    /// Wall-clock seconds of the measurement window.
    pub measured_wall_seconds: f64,
    /// Measured host page writes ÷ measured wall seconds: simulation speed at steady state.
    pub host_writes_per_wall_second: f64,
    /// Wear over the whole run (`run.sample_every_bytes`; empty without it), oldest first:
    /// unlike the window counters above, each sample is cumulative from the start of the run.
    pub wear_samples: Vec<WearSample>,
}

/// How the parallel hardware was used in the measurement window: rates over
/// simulated time, and each die's and bus's busy time.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct ParallelMetrics {
    /// Host requests (all kinds) per simulated second.
    pub iops: f64,
    /// Host bytes read and written per simulated second, in MB/s (10^6 bytes).
    pub host_mb_per_s: f64,
    /// Mean number of dies busy at once: their busy time summed ÷ simulated time.
    pub parallelism_mean: f64,
    /// Each die's busy fraction of simulated time (dies in hardware order: gang, chip, die).
    pub unit_utilization: Vec<f64>,
    /// Each die's busy time in the window.
    pub unit_busy_ns: Vec<u64>,
    /// Each gang's bus busy fraction (commands and transfers).
    pub channel_utilization: Vec<f64>,
}

impl ParallelMetrics {
    /// Over a window from `start` to `end` engine statistics spanning `sim_ns`.
    #[must_use]
    pub fn over(
        end: &crate::engine::EngineStats,
        start: &crate::engine::EngineStats,
        sim_ns: u64,
        requests: u64,
        bytes: u64,
    ) -> Self {
        let diff = |a: &[u64], b: &[u64]| -> Vec<u64> {
            a.iter().enumerate().map(|(i, &x)| x - b.get(i).copied().unwrap_or(0)).collect()
        };
        let unit_busy_ns = diff(&end.die_busy_ns, &start.die_busy_ns);
        let bus = diff(&end.bus_busy_ns, &start.bus_busy_ns);
        let s = sim_ns as f64;
        let frac = |ns: u64| if sim_ns == 0 { 0.0 } else { ns as f64 / s };
        let per_s = |n: f64| if sim_ns == 0 { 0.0 } else { n * 1e9 / s };
        Self {
            iops: per_s(requests as f64),
            host_mb_per_s: per_s(bytes as f64) / 1e6,
            parallelism_mean: frac(unit_busy_ns.iter().sum()),
            unit_utilization: unit_busy_ns.iter().map(|&b| frac(b)).collect(),
            channel_utilization: bus.iter().map(|&b| frac(b)).collect(),
            unit_busy_ns,
        }
    }
}

/// A RAM region's work in the measurement window (`ftl/ram_region.rs`). Host writes it absorbed
/// are page writes that did not program flash when they happened; `write_back_pages` (rule 5),
/// `shutdown_write_back_pages` and `final_write_back_pages` (end of run) are the ones that
/// reached flash later, so absorbed minus written back is what the RAM really saved.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
pub struct RamRegionMetrics {
    pub capacity_pages: u32,
    /// Rule 5's trigger, in pages.
    pub threshold_pages: u32,
    /// Pages held at the end of the window (0 after the end-of-run write-back).
    pub used_pages: u32,
    #[serde(flatten)]
    pub counters: crate::ftl::ram_region::RamRegionCounters,
}

/// Device lifetime (`wear/endurance.rs`): host bytes are counted from the device's creation
/// (prefill and warm-up included), so they measure the life of the device, not the window.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
pub struct LifetimeMetrics {
    /// Rated program/erase cycles per block (0 = unlimited).
    pub endurance_cycles: u32,
    /// Blocks retired as worn out.
    pub retired_blocks: u32,
    /// Host bytes written when a block first reached its rated cycles.
    pub first_wear_out_host_bytes: Option<u64>,
    /// Host bytes written when too few good blocks remained to accept writes.
    pub unusable_host_bytes: Option<u64>,
}

/// The FAB paper's execution-time breakdown (Fig. 7): flash time of host reads and writes, of the
/// cleaning's page copies split into their read and write halves (GCREAD, GCWRITE), of erases,
/// and the buffer's RAM time. Without copyback a copy is a read plus a program, so the halves
/// are exact; with copyback the read half is one page read and the rest is the write half.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
pub struct ExecTime {
    pub data_read: u64,
    pub data_write: u64,
    pub gc_read: u64,
    pub gc_write: u64,
    pub erase: u64,
    pub buffer: u64,
}

impl ExecTime {
    /// The breakdown of the window `[before, now]`.
    #[must_use]
    pub fn from_counters(
        now: &FlashCounters,
        before: &FlashCounters,
        timing: &Timing,
        buffer_ns: u64,
    ) -> Self {
        let copies = FlashCounters::total(&now.copies) - FlashCounters::total(&before.copies);
        let copy_ns = now.op_ns[Op::Copy as usize] - before.op_ns[Op::Copy as usize];
        let gc_read = (copies * timing.read_page_ns).min(copy_ns);
        // Reads and programs other than copies: the host's (and the wear leveler's, none yet);
        // a cleaner that reads or programs outside a copy would land here too.
        let read_ns = now.op_ns[Op::Read as usize] - before.op_ns[Op::Read as usize];
        let program_ns = now.op_ns[Op::Program as usize] - before.op_ns[Op::Program as usize];
        Self {
            data_read: read_ns,
            data_write: program_ns,
            gc_read,
            gc_write: copy_ns - gc_read,
            erase: now.op_ns[Op::Erase as usize] - before.op_ns[Op::Erase as usize],
            buffer: buffer_ns,
        }
    }

    #[must_use]
    pub fn total(&self) -> u64 {
        self.data_read + self.data_write + self.gc_read + self.gc_write + self.erase + self.buffer
    }
}

/// The DAC paper's ratio of segment write time to erase time in its cleaning cost.
pub const WRITE_TO_ERASE_RATIO: f64 = 0.75;

#[must_use]
pub fn cleaning_cost(erases: u64, copied_pages: u64, pages_per_block: u32) -> f64 {
    erases as f64 + copied_pages as f64 / f64::from(pages_per_block) * WRITE_TO_ERASE_RATIO
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_index_roundtrip() {
        for v in [0u64, 1, 31, 32, 33, 63, 64, 1000, 123_456, 10_000_000_000, u64::MAX / 3] {
            let i = LatencyHistogram::index(v);
            assert!(LatencyHistogram::lower(i) <= v, "v={v}");
            assert!(LatencyHistogram::lower(i + 1) > v, "v={v}");
        }
    }

    #[test]
    fn quantiles_within_bucket_error() {
        let mut h = LatencyHistogram::default();
        for v in 1..=100_000u64 {
            h.record(v * 1000);
        }
        let p50 = h.quantile(0.5) as f64;
        assert!((p50 / 50_000_000.0 - 1.0).abs() < 0.032, "{p50}");
        let p99 = h.quantile(0.99) as f64;
        assert!((p99 / 99_000_000.0 - 1.0).abs() < 0.032, "{p99}");
        assert_eq!(h.quantile(1.0), 100_000_000);
    }

    #[test]
    fn buckets_are_the_held_buckets_with_their_lowest_values() {
        let mut h = LatencyHistogram::default();
        // Below 32 every value has a bucket of its own; from 512 to 1023 the 32 sub-buckets
        // are 16 wide: 1000 and 1005 share [992, 1008), 1010 is in [1008, 1024).
        for v in [3, 3, 31, 1000, 1005, 1010] {
            h.record(v);
        }
        assert_eq!(h.buckets(), vec![[3, 2], [31, 1], [992, 2], [1008, 1]]);
        assert_eq!(LatencyHistogram::default().buckets(), Vec::<[u64; 2]>::new());
    }

    #[test]
    fn wear_summary_exact() {
        let w = WearSummary::from_counts(&[1, 1, 3, 3]);
        assert_eq!(w.mean, 2.0);
        assert_eq!(w.stddev, 1.0);
        assert_eq!(w.max, 3);
        assert_eq!(w.histogram, vec![[1, 2], [3, 2]]);
    }

    #[test]
    fn wear_stats_agree_with_the_summary() {
        let counts = [0, 7, 3, 3, 1, 12, 5, 0, 9];
        let s = WearStats::from_counts(&counts);
        let w = WearSummary::from_counts(&counts);
        assert_eq!((s.mean, s.stddev, s.min, s.max), (w.mean, w.stddev, w.min, w.max));
        assert_eq!(WearStats::from_counts(&[]), WearStats::default());
        let exact = WearStats::from_counts(&[1, 1, 3, 3]);
        assert_eq!((exact.mean, exact.stddev, exact.min, exact.max), (2.0, 1.0, 1, 3));
    }

    #[test]
    fn cleaning_cost_formula() {
        assert_eq!(cleaning_cost(10, 64, 32), 10.0 + 2.0 * 0.75);
    }
}
