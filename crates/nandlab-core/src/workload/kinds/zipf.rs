//! `workload.kind = "zipf"`: random writes whose popularity follows Zipf's law over scattered
//! ranks, optionally drifting — the `zipf` and `zipfdrift` workloads of the project's reference
//! generator of placement traces (`../shared/reference/placement_traces.c`), whose drift is a
//! scaled form of SepBIT's synthetic workload (Wang et al., "Separating Data via Block
//! Invalidation Time Inference", FAST 2022, Exp. 5). docs/ALGORITHMS.md §10.1.
//!
//! **Model.** The logical pages are cut into request-sized units (`WorkloadSpec::request_units`:
//! single pages by default, runs of `workload.request_bytes` otherwise). Rank r = 1..n has
//! probability r^−θ / Σ_{j=1..n} j^−θ with θ = `workload.zipf_exponent` (θ = 0 is uniform); the
//! rank is turned into a unit by a seeded random permutation, so the hot units are scattered over
//! the logical space rather than contiguous. **Drift** (`workload.zipf_drift_fraction` f > 0):
//! every `workload.zipf_drift_every_writes` (K) host writes, starting with the first write after
//! the prefill, the units holding the top ⌊f·n⌋ ranks are shuffled among themselves, so the hot
//! set keeps its size and popularity but moves between those addresses — the reference's
//! `zipfdrift` is f = 0.2 and K = n / 100 (the default K). Reads (`workload.read_fraction`) draw
//! from the same distribution and do not count towards K.
//!
//! **Sampling** is Hörmann and Derflinger's rejection-inversion ("Rejection-inversion to
//! generate variates from monotone discrete distributions", ACM TOMACS 6(3), 1996): O(1)
//! expected time per write (fewer than 1.1 tries on average for any θ), exact for every θ ≥ 0
//! and n, no table of probabilities. The rank-to-unit permutation is a table of 4 bytes per
//! unit, built once per generator; a drift step costs ⌊f·n⌋ swaps every K writes (amortised
//! f·n/K per write: 20 for the reference's `zipfdrift`). Nothing is allocated per request.
//! Deterministic by `run.seed`: the permutation and the drift draw from their own streams, the
//! ranks from the workload's stream. The reference generator draws the same distribution from a
//! table of cumulative weights (not the same random stream), so the same n, θ and drift give the
//! same write-amplification regime.

use std::sync::Arc;

use super::{Generator, Plan, WorkloadKindEntry};
use crate::error::ConfigError;
use crate::rng::Prng;
use crate::spec::{check, fraction, Param, Params};
use crate::workload::{custom_generator, request_units, Addresses, WorkloadSpec};

pub(super) const ENTRY: WorkloadKindEntry = WorkloadKindEntry {
    name: "zipf",
    params: &[
        Param::omitted("workload", "zipf_exponent"),
        Param::omitted("workload", "zipf_drift_fraction"),
        Param::omitted("workload", "zipf_drift_every_writes"),
    ],
    replayed: false,
    default_passes: (1.0, 2.0),
    resolve: |w, params, g| Ok(Arc::new(resolve(params, request_units(w.request_bytes, g))?)),
};

fn resolve(params: &mut Params<'_>, units: u64) -> Result<ZipfPlan, ConfigError> {
    let exponent = params.f64("zipf_exponent", 1.0)?;
    check(exponent >= 0.0, "workload.zipf_exponent", "must be >= 0 (0 is uniform)")?;
    let drift_fraction = params.f64("zipf_drift_fraction", 0.0)?;
    fraction(drift_fraction, "workload.zipf_drift_fraction", false)?;
    let drift_every_writes = params.u64("zipf_drift_every_writes", (units / 100).max(1))?;
    check(drift_every_writes >= 1, "workload.zipf_drift_every_writes", "must be at least 1")?;
    Ok(ZipfPlan { exponent, drift_fraction, drift_every_writes })
}

/// The resolved parameters of `zipf`.
#[derive(Clone, Debug, PartialEq)]
pub struct ZipfPlan {
    /// θ, `workload.zipf_exponent`.
    pub exponent: f64,
    /// f, `workload.zipf_drift_fraction` (0: static).
    pub drift_fraction: f64,
    /// K, `workload.zipf_drift_every_writes`.
    pub drift_every_writes: u64,
}

