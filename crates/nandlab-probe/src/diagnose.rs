//! Symptom diagnosis from a PBR result (benchmarks paper §3, its Figures 1–3, docs/PAPERS.md;
//! docs/ALGORITHMS.md §8).
//!
//! The paper names three symptoms from the 3-D view of a replay (request index × LBA × PBR):
//! a **suboptimal write buffer** (very low PBRs broken by bursts of high ones), **suboptimal
//! mapping** (high PBRs scattered over a wide LBA range: log-block thrashing) and **suboptimal
//! garbage collection** (stalls on an otherwise steady device). It gives no numbers. Ours
//! score each symptom on its own signature, so that the verdict rests on which picture the
//! data fit best rather than on the order the rules are tried in; they were calibrated on a
//! matrix of simulated devices built to have each symptom, or none (`tests/diagnose.rs`,
//! `experiments/diagnosis/`).
//!
//! **Figures.** The **floor** F = the 1st percentile PBR (the device's fastest path). A write
//! is **low** when its PBR ≤ 2 F (it took the fastest path: share `low_share`), **high** when
//! ≥ 8 F (share `high_share`). The **gap** = the median high write ÷ F. The high writes'
//! **LBA spread** = their 5th–95th percentile offset span ÷ that of all writes; their **time
//! coverage** = the share of the 100 windows of 1 % of the writes (by request index) that hold
//! at least one of them. With `sat(x, t) = x / (x + t)` (0.5 at x = t, smooth, never capped)
//! and the **two-orders factor** `g = gap² / (gap² + 100²)` (0.06 at 25×, 0.5 at 100×, 0.8
//! at 200×: how surely the slow writes are a different medium from the fast ones), each score
//! is a product of factors in [0, 1]:
//!
//! - **buffer** = √`low_share` × g × sat(`high_share`, 0.2 %). A RAM buffer makes a bimodal
//!   series: absorbed writes at the floor (a RAM copy) and write-backs that pay a NAND
//!   program, two orders of magnitude above (the generic preset: 200 µs against 1 µs a
//!   page). The square root lets a buffer that absorbs a minority of the writes still count
//!   (an LRU buffer under a write stream with few hits absorbs 40 %); the last factor asks
//!   that slow writes exist at all.
//! - **mapping** = `high_share` × spread × time coverage × (1 − `low_share`)². Log-block
//!   thrashing makes slow writes the common case, everywhere in the address range and all
//!   the time (every write to a block without a log block pays a merge). The last factor is
//!   the evidence against it: writes that complete at the floor escaped the flash path, so
//!   when many do, the slow ones are write-backs of a buffer (bimodal, as above), not merges
//!   — a thrashing mapping leaves few writes at the floor (≤ 20 % in our cases, against
//!   ≥ 40 % behind a buffer).
//! - **GC** = sat(`high_share`, 0.5 %) × 0.25 ÷ (`high_share` + 0.25) × (1 − g). Foreground
//!   cleaning stalls the write that finds the free pool empty: stalls exist (the first factor)
//!   but are rare, one per victim reclaimed (1–8 % of the writes in our cases; the second
//!   factor halves the score at 25 %, where slow writes are the rule — thrashing, not
//!   cleaning), and they cost the copies of one victim's valid pages plus an erase, under two
//!   orders of magnitude above a program (the last factor: 12–70× in our cases). On these
//!   devices the stalls are not clustered in LBA (the stalled write is whichever comes next:
//!   spread 0.93–1.0) but recur steadily in time; what sets them apart from thrashing is that
//!   they are rare, and from a buffer that they sit less than two orders above a floor that
//!   is itself a flash program.
//!
//! **Verdict.** The highest score, when it is at least 0.3 (`SCORE_MIN`) and at least 1.5 ×
//! the runner-up (`MARGIN_MIN`); otherwise **none** (nothing stands out, or two pictures fit
//! about as well: the explanation names them). In the calibration matrix the winners score
//! 0.48–0.96, the runners-up at most 0.30, the smallest winning ratio is 1.7 (page FTL at 90 %
//! utilization under aligned random writes: its 69× stalls give the buffer score 0.30), and
//! healthy devices score 0 everywhere. 1.5 sits under that 1.7 and well above the 1.0 of a
//! replay two pictures fit equally. `margin` = the winner ÷ the runner-up (the runner-up
//! taken as at least 0.001, so the ratio stays finite).
//!
//! Known limits (rows marked "boundary" in `experiments/diagnosis/RESULTS.md`): a buffer under
//! unaligned writes whose floor is two RAM pages and whose write-backs are read-modify-writes
//! has a gap under two orders (62×) and is called none; FAST under random writes merges its
//! shared random log periodically, which looks like (and costs like) cleaning, and is called
//! GC. Simulated buffers write back in the foreground and start full of the prefill's dirty
//! pages, so a large one (32 MiB LRU, 64 MiB FAB) still stalls writes behind its write-backs
//! and is called buffer, rightly by the picture; only a buffer holding every page the replay
//! touches is healthy. The floor is the 1st percentile, so a device on which more than 99 % of
//! the writes are slow shows no symptom: its floor is the slow path.
//!
//! The evidence also names where the high writes are: their LBA span, and the window of 1 % of
//! the writes holding most of them.

