//! `lifetime`: nandlab's own online placement (docs/ALGORITHMS.md §11.6). Each write goes to the
//! region whose band holds the page's *predicted lifetime* — host page writes until its next
//! write — as the future-knowledge oracle does with the true one (`oracle.rs`), but predicted from
//! the page's own write history.
//!
//! Why: on workloads whose pages keep their write rates (hot/cold, Zipf), a page's mean write
//! interval is all its history can reveal about its next write, and banding pages by it beats
//! DAC's one-region-per-update steps; on workloads whose hot set moves (Zipf with drift), only the
//! last few intervals say anything. So each page keeps two estimates of its write interval and the
//! placement uses whichever has predicted the stream's intervals better lately:
//! - *slow*: the running arithmetic mean of the page's intervals (exact for the first
//!   `1 / SLOW_WEIGHT_MIN` intervals, then an exponentially weighted one), the rate estimate of a
//!   page that keeps its rate;
//! - *fast*: an exponentially weighted mean of the intervals' logarithms (weight `FAST_WEIGHT`),
//!   which follows a page whose rate just changed within a write or two.
//!
//! Each host write of a page that was written before scores both predictions against the interval
//! that just ended (squared error in log2, decayed over about 1 / `ERROR_DECAY` writes). A page
//! written for the first time goes to the Bottom (nothing is known about it). A page the cleaner
//! copies has lived `age` host writes since its last write, which says it is likely colder than
//! its estimate: with the slow estimate (a steady rate), the age counts as one more interval, so a
//! mean of n intervals grows by age / n (n at most 10, the estimate's memory); with the fast one
//! (a rate that may have just changed), the prediction is the larger of the estimate and the age.
//!
//! Memory: 8 B per logical page (the last write's time, both estimates and a 4-bit write
//! count), beyond the region byte every placement has. Time is counted in host page writes, kept
//! by the placement itself, so a restarted drive simply starts with no history (placement never
//! decides which data is current). It does not use the page FTL's write clock
//! (`Placement::needs_write_clock`, `PageState::last_write`): that keeps each page's last write
//! in a table of its own, a second cache miss per write and per copy beside this history; here
//! the last write shares the history's 8 bytes.
//!
//! The default bands (`ftl.lifetime_bands_passes`, for 6 regions) were found by a local search on
//! the three reference placement traces with the prototype in experiments/placement/bounds/; for
//! other region counts they are spaced geometrically over the same range.

use std::sync::Arc;

use super::{PageState, Placement, PlacementEntry, PlacementSpec};
use crate::error::ConfigError;
use crate::flash::{Geometry, Lpn};
use crate::ftl::FtlConfig;
use crate::spec::{check, Param, Params};

pub(super) const ENTRY: PlacementEntry = PlacementEntry {
    name: "lifetime",
    params: &[Param::omitted("ftl", "lifetime_bands_passes")],
    resolve,
};

/// The default bands for 6 regions, in logical passes (host page writes ÷ logical pages).
const DEFAULT_BANDS_6: [f64; 5] = [0.0017, 0.0073, 0.0857, 1.05, 3.15];
/// Weight of the newest interval's log2 in the fast estimate.
const FAST_WEIGHT: f64 = 0.5;
/// The slow estimate averages the first `SLOW_INTERVALS_EXACT` intervals exactly, then weighs the
/// newest by `SLOW_WEIGHT_MIN` = 1 / that.
const SLOW_INTERVALS_EXACT: u16 = 10;
const SLOW_WEIGHT_MIN: f64 = 1.0 / SLOW_INTERVALS_EXACT as f64;
/// Per scored write, the fraction of the accumulated prediction error forgotten.
const ERROR_DECAY: f64 = 1e-5;
/// E[ln X] = ln E[X] − γ for an exponential X: the fast (log) estimate sits γ / ln 2 bits below
/// the log2 of the mean the slow one estimates. Scoring the slow one shifted by it compares the
/// two on the same footing.
const EULER_GAMMA_BITS: f64 = 0.577_215_664_901_532_9 / std::f64::consts::LN_2;
/// Fixed-point scales of the stored log2 values.
const FAST_SCALE: f64 = 2048.0;
const SLOW_SCALE: f64 = 128.0;
const SLOW_MASK: u16 = 0x0fff;
const COUNT_SHIFT: u32 = 12;
const WRITES_MAX: u16 = 15;

