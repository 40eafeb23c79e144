//! Symptom diagnosis from a PBR result (benchmarks paper §3, its Figures 1–3, docs/PAPERS.md;
//! docs/ALGORITHMS.md §8).
//!
//! The paper names three symptoms from the 3-D view of a replay (request index × LBA × PBR):
//! a **suboptimal write buffer** (very low PBRs broken by bursts of high ones), **suboptimal
//! mapping** (high PBRs scattered over a wide LBA range: log-block thrashing) and **suboptimal
//! garbage collection** (high PBRs dense in a small LBA range and a short time). It gives no
//! numbers; ours, calibrated on simulated devices built to have each symptom
//! (`tests/diagnose.rs`), are:
//!
//! - the **floor** F = the 1st percentile PBR (what the device's fastest path costs); a write is
//!   **high** when its PBR ≥ 8 F, **low** when ≤ 2 F;
//! - **buffer**: at least 10 % of the writes are low and the median high write is at least
//!   200 × F — a gap no flash path explains (a RAM copy against a NAND program: two orders of
//!   magnitude), so the low writes never reached the flash and the high ones paid for them;
//! - **mapping**: at least 25 % of the writes are high and they are spread over at least half
//!   of the written LBA range (their 5th–95th percentile span ÷ that of all writes);
//! - **GC**: at least 0.5 % of the writes are high (stalls on an otherwise steady device);
//! - **none** otherwise. The first that holds, in this order, is the diagnosis.
//!
//! Each criterion's score is its measured value ÷ its threshold, capped at 1 (1 = met), so a
//! user sees how near a healthy device is to each symptom. The evidence names where the high
//! writes are: their LBA span, and the window of 1 % of the writes holding most of them.

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
    /// 5th and 95th percentile offsets of the high writes (bytes).
    pub high_lba_bytes: [u64; 2],
    /// The window of 1 % of the writes (request indices, end exclusive) holding the most high
    /// writes, and the share of all high writes in it.
    pub densest_window: [u64; 2],
    pub densest_window_share: f64,
    /// Scores in [0, 1] (1: every criterion of that symptom met).
    pub buffer_score: f64,
    pub mapping_score: f64,
    pub gc_score: f64,
}

/// A diagnosis: the symptom, what it means and what to try, and the evidence.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Diagnosis {
    pub symptom: Symptom,
    pub explanation: String,
    pub evidence: Evidence,
}

/// Thresholds (see the module doc).
const HIGH: f64 = 8.0;
const LOW: f64 = 2.0;
const BUFFER_LOW_SHARE: f64 = 0.10;
const BUFFER_GAP: f64 = 200.0;
const MAPPING_HIGH_SHARE: f64 = 0.25;
const MAPPING_SPREAD: f64 = 0.5;
const GC_HIGH_SHARE: f64 = 0.005;

fn quantile(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

fn span(offsets: &mut [u64]) -> (u64, u64) {
    offsets.sort_unstable();
    let q = |x: f64| offsets[((offsets.len() - 1) as f64 * x).round() as usize];
    (q(0.05), q(0.95))
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
    let score = |x: f64, at: f64| (x / at).min(1.0);
    let buffer_score = score(low_share, BUFFER_LOW_SHARE) * score(gap, BUFFER_GAP);
    let mapping_score = score(high_share, MAPPING_HIGH_SHARE) * score(spread, MAPPING_SPREAD);
    let gc_score = score(high_share, GC_HIGH_SHARE);
    let evidence = Evidence {
        writes: n as u64,
        floor_ns_per_byte: floor,
        median_ns_per_byte: median,
        high_ns_per_byte: high_at,
        high_share,
        low_share,
        gap,
        high_lba_spread: spread,
        high_lba_bytes: [hi_lo, hi_hi],
        densest_window: [best_start as u64, (best_start + w) as u64],
        densest_window_share: if high.is_empty() { 0.0 } else { best as f64 / high.len() as f64 },
        buffer_score,
        mapping_score,
        gc_score,
    };
    let (symptom, explanation) = verdict(&evidence);
    Diagnosis { symptom, explanation, evidence }
}

/// The symptom the scores point at (buffer first, then mapping, then cleaning) and its
/// explanation in words, with the evidence's figures.
fn verdict(evidence: &Evidence) -> (Symptom, String) {
    let pct = |x: f64| format!("{:.1} %", 100.0 * x);
    let floor = evidence.floor_ns_per_byte;
    let high_at = evidence.high_ns_per_byte;
    let (high_share, low_share, gap) = (evidence.high_share, evidence.low_share, evidence.gap);
    let spread = evidence.high_lba_spread;
    if evidence.buffer_score >= 1.0 {
        (
            Symptom::Buffer,
            format!(
                "suboptimal write buffer: {} of the writes complete at the floor ({:.3} ns/B) \
                 while the slow ones take {:.0}x that — the buffer absorbs writes, then stalls \
                 them to write back. Try a larger or flash-aware buffer (block-level victims: \
                 FAB, BPLRU), or writes aligned to the effective page so they need no read.",
                pct(low_share),
                floor,
                gap
            ),
        )
    } else if evidence.mapping_score >= 1.0 {
        (
            Symptom::Mapping,
            format!(
                "suboptimal mapping: {} of the writes are slow (>= {:.1} ns/B), spread over {} \
                 of the written address range — the mapping thrashes (log blocks merged again \
                 and again). Try a finer mapping (page-mapped or FAST), more log blocks, or \
                 writes gathered into fewer, larger sequential runs.",
                pct(high_share),
                high_at,
                pct(spread)
            ),
        )
    } else if evidence.gc_score >= 1.0 {
        (
            Symptom::Gc,
            format!(
                "suboptimal garbage collection: {} of the writes stall (>= {:.1} ns/B), {} of \
                 them within writes {}..{} — cleaning blocks the writes that need space. Try \
                 more over-provisioning (lower utilization), background cleaning, or a \
                 cleaning policy that separates hot from cold data (DAC, cost-benefit, CAT).",
                pct(high_share),
                high_at,
                pct(evidence.densest_window_share),
                evidence.densest_window[0],
                evidence.densest_window[1]
            ),
        )
    } else {
        (
            Symptom::None,
            format!(
                "none: {} of the writes are slow (>= 8x the floor of {:.3} ns/B); responses \
                 are steady.",
                pct(high_share),
                floor
            ),
        )
    }
}