use serde::Serialize;

use crate::pbr::{PbrPoint, PbrResult};

impl PbrResult {
    /// The symptom diagnosis of this replay (`diagnose`).
    #[must_use]
    pub fn diagnose(&self) -> Diagnosis {
        diagnose(&self.points)
    }

    /// Summary figures (JSON): the target, the trace, counts, PBR quantiles and the diagnosis.
    #[must_use]
    pub fn summary(&self) -> serde_json::Value {
        let mut pbr: Vec<f64> = self.points.iter().map(PbrPoint::pbr_ns_per_byte).collect();
        pbr.sort_by(f64::total_cmp);
        let q = |x: f64| pbr[((x * (pbr.len() - 1) as f64).round()) as usize];
        let bytes: u64 = self.points.iter().map(|p| p.length_bytes).sum();
        let ns: u64 = self.points.iter().map(|p| p.response_ns).sum();
        serde_json::json!({
            "target": self.target,
            "trace": self.trace,
            "simulated": self.simulated,
            "capacity_bytes": self.capacity_bytes,
            "writes": self.points.len(),
            "write_bytes": bytes,
            "response_ns_total": ns,
            "mb_per_s": if ns == 0 { 0.0 } else { bytes as f64 / ns as f64 * 1e3 },
            "wrapped": self.wrapped,
            "skipped": self.skipped,
            "pbr_ns_per_byte": {"p50": q(0.5), "p90": q(0.9), "p99": q(0.99), "max": q(1.0),
                "mean": ns as f64 / bytes.max(1) as f64},
            "diagnosis": self.diagnose(),
            "config": self.config,
            "version": nandlab_version::VERSION_STRING,
        })
    }
}

/// What the replay shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Symptom {
    None,
    Buffer,
    Mapping,
    Gc,
}

impl Symptom {
    /// The name in JSON and on the terminal.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Buffer => "buffer",
            Self::Mapping => "mapping",
            Self::Gc => "gc",
        }
    }
}

/// The figures a diagnosis rests on.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Evidence {
    pub writes: u64,
    pub floor_ns_per_byte: f64,
    pub median_ns_per_byte: f64,
    /// High-write threshold, 8 × the floor.
    pub high_ns_per_byte: f64,
    pub high_share: f64,
    pub low_share: f64,
    /// Median high write ÷ floor.
    pub gap: f64,
    /// 5th–95th percentile LBA span of the high writes ÷ that of all writes (at most 1).
    pub high_lba_spread: f64,
    /// Share of the 100 windows of 1 % of the writes that hold a high write.
    pub high_time_coverage: f64,
    /// 5th and 95th percentile offsets of the high writes (bytes).
    pub high_lba_bytes: [u64; 2],
    /// The window of 1 % of the writes (request indices, end exclusive) holding the most high
    /// writes, and the share of all high writes in it.
    pub densest_window: [u64; 2],
    pub densest_window_share: f64,
    /// Scores in [0, 1], each from its own symptom's signature (module doc).
    pub buffer_score: f64,
    pub mapping_score: f64,
    pub gc_score: f64,
    /// The symptom with the second highest score.
    pub runner_up: Symptom,
    /// The highest score ÷ the runner-up's (the runner-up taken as at least 0.001).
    pub margin: f64,
}

/// A diagnosis: the symptom, what it means and what to try, and the evidence.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Diagnosis {
    pub symptom: Symptom,
    pub explanation: String,
    pub evidence: Evidence,
}