#[derive(Clone, Debug)]
struct LifetimeSpec {
    regions: u32,
    bands_passes: Vec<f64>,
}

fn resolve(f: &mut FtlConfig, params: &mut Params<'_>) -> Result<Arc<dyn PlacementSpec>, ConfigError> {
    let regions = *f.regions.get_or_insert(6);
    check((2..=64).contains(&regions), "ftl.regions", "lifetime needs between 2 and 64 regions")?;
    let bands = params.or("lifetime_bands_passes", default_bands(regions))?;
    super::check_bands("ftl.lifetime_bands_passes", &bands, regions)?;
    Ok(Arc::new(LifetimeSpec { regions, bands_passes: bands }))
}

/// The tuned bands for 6 regions; otherwise `regions - 1` boundaries spaced geometrically from
/// the first tuned boundary to the last.
fn default_bands(regions: u32) -> Vec<f64> {
    if regions == 6 {
        return DEFAULT_BANDS_6.to_vec();
    }
    let (lo, hi) = (DEFAULT_BANDS_6[0], DEFAULT_BANDS_6[4]);
    let n = regions - 1;
    if n == 1 {
        return vec![(lo * hi).sqrt()];
    }
    (0..n).map(|i| lo * (hi / lo).powf(f64::from(i) / f64::from(n - 1))).collect()
}

impl PlacementSpec for LifetimeSpec {
    fn name(&self) -> &'static str {
        ENTRY.name
    }
    fn regions(&self) -> u32 {
        self.regions
    }
    /// A victim's pages may go to any band.
    fn cleaner_destinations_max(&self) -> u32 {
        self.regions
    }
    /// Each page's last write time and two interval estimates.
    fn bytes_per_logical_page(&self) -> u64 {
        std::mem::size_of::<History>() as u64
    }
    fn build(
        &self,
        geometry: &Geometry,
        _: u32,
        _: Option<Vec<u32>>,
    ) -> Result<Box<dyn Placement>, ConfigError> {
        let logical = geometry.logical_pages as f64;
        let boundaries = self.bands_passes.iter().map(|p| (p * logical).log2()).collect();
        Ok(Box::new(Lifetime::new(self.regions, boundaries, geometry.logical_pages)))
    }
}

/// One logical page's write history.
#[derive(Clone, Copy, Debug, Default)]
struct History {
    /// The placement's clock at the page's last host write (wrapping).
    last_write: u32,
    /// log2 of the fast estimate, × `FAST_SCALE`.
    fast: u16,
    /// Bits 12..16: host writes seen (`writes`); bits 0..12: log2 of the slow estimate,
    /// × `SLOW_SCALE` (both estimates are meaningful from the second write on).
    slow: u16,
}

impl History {
    /// Host writes seen, saturating at `WRITES_MAX` (0: never written).
    fn writes(self) -> u16 {
        self.slow >> COUNT_SHIFT
    }
    fn fast_bits(self) -> f64 {
        f64::from(self.fast) / FAST_SCALE
    }
    fn slow_bits(self) -> f64 {
        f64::from(self.slow & SLOW_MASK) / SLOW_SCALE
    }
}

pub struct Lifetime {
    regions: u32,
    /// Band boundaries: log2 of host page writes, ascending.
    boundaries: Vec<f64>,
    history: Vec<History>,
    /// Host page writes so far (wrapping).
    clock: u32,
    /// Decayed squared log2 errors of the two estimates.
    fast_error: f64,
    slow_error: f64,
}