impl Plan for ZipfPlan {
    fn generator(&self, spec: &WorkloadSpec) -> Result<Box<dyn Generator>, ConfigError> {
        custom_generator(spec, Box::new(ZipfAddresses::new(self, spec.request_units(), spec.seed)))
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    /// The rank-to-unit permutation.
    fn table_bytes(&self, spec: &WorkloadSpec) -> u64 {
        spec.request_units() * 4
    }
}

/// Ranks 1..=n with P(r) ∝ r^−θ by rejection-inversion (module doc). With h(x) = x^−θ and its
/// integral H(x) = (x^(1−θ) − 1) / (1 − θ) (ln x for θ = 1), a uniform point of
/// (H(1.5) − 1, H(n + 0.5)] is inverted through H and rounded to the nearest rank k; k is
/// accepted when it lies close enough to the inverted point (a bound precomputed from ranks 1
/// and 2) or when the point falls under k's own share H(k + 0.5) − h(k), else drawn again.
#[derive(Clone, Debug)]
pub(crate) struct ZipfRanks {
    n: u64,
    theta: f64,
    /// H(1.5) − h(1): the low end of the drawn interval.
    h_low: f64,
    /// H(n + 0.5): its high end.
    h_high: f64,
    /// Distance from the inverted point below which a rank is accepted outright.
    accept: f64,
}

/// (e^t − 1) / t, 1 at t = 0.
fn expm1_over(t: f64) -> f64 {
    if t.abs() > 1e-8 {
        t.exp_m1() / t
    } else {
        1.0 + t / 2.0 * (1.0 + t / 3.0)
    }
}

/// ln(1 + t) / t, 1 at t = 0.
fn ln1p_over(t: f64) -> f64 {
    if t.abs() > 1e-8 {
        t.ln_1p() / t
    } else {
        1.0 - t * (0.5 - t / 3.0)
    }
}

impl ZipfRanks {
    /// The sampler of ranks 1..=n (n ≥ 1) for exponent θ ≥ 0.
    pub(crate) fn new(n: u64, theta: f64) -> Self {
        let mut z = Self { n: n.max(1), theta, h_low: 0.0, h_high: 0.0, accept: 0.0 };
        z.h_low = z.big_h(1.5) - 1.0;
        z.h_high = z.big_h(z.n as f64 + 0.5);
        z.accept = 2.0 - z.big_h_inv(z.big_h(2.5) - z.h(2.0));
        z
    }

    fn h(&self, x: f64) -> f64 {
        (-self.theta * x.ln()).exp()
    }

    /// H(x) = ∫_1^x t^−θ dt, computed as ln x · (e^((1−θ) ln x) − 1) / ((1−θ) ln x).
    fn big_h(&self, x: f64) -> f64 {
        let ln_x = x.ln();
        ln_x * expm1_over((1.0 - self.theta) * ln_x)
    }

    /// H⁻¹(y) = exp(y · ln(1 + (1−θ) y) / ((1−θ) y)).
    fn big_h_inv(&self, y: f64) -> f64 {
        let t = (y * (1.0 - self.theta)).max(-1.0);
        (ln1p_over(t) * y).exp()
    }