/// A write is high at this many times the floor, low at `LOW` times.
const HIGH: f64 = 8.0;
const LOW: f64 = 2.0;
/// The gap at which the two-orders factor is 0.5: a RAM copy against a NAND program.
const TWO_ORDERS: f64 = 100.0;
/// High-write share at which the buffer's "slow writes exist" factor is 0.5.
const BUFFER_HIGH_SHARE: f64 = 0.002;
/// High-write shares at which the GC score's "stalls exist" and "stalls are rare" factors
/// are 0.5.
const GC_HIGH_SHARE: f64 = 0.005;
const GC_RARE_SHARE: f64 = 0.25;
/// The winner must score at least this...
pub const SCORE_MIN: f64 = 0.3;
/// ...and at least this many times the runner-up.
pub const MARGIN_MIN: f64 = 1.5;
/// The runner-up's score is taken as at least this in the margin (a finite ratio).
const RUNNER_UP_MIN: f64 = 0.001;

fn quantile(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

fn span(offsets: &mut [u64]) -> (u64, u64) {
    offsets.sort_unstable();
    let q = |x: f64| offsets[((offsets.len() - 1) as f64 * x).round() as usize];
    (q(0.05), q(0.95))
}

/// x / (x + t): 0 at 0, 0.5 at t, towards 1 above — a soft threshold that keeps the margin.
fn sat(x: f64, t: f64) -> f64 {
    if x <= 0.0 {
        0.0
    } else {
        x / (x + t)
    }
}

/// The three scores from the figures (module doc).
fn scores(high_share: f64, low_share: f64, gap: f64, spread: f64, time_coverage: f64) -> [f64; 3] {
    let two_orders = gap * gap / (gap * gap + TWO_ORDERS * TWO_ORDERS);
    let buffer = low_share.sqrt() * two_orders * sat(high_share, BUFFER_HIGH_SHARE);
    let mapping = high_share * spread * time_coverage * (1.0 - low_share).powi(2);
    let gc = sat(high_share, GC_HIGH_SHARE) * GC_RARE_SHARE / (high_share + GC_RARE_SHARE)
        * (1.0 - two_orders);
    [buffer, mapping, gc]
}

/// Diagnoses a PBR series (at least one write).
#[must_use]
pub fn diagnose(points: &[PbrPoint]) -> Diagnosis {
    assert!(!points.is_empty(), "a PBR result has writes");
    let pbr: Vec<f64> = points.iter().map(PbrPoint::pbr_ns_per_byte).collect();
    let mut sorted = pbr.clone();
    sorted.sort_by(f64::total_cmp);
    let n = points.len();
    let floor = quantile(&sorted, 0.01).max(f64::MIN_POSITIVE);
    let median = quantile(&sorted, 0.5);
    let high_at = HIGH * floor;
    let high: Vec<usize> = (0..n).filter(|&i| pbr[i] >= high_at).collect();
    let high_share = high.len() as f64 / n as f64;
    let low_share = pbr.iter().filter(|&&p| p <= LOW * floor).count() as f64 / n as f64;
    let mut high_pbr: Vec<f64> = high.iter().map(|&i| pbr[i]).collect();
    high_pbr.sort_by(f64::total_cmp);
    let gap = if high_pbr.is_empty() { 0.0 } else { quantile(&high_pbr, 0.5) / floor };
    let (all_lo, all_hi) = span(&mut points.iter().map(|p| p.offset_bytes).collect::<Vec<_>>());
    let (hi_lo, hi_hi) = if high.is_empty() {
        (0, 0)
    } else {
        span(&mut high.iter().map(|&i| points[i].offset_bytes).collect::<Vec<_>>())
    };
    let spread = if high.is_empty() {
        0.0
    } else {
        ((hi_hi - hi_lo) as f64 / (all_hi - all_lo).max(1) as f64).min(1.0)
    };
    // Time coverage: which of 100 equal slices of the request index hold a high write.
    let mut slices = [false; 100];
    for &i in &high {
        slices[i * 100 / n] = true;
    }
    let time_coverage = slices.iter().filter(|&&s| s).count() as f64 / 100.0;
    // The densest window of 1 % of the writes (two pointers over the high writes' indices).
    let w = (n / 100).max(1);
    let (mut best, mut best_start, mut j) = (0usize, 0usize, 0usize);
    for i in 0..high.len() {
        while high[i] - high[j] >= w {
            j += 1;
        }
        if i + 1 - j > best {
            best = i + 1 - j;
            best_start = high[j];
        }
    }
    let [buffer_score, mapping_score, gc_score] =
        scores(high_share, low_share, gap, spread, time_coverage);
    let mut ranked = [
        (Symptom::Buffer, buffer_score),
        (Symptom::Mapping, mapping_score),
        (Symptom::Gc, gc_score),
    ];
    // Stable: on a tie the earlier symptom ranks first (the verdict is none then anyway).
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
    let margin = ranked[0].1 / ranked[1].1.max(RUNNER_UP_MIN);
    let evidence = Evidence {
        writes: n as u64,
        floor_ns_per_byte: floor,
        median_ns_per_byte: median,
        high_ns_per_byte: high_at,
        high_share,
        low_share,
        gap,
        high_lba_spread: spread,
        high_time_coverage: time_coverage,
        high_lba_bytes: [hi_lo, hi_hi],
        densest_window: [best_start as u64, (best_start + w) as u64],
        densest_window_share: if high.is_empty() { 0.0 } else { best as f64 / high.len() as f64 },
        buffer_score,
        mapping_score,
        gc_score,
        runner_up: ranked[1].0,
        margin,
    };
    let stands_out = ranked[0].1 >= SCORE_MIN && margin >= MARGIN_MIN;
    let symptom = if stands_out { ranked[0].0 } else { Symptom::None };
    let explanation = explain(symptom, ranked[0], ranked[1], &evidence);
    Diagnosis { symptom, explanation, evidence }
}

/// The verdict in words, with the evidence's figures.
fn explain(
    symptom: Symptom,
    best: (Symptom, f64),
    runner_up: (Symptom, f64),
    evidence: &Evidence,
) -> String {
    let pct = |x: f64| format!("{:.1} %", 100.0 * x);
    let floor = evidence.floor_ns_per_byte;
    let high_at = evidence.high_ns_per_byte;
    let (high_share, low_share, gap) = (evidence.high_share, evidence.low_share, evidence.gap);
    let spread = evidence.high_lba_spread;
    let why = format!(
        "{} score {:.2}, {:.1}x the runner-up ({} {:.2})",
        best.0.name(),
        best.1,
        evidence.margin,
        runner_up.0.name(),
        runner_up.1
    );
    match symptom {
        Symptom::Buffer => format!(
            "suboptimal write buffer ({why}): {} of the writes complete at the floor ({:.3} \
             ns/B) while the slow ones take {:.0}x that — the buffer absorbs writes, then \
             stalls them to write back. Try a larger or flash-aware buffer (block-level \
             victims: FAB, BPLRU), or writes aligned to the effective page so they need no \
             read.",
            pct(low_share),
            floor,
            gap
        ),
        Symptom::Mapping => format!(
            "suboptimal mapping ({why}): {} of the writes are slow (>= {:.1} ns/B), spread \
             over {} of the written address range and {} of the replay — the mapping thrashes \
             (log blocks merged again and again). Try a finer mapping (page-mapped or FAST), \
             more log blocks, or writes gathered into fewer, larger sequential runs.",
            pct(high_share),
            high_at,
            pct(spread),
            pct(evidence.high_time_coverage)
        ),
        Symptom::Gc => format!(
            "suboptimal garbage collection ({why}): {} of the writes stall (>= {:.1} ns/B, \
             median {:.0}x the floor), {} of them within writes {}..{} — cleaning blocks the \
             writes that need space. Try more over-provisioning (lower utilization), \
             background cleaning, or a cleaning policy that separates hot from cold data \
             (DAC, cost-benefit, CAT).",
            pct(high_share),
            high_at,
            gap,
            pct(evidence.densest_window_share),
            evidence.densest_window[0],
            evidence.densest_window[1]
        ),
        Symptom::None if best.1 >= SCORE_MIN => format!(
            "none stands out: {why}, under the {MARGIN_MIN}x a verdict needs — the replay \
             shows traits of both; {} of the writes are slow (>= 8x the floor of {:.3} ns/B).",
            pct(high_share),
            floor
        ),
        Symptom::None => format!(
            "none: {} of the writes are slow (>= 8x the floor of {:.3} ns/B); responses are \
             steady (highest score {:.2}, under {SCORE_MIN}).",
            pct(high_share),
            floor,
            best.1
        ),
    }
}