impl Lifetime {
    fn new(regions: u32, boundaries: Vec<f64>, logical_pages: u64) -> Self {
        assert_eq!(boundaries.len() + 1, regions as usize);
        Self {
            regions,
            boundaries,
            history: vec![History::default(); logical_pages as usize],
            clock: 0,
            fast_error: 0.0,
            slow_error: 0.0,
        }
    }

    /// The band of a predicted lifetime (log2 of host page writes): the shortest go to the Top.
    fn region_for(&self, bits: f64) -> u8 {
        super::band_region(&self.boundaries, &bits)
    }

    /// The estimate that has predicted better lately, as log2 of host page writes.
    fn estimate(&self, h: History) -> f64 {
        if self.fast_error < self.slow_error {
            h.fast_bits()
        } else {
            h.slow_bits()
        }
    }

    /// Scores both estimates against an interval that just ended, then folds it into them.
    fn observe(&mut self, h: &mut History, interval: u32) {
        let writes = h.writes();
        debug_assert!(writes >= 1, "an interval ends at a page's second write or later");
        let bits = log2_approx(f64::from(interval) + 1.0);
        if writes == 1 {
            h.fast = quantize(bits, FAST_SCALE, u16::MAX);
            h.slow = (2 << COUNT_SHIFT) | quantize(bits, SLOW_SCALE, SLOW_MASK);
            return;
        }
        let fast_miss = bits - h.fast_bits();
        let slow_miss = bits - h.slow_bits() + EULER_GAMMA_BITS;
        self.fast_error += fast_miss * fast_miss - self.fast_error * ERROR_DECAY;
        self.slow_error += slow_miss * slow_miss - self.slow_error * ERROR_DECAY;
        h.fast = quantize(h.fast_bits() + FAST_WEIGHT * fast_miss, FAST_SCALE, u16::MAX);
        let writes = (writes + 1).min(WRITES_MAX);
        // The k-th interval weighs 1/k (the running mean), never less than the floor.
        let weight = (1.0 / f64::from(writes - 1)).max(SLOW_WEIGHT_MIN);
        let mean = exp2_approx(h.slow_bits());
        let mean = mean + weight * (f64::from(interval) + 1.0 - mean);
        h.slow = (writes << COUNT_SHIFT) | quantize(log2_approx(mean), SLOW_SCALE, SLOW_MASK);
    }
}

/// log2 of `x ≥ 1`, within 0.0014: the exponent plus a cubic fit of log2 over the mantissa.
/// The library's `log2` costs tens of nanoseconds; this runs on every host write and copy, and the
/// estimates it feeds are far noisier than its error.
fn log2_approx(x: f64) -> f64 {
    debug_assert!(x >= 1.0);
    let b = x.to_bits();
    let exponent = ((b >> 52) & 0x7ff) as f64 - 1023.0;
    let m = f64::from_bits((b & ((1 << 52) - 1)) | (1023 << 52)) - 1.0;
    exponent + ((0.153_914_771 * m - 0.567_755_742) * m + 1.413_487_922) * m + 0.001_334_104
}

/// 2^`y` for `0 ≤ y < 1024`, within 0.02 %: a cubic fit of 2^f over the fraction, scaled by the
/// integer part through the exponent bits.
fn exp2_approx(y: f64) -> f64 {
    debug_assert!((0.0..1024.0).contains(&y));
    let whole = y.floor();
    let f = y - whole;
    let p = ((0.079_019_992 * f + 0.224_126_659) * f + 0.696_838_317) * f + 0.999_812_018;
    p * f64::from_bits((whole as u64 + 1023) << 52)
}

/// `bits × scale`, rounded and clamped to `0..=max`.
fn quantize(bits: f64, scale: f64, max: u16) -> u16 {
    (bits * scale).round().clamp(0.0, f64::from(max)) as u16
}