    /// A rank in 1..=n.
    #[inline]
    pub(crate) fn sample(&self, rng: &mut Prng) -> u64 {
        loop {
            let u = self.h_high + rng.unit_f64() * (self.h_low - self.h_high);
            let x = self.big_h_inv(u);
            let k = ((x + 0.5).floor() as u64).clamp(1, self.n);
            let kf = k as f64;
            if kf - x <= self.accept || u >= self.big_h(kf + 0.5) - self.h(kf) {
                return k;
            }
        }
    }
}

/// The addresses of one `zipf` generator: ranks, the rank-to-unit permutation and the drift.
struct ZipfAddresses {
    ranks: ZipfRanks,
    /// `unit_of_rank[r − 1]`: the unit holding rank r.
    unit_of_rank: Vec<u32>,
    /// Ranks re-permuted by each drift step (0: static).
    drift_ranks: usize,
    drift_every_writes: u64,
    writes: u64,
    drift_rng: Prng,
}

impl ZipfAddresses {
    fn new(plan: &ZipfPlan, units: u64, seed: u64) -> Self {
        let mut rng = Prng::for_stream(seed, "workload.zipf.permutation");
        // Units are below 2^32: logical page numbers are 32-bit.
        let mut unit_of_rank: Vec<u32> = (0..units).map(|u| u as u32).collect();
        shuffle(&mut unit_of_rank, &mut rng);
        let drift_ranks = (plan.drift_fraction * units as f64).floor() as usize;
        Self {
            ranks: ZipfRanks::new(units, plan.exponent),
            unit_of_rank,
            drift_ranks: drift_ranks.min(units as usize),
            drift_every_writes: plan.drift_every_writes.max(1),
            writes: 0,
            drift_rng: Prng::for_stream(seed, "workload.zipf.drift"),
        }
    }
}

/// Fisher–Yates: a uniformly random order of `v`.
fn shuffle(v: &mut [u32], rng: &mut Prng) {
    for i in (1..v.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        v.swap(i, j);
    }
}

impl Addresses for ZipfAddresses {
    #[inline]
    fn next_unit(&mut self, rng: &mut Prng, write: bool) -> u64 {
        if write {
            if self.drift_ranks > 1 && self.writes.is_multiple_of(self.drift_every_writes) {
                shuffle(&mut self.unit_of_rank[..self.drift_ranks], &mut self.drift_rng);
            }
            self.writes += 1;
        }
        let rank = self.ranks.sample(rng);
        u64::from(self.unit_of_rank[(rank - 1) as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::workload::{WorkItem, Workload};

    /// Closed-form Zipf probabilities of ranks 1..=n.
    fn zipf_probabilities(n: u64, theta: f64) -> Vec<f64> {
        let w: Vec<f64> = (1..=n).map(|r| (r as f64).powf(-theta)).collect();
        let total: f64 = w.iter().sum();
        w.into_iter().map(|x| x / total).collect()
    }

    /// Chi-square statistic of `counts` against `p` over `draws`, cells with an expected count
    /// below 5 pooled into one.
    fn chi_square(counts: &[u64], p: &[f64], draws: u64) -> (f64, usize) {
        let (mut stat, mut cells) = (0.0, 0usize);
        let (mut pooled_obs, mut pooled_exp) = (0.0, 0.0);
        for (c, q) in counts.iter().zip(p) {
            let e = q * draws as f64;
            if e < 5.0 {
                pooled_obs += *c as f64;
                pooled_exp += e;
            } else {
                stat += (*c as f64 - e).powi(2) / e;
                cells += 1;
            }
        }
        if pooled_exp > 0.0 {
            stat += (pooled_obs - pooled_exp).powi(2) / pooled_exp;
            cells += 1;
        }
        (stat, cells)
    }

    #[test]
    fn rank_frequencies_match_the_closed_form() {
        for (n, theta) in [(1000u64, 1.0), (1000, 0.5), (5000, 1.2), (50, 2.5), (7, 0.99)] {
            let z = ZipfRanks::new(n, theta);
            let mut rng = Prng::new(11);
            let draws = 400_000u64;
            let mut counts = vec![0u64; n as usize];
            for _ in 0..draws {
                counts[(z.sample(&mut rng) - 1) as usize] += 1;
            }
            let p = zipf_probabilities(n, theta);
            let (stat, cells) = chi_square(&counts, &p, draws);
            // Mean of chi-square with `cells - 1` degrees of freedom, plus 6 standard
            // deviations: a fixed seed, so this is a regression bound, not a coin toss.
            let dof = (cells - 1) as f64;
            assert!(stat < dof + 6.0 * (2.0 * dof).sqrt(), "n {n} θ {theta}: χ² {stat} dof {dof}");
            // Rank 1 is drawn 2^θ times as often as rank 2, within 3 %.
            let ratio = counts[0] as f64 / counts[1].max(1) as f64;
            assert!((ratio / 2f64.powf(theta) - 1.0).abs() < 0.03, "n {n} θ {theta}: {ratio}");
            // The top ranks within 3 % of their probability.
            for r in 0..5.min(n as usize) {
                let f = counts[r] as f64 / draws as f64;
                assert!((f - p[r]).abs() / p[r] < 0.03, "n {n} θ {theta} rank {}: {f}", r + 1);
            }
        }
    }

    #[test]
    fn exponent_zero_is_uniform_and_a_single_unit_is_always_chosen() {
        let z = ZipfRanks::new(100, 0.0);
        let mut rng = Prng::new(3);
        let mut counts = vec![0u64; 100];
        for _ in 0..200_000 {
            counts[(z.sample(&mut rng) - 1) as usize] += 1;
        }
        let (stat, cells) = chi_square(&counts, &[0.01; 100], 200_000);
        assert_eq!(cells, 100);
        assert!(stat < 99.0 + 6.0 * 198f64.sqrt(), "χ² {stat}");
        let one = ZipfRanks::new(1, 1.0);
        assert!((0..100).all(|_| one.sample(&mut rng) == 1));
        let steep = ZipfRanks::new(1 << 20, 12.0);
        assert!((0..1000).filter(|_| steep.sample(&mut rng) == 1).count() > 990);
    }

    fn run(overrides: &[&str]) -> (Vec<u64>, u64) {
        let mut o = vec![
            "device.blocks=128",
            "device.pages_per_block=32",
            "workload.kind=zipf",
            "workload.prefill=false",
            "workload.warmup_passes=0",
        ];
        o.extend_from_slice(overrides);
        let r = Config::from_overrides(&o).unwrap().resolve().unwrap();
        let pages: Vec<u64> = Workload::new(&r.workload)
            .unwrap()
            .filter_map(|i| match i {
                WorkItem::Request(q) => Some(q.offset_bytes / r.geometry.page_size_bytes),
                _ => None,
            })
            .collect();
        (pages, r.geometry.logical_pages)
    }

    #[test]
    fn hot_pages_are_scattered_and_seeded() {
        let (a, lp) = run(&["workload.passes=20"]);
        let (b, _) = run(&["workload.passes=20"]);
        assert_eq!(a, b, "deterministic by seed");
        let (c, _) = run(&["workload.passes=20", "run.seed=2"]);
        assert_ne!(a, c);
        let mut counts = vec![0u64; lp as usize];
        for p in &a {
            counts[*p as usize] += 1;
        }
        let mut order: Vec<usize> = (0..lp as usize).collect();
        order.sort_by_key(|&p| std::cmp::Reverse(counts[p]));
        // The ten hottest pages: Zipf's top ranks at θ = 1, and not a contiguous run.
        let p = zipf_probabilities(lp, 1.0);
        let top: u64 = order[..10].iter().map(|&q| counts[q]).sum();
        let expected: f64 = p[..10].iter().sum::<f64>() * a.len() as f64;
        assert!((top as f64 / expected - 1.0).abs() < 0.03, "{top} vs {expected}");
        let span = order[..10].iter().max().unwrap() - order[..10].iter().min().unwrap();
        assert!(span > lp as usize / 4, "hot pages spread over the space, span {span}");
    }

    /// The hottest page of each window of `k` writes.
    fn hottest_per_window(pages: &[u64], lp: u64, k: usize) -> Vec<u64> {
        let mut counts = vec![0u64; lp as usize];
        pages
            .chunks(k)
            .map(|c| {
                counts.iter_mut().for_each(|x| *x = 0);
                c.iter().for_each(|p| counts[*p as usize] += 1);
                (0..lp).max_by_key(|&p| counts[p as usize]).unwrap()
            })
            .collect()
    }

    #[test]
    fn drift_moves_the_hot_set_and_static_does_not() {
        let k = "workload.zipf_drift_every_writes=3000";
        let (fixed, lp) = run(&["workload.passes=60", k]);
        let windows = hottest_per_window(&fixed, lp, 3000);
        assert!(windows.len() > 50);
        assert!(windows.windows(2).all(|w| w[0] == w[1]), "static: rank 1 stays put");
        let (drift, _) = run(&["workload.passes=60", k, "workload.zipf_drift_fraction=0.2"]);
        let windows = hottest_per_window(&drift, lp, 3000);
        let moved = windows.windows(2).filter(|w| w[0] != w[1]).count();
        assert!(moved + 2 >= windows.len(), "rank 1 moves at every drift step: {moved}");
        // It moves among the units of the top 20 % only: few distinct pages, no others.
        let distinct: std::collections::BTreeSet<u64> = windows.iter().copied().collect();
        assert!(distinct.len() > windows.len() / 2);
        // The popularity itself is unchanged: rank 1's share per window stays Zipf's.
        let p1 = zipf_probabilities(lp, 1.0)[0];
        let share = |c: &[u64], page: u64| c.iter().filter(|&&p| p == page).count() as f64;
        let hits: f64 = drift.chunks(3000).zip(&windows).map(|(c, &w)| share(c, w)).sum();
        let f = hits / drift.len() as f64;
        assert!((f - p1).abs() / p1 < 0.1, "rank 1 share {f} vs {p1}");
    }

    #[test]
    fn parameters_are_checked_and_recorded() {
        let bad = |o: &str| {
            Config::from_overrides(&["workload.kind=zipf", o]).unwrap().resolve().unwrap_err()
        };
        assert_eq!(bad("workload.zipf_exponent=-1").key, "workload.zipf_exponent");
        assert_eq!(bad("workload.zipf_drift_fraction=1.5").key, "workload.zipf_drift_fraction");
        let every = "workload.zipf_drift_every_writes";
        assert_eq!(bad(&format!("{every}=0")).key, every);
        let other = Config::from_overrides(&["workload.zipf_exponent=1"]).unwrap().resolve();
        assert!(other.unwrap_err().to_string().contains("workload.kind = \"zipf\""));
        let r = Config::from_overrides(&["workload.kind=zipf", "device.blocks=64"])
            .unwrap()
            .resolve()
            .unwrap();
        let w = &r.config.workload;
        assert_eq!(w.param::<f64>("zipf_exponent"), Some(1.0));
        assert_eq!(w.param::<f64>("zipf_drift_fraction"), Some(0.0));
        assert_eq!(w.param::<u64>("zipf_drift_every_writes"), Some(r.geometry.logical_pages / 100));
    }
}