impl Placement for Lifetime {
    fn name(&self) -> &'static str {
        ENTRY.name
    }

    fn regions(&self) -> u32 {
        self.regions
    }

    /// The history is a random access per host write and per copy: on a large device, a cache
    /// miss each unless asked for early.
    fn wants_prefetch(&self) -> bool {
        true
    }

    fn prefetch(&self, lpn: Lpn) {
        nandlab_prefetch::prefetch(&self.history, lpn.index());
    }

    fn host_write(&mut self, lpn: Lpn, _current: Option<PageState>, _now_ns: u64) -> u8 {
        let now = self.clock;
        self.clock = self.clock.wrapping_add(1);
        let mut h = self.history[lpn.index()];
        let region = if h.writes() == 0 {
            // Nothing is known of a page before its first write: the Bottom.
            h.slow = 1 << COUNT_SHIFT;
            0
        } else {
            let interval = now.wrapping_sub(h.last_write);
            self.observe(&mut h, interval);
            self.region_for(self.estimate(h))
        };
        h.last_write = now;
        self.history[lpn.index()] = h;
        region
    }

    fn cleaner_copy(&mut self, lpn: Lpn, _current: PageState, _now_ns: u64) -> u8 {
        let h = self.history[lpn.index()];
        if h.writes() <= 1 {
            // No interval seen (or no history since a restart): the Bottom, as at a first write.
            return 0;
        }
        let age = f64::from(self.clock.wrapping_sub(h.last_write)) + 1.0;
        let bits = if self.fast_error < self.slow_error {
            // The fast estimate stands for a rate that may have just changed: the page has
            // lived at least its age.
            h.fast_bits().max(log2_approx(age))
        } else {
            // A page that keeps its rate: its age is one more (unfinished) interval, so the
            // mean of n intervals grows by age / n — the posterior mean of an exponential
            // interval given that it has lasted `age` so far.
            let intervals = f64::from((h.writes() - 1).min(SLOW_INTERVALS_EXACT));
            log2_approx(exp2_approx(h.slow_bits()) + age / intervals)
        };
        self.region_for(bits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lifetime(regions: u32, bands: &[f64]) -> Lifetime {
        Lifetime::new(regions, bands.to_vec(), 16)
    }

    fn state() -> Option<PageState> {
        Some(PageState::default())
    }

    #[test]
    fn first_write_goes_to_the_bottom_and_a_short_interval_to_the_top() {
        let mut p = lifetime(3, &[2.0, 100f64.log2()]);
        assert_eq!(p.host_write(Lpn::new(1), None, 0), 0);
        // Written again right away: interval 1, predicted 2 writes, below 4: the Top.
        assert_eq!(p.host_write(Lpn::new(1), state(), 0), 2);
        for _ in 0..10 {
            p.host_write(Lpn::new(2), state(), 0);
        }
        // Page 1's interval is now 11: the running mean of 2 and 12 is 7 writes, between the
        // bands (4 and 100): the middle.
        assert_eq!(p.host_write(Lpn::new(1), state(), 0), 1);
    }

    #[test]
    fn a_copy_is_predicted_to_live_at_least_its_age() {
        let mut p = lifetime(3, &[3.0, 100f64.log2()]);
        p.host_write(Lpn::new(1), None, 0);
        p.host_write(Lpn::new(1), state(), 0);
        // Interval 1 seen (estimate 2 writes), age 1 (+1): 2 + 2 / 1 = 4 writes, below 8: the Top.
        assert_eq!(p.cleaner_copy(Lpn::new(1), PageState::default(), 0), 2);
        // First writes of other pages move the clock without scoring the estimates.
        p.host_write(Lpn::new(2), None, 0);
        p.host_write(Lpn::new(3), None, 0);
        // Age 3 (+1): 2 + 4 = 6 writes, still the Top; two writes later 2 + 6 = 8: the middle.
        assert_eq!(p.cleaner_copy(Lpn::new(1), PageState::default(), 0), 2);
        p.host_write(Lpn::new(4), None, 0);
        p.host_write(Lpn::new(5), None, 0);
        assert_eq!(p.cleaner_copy(Lpn::new(1), PageState::default(), 0), 1);
        for _ in 0..200 {
            p.host_write(Lpn::new(6), state(), 0);
        }
        // 200 writes old: 2 + 205 / 1 writes, beyond the last band.
        assert_eq!(p.cleaner_copy(Lpn::new(1), PageState::default(), 0), 0);
        // Never rewritten: the Bottom.
        assert_eq!(p.cleaner_copy(Lpn::new(3), PageState::default(), 0), 0);
    }

    #[test]
    fn the_slow_estimate_is_the_running_mean_of_the_first_intervals() {
        let mut p = lifetime(2, &[1e9]);
        let mut h = History { slow: 1 << COUNT_SHIFT, ..History::default() };
        for interval in [9u32, 29, 59] {
            p.observe(&mut h, interval);
        }
        // Mean of 10, 30, 60 = 33.3; stored as log2 with 1/128 resolution.
        assert!((h.slow_bits().exp2() - 100.0 / 3.0).abs() < 0.3, "{}", h.slow_bits().exp2());
        assert_eq!(h.writes(), 4);
        // Fast: log2 weighted 1/2 each step from log2(10): 0.5·log2 10 + ... ≈ log2 of 38.7
        let expected = 0.25 * 10f64.log2() + 0.25 * 30f64.log2() + 0.5 * 60f64.log2();
        assert!((h.fast_bits() - expected).abs() < 3e-3);
    }

    #[test]
    fn the_estimate_that_predicts_better_is_used() {
        // Intervals drawn from one exponential distribution (a page that keeps its rate): the
        // running mean predicts them better than the log-mean that chases the last ones.
        let mut p = lifetime(2, &[1e9]);
        let mut h = History { slow: 1 << COUNT_SHIFT, ..History::default() };
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        for _ in 0..2000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let u = (state >> 11) as f64 / (1u64 << 53) as f64;
            p.observe(&mut h, (-(1.0 - u).ln() * 1000.0) as u32);
        }
        assert!(p.slow_error < p.fast_error, "{} {}", p.slow_error, p.fast_error);
        assert_eq!(p.estimate(h), h.slow_bits());
        // A page whose interval jumps from 10 to 10,000 and back every 4 writes: the fast one
        // follows within a write or two and wins.
        let mut q = lifetime(2, &[1e9]);
        let mut g = History { slow: 1 << COUNT_SHIFT, ..History::default() };
        for i in 0..2000u32 {
            q.observe(&mut g, if (i / 4) % 2 == 0 { 10 } else { 10_000 });
        }
        assert!(q.fast_error < q.slow_error, "{} {}", q.fast_error, q.slow_error);
        assert_eq!(q.estimate(g), g.fast_bits());
    }

    #[test]
    fn the_approximations_hold_over_the_range_used() {
        let mut x = 1.0;
        while x < 4.3e9 {
            assert!((log2_approx(x) - x.log2()).abs() < 0.0014, "log2 {x}");
            x *= 1.37;
        }
        let mut y = 0.0;
        while y < 33.0 {
            assert!((exp2_approx(y) / y.exp2() - 1.0).abs() < 2e-4, "exp2 {y}");
            y += 0.013;
        }
    }

    #[test]
    fn default_bands_fit_any_region_count() {
        assert_eq!(default_bands(6), DEFAULT_BANDS_6.to_vec());
        assert_eq!(default_bands(2).len(), 1);
        let b = default_bands(9);
        assert_eq!(b.len(), 8);
        assert!(b.windows(2).all(|w| w[0] < w[1]));
        assert!((b[0] - 0.0017).abs() < 1e-12 && (b[7] - 3.15).abs() < 1e-9);
    }
}
