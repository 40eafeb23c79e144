//! Block recycling of a full log block (block-recycling paper, docs/ALGORITHMS.md §4): merge or
//! migration, and the cost models that choose between them.
//!
//! A *merge* consolidates the log block with its data block (2 erases + N_p page copies for a
//! full merge) and leaves a whole empty log block; a *migration* erases one block and copies only
//! the p valid pages of the old log block into a fresh one, leaving N_p − p free pages. Costs
//! per available page:
//!
//! - W_merge = (2·C_E + N_p·C_cp) / N_p
//! - W_mig(p) = (C_E + p·C_cp) / (N_p − p); equal to W_merge at p = N_p / 2 for any costs.
//! - Macroscopic period (§5): a merge, then n migrations copying P_k = α·k pages each:
//!   W(n) = [2·C_E + N_p·C_cp + n·C_E + α·C_cp·n(n+1)/2] / [(n+1)·(N_p − α·n/2)];
//!   n0 = argmin W(n).
//!
//! Policies (`ftl.recycling`): `merge-only`; `cost-based` (migrate iff W_mig(p) < W_merge);
//! `periodic` (cost-based, but merge after `ftl.migration_period` consecutive migrations —
//! paper: N_p / 2); `optimal` (migrate while fewer than n0(α̂) migrations happened since the
//! last merge, α̂ estimated per logical block from the accumulated history of p).

use crate::error::ConfigError;
use crate::ftl::FtlConfig;
use crate::spec::{check, one_of};

/// The costs the models need, in any consistent unit (the FTL uses nanoseconds).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CostModel {
    pub erase_cost: f64,
    pub copy_cost: f64,
    pub pages_per_block: u32,
}

impl CostModel {
    #[must_use]
    pub fn new(erase_cost: f64, copy_cost: f64, pages_per_block: u32) -> Self {
        assert!(pages_per_block >= 1);
        Self { erase_cost, copy_cost, pages_per_block }
    }

    fn np(&self) -> f64 {
        f64::from(self.pages_per_block)
    }

    /// Merge cost per available page.
    #[must_use]
    pub fn w_merge(&self) -> f64 {
        (2.0 * self.erase_cost + self.np() * self.copy_cost) / self.np()
    }

    /// Migration cost per available page when `p` pages are copied (infinite at p ≥ N_p: a
    /// migration that frees nothing).
    #[must_use]
    pub fn w_mig(&self, p: f64) -> f64 {
        if p >= self.np() {
            return f64::INFINITY;
        }
        (self.erase_cost + p * self.copy_cost) / (self.np() - p)
    }

    /// The p at which W_mig(p) = W_merge (always N_p / 2: see the module doc).
    #[must_use]
    pub fn equilibrium_p(&self) -> f64 {
        // Solve (C_E + p·C_cp)·N_p = (N_p − p)(2·C_E + N_p·C_cp) for p.
        let np = self.np();
        let (e, c) = (self.erase_cost, self.copy_cost);
        (2.0 * np * e + np * np * c - np * e) / (np * c + 2.0 * e + np * c)
    }

    /// Cost per available page of a period of n migrations then a merge, growth rate `alpha`.
    /// Infinite where the period would make no free pages.
    #[must_use]
    pub fn w_sequence(&self, alpha: f64, n: f64) -> f64 {
        let np = self.np();
        let pages = (n + 1.0) * (np - alpha * n / 2.0);
        if pages <= 0.0 || alpha * n >= np {
            return f64::INFINITY;
        }
        let cost = 2.0 * self.erase_cost
            + np * self.copy_cost
            + n * self.erase_cost
            + alpha * self.copy_cost * n * (n + 1.0) / 2.0;
        cost / pages
    }

    /// Largest n worth evaluating: the n-th migration must copy fewer than N_p pages.
    #[must_use]
    pub fn max_migrations(&self, alpha: f64) -> u64 {
        const CAP: u64 = 1 << 40;
        if alpha <= 0.0 {
            return CAP;
        }
        let n = ((self.np() / alpha).ceil() as u64).saturating_sub(1);
        n.min(CAP)
    }

    /// n0 = argmin over integers n ≥ 0 of `w_sequence(alpha, n)`. W is a ratio of a convex
    /// numerator and a concave positive denominator, so it is quasi-convex in n: a ternary
    /// search over integers finds the minimum in O(log n) evaluations. At α = 0 (copies never
    /// grow) W keeps falling: n0 is the cap.
    #[must_use]
    pub fn optimal_migrations(&self, alpha: f64) -> u64 {
        let (mut lo, mut hi) = (0u64, self.max_migrations(alpha));
        let w = |n: u64| self.w_sequence(alpha, n as f64);
        while hi - lo > 2 {
            let m1 = lo + (hi - lo) / 3;
            let m2 = hi - (hi - lo) / 3;
            if w(m1) <= w(m2) {
                hi = m2;
            } else {
                lo = m1;
            }
        }
        (lo..=hi).min_by(|&a, &b| w(a).total_cmp(&w(b))).unwrap_or(0)
    }
}

/// Decides, for each full log block, whether to migrate it instead of merging it. One instance
/// per FTL; per-logical-block state lives inside.
pub trait RecyclingPolicy: Send {
    fn name(&self) -> &'static str;
    /// Logical block `lbn`'s full log block holds `valid_pages` valid pages: migrate it?
    /// Returning true commits to the migration (the policy records it).
    fn migrate(&mut self, lbn: u32, valid_pages: u32) -> bool;
    /// The FTL merged `lbn`'s log (for any reason): a new macroscopic period starts.
    fn merged(&mut self, lbn: u32);
    /// Bytes of controller RAM the policy's per-block state needs.
    fn memory_bytes(&self) -> u64 {
        0
    }
}

pub const RECYCLING_NAMES: &[&str] = &["merge-only", "cost-based", "periodic", "optimal"];

/// `ftl.recycling` resolved: the policy and, for `periodic`, its period.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecyclingSpec {
    name: &'static str,
    period: u32,
}

impl RecyclingSpec {
    /// Resolves `ftl.recycling` (default `merge-only`) and `ftl.migration_period` (`periodic` only;
    /// default N_p / 2). `migrates` says whether the FTL kind can migrate (the block-recycling
    /// paper's migration is defined for a log block owned by one data block: BAST).
    pub fn resolve(
        f: &mut FtlConfig,
        migrates: bool,
        pages_per_block: u32,
    ) -> Result<Self, ConfigError> {
        let recycling = f.recycling.get_or_insert_with(|| "merge-only".into()).clone();
        one_of(&recycling, "ftl.recycling", RECYCLING_NAMES)?;
        let name =
            RECYCLING_NAMES.iter().copied().find(|n| *n == recycling).unwrap_or("merge-only");
        check(
            name == "merge-only" || migrates,
            "ftl.recycling",
            format!(
                "{recycling:?} uses paper 002's migration, which is defined for a log block owned by \
                 one data block: use ftl.kind = \"bast\""
            ),
        )?;
        let mut period = 0;
        if name == "periodic" {
            period = *f.migration_period.get_or_insert(pages_per_block / 2);
            check(period >= 1, "ftl.migration_period", "must be at least 1")?;
        } else {
            check(
                f.migration_period.is_none(),
                "ftl.migration_period",
                "only ftl.recycling = \"periodic\" uses a migration period",
            )?;
        }
        Ok(Self { name, period })
    }

    /// The policy for an FTL of `logical_blocks` with costs `cost`.
    #[must_use]
    pub fn build(&self, cost: CostModel, logical_blocks: u32) -> Box<dyn RecyclingPolicy> {
        by_name(self.name, cost, logical_blocks, self.period)
    }
}

/// The policy named `name` (one of `RECYCLING_NAMES`). `period` is the periodic merge's limit.
#[must_use]
pub fn by_name(
    name: &str,
    cost: CostModel,
    logical_blocks: u32,
    period: u32,
) -> Box<dyn RecyclingPolicy> {
    match name {
        "cost-based" => Box::new(CostBased { cost, run: None }),
        "periodic" => Box::new(CostBased {
            cost,
            run: Some(Consecutive { period, count: vec![0; logical_blocks as usize] }),
        }),
        "optimal" => Box::new(Optimal::new(cost, logical_blocks)),
        _ => {
            debug_assert_eq!(name, "merge-only", "config validation admits only known names");
            Box::new(MergeOnly)
        }
    }
}

struct MergeOnly;

impl RecyclingPolicy for MergeOnly {
    fn name(&self) -> &'static str {
        "merge-only"
    }
    fn migrate(&mut self, _lbn: u32, _valid_pages: u32) -> bool {
        false
    }
    fn merged(&mut self, _lbn: u32) {}
}

struct Consecutive {
    period: u32,
    count: Vec<u32>,
}

/// `cost-based`, and with `run` set, `periodic`.
struct CostBased {
    cost: CostModel,
    run: Option<Consecutive>,
}

impl RecyclingPolicy for CostBased {
    fn name(&self) -> &'static str {
        if self.run.is_some() {
            "periodic"
        } else {
            "cost-based"
        }
    }
    fn migrate(&mut self, lbn: u32, valid_pages: u32) -> bool {
        if self.cost.w_mig(f64::from(valid_pages)) >= self.cost.w_merge() {
            return false;
        }
        match &mut self.run {
            None => true,
            Some(run) => {
                let c = &mut run.count[lbn as usize];
                if *c >= run.period {
                    false
                } else {
                    *c += 1;
                    true
                }
            }
        }
    }
    fn merged(&mut self, lbn: u32) {
        if let Some(run) = &mut self.run {
            run.count[lbn as usize] = 0;
        }
    }
    fn memory_bytes(&self) -> u64 {
        self.run.as_ref().map_or(0, |r| r.count.len() as u64)
    }
}

/// `optimal`: per logical block, migrations since the last merge (n) and the least-squares
/// slope through the origin of the observed (k, P_k) pairs, accumulated over the block's
/// whole history (α̂ = Σ k·P_k / Σ k²).
struct Optimal {
    cost: CostModel,
    since_merge: Vec<u32>,
    sum_kp: Vec<f64>,
    sum_kk: Vec<f64>,
}

impl Optimal {
    fn new(cost: CostModel, logical_blocks: u32) -> Self {
        let n = logical_blocks as usize;
        Self { cost, since_merge: vec![0; n], sum_kp: vec![0.0; n], sum_kk: vec![0.0; n] }
    }
}

impl RecyclingPolicy for Optimal {
    fn name(&self) -> &'static str {
        "optimal"
    }
    fn migrate(&mut self, lbn: u32, valid_pages: u32) -> bool {
        let b = lbn as usize;
        if valid_pages >= self.cost.pages_per_block {
            return false;
        }
        let k = f64::from(self.since_merge[b] + 1);
        let p = f64::from(valid_pages);
        // The estimate includes the migration being considered: its p is known now.
        let alpha = (self.sum_kp[b] + k * p) / (self.sum_kk[b] + k * k);
        let n0 = self.cost.optimal_migrations(alpha);
        if u64::from(self.since_merge[b]) >= n0 {
            return false;
        }
        self.sum_kp[b] += k * p;
        self.sum_kk[b] += k * k;
        self.since_merge[b] += 1;
        true
    }
    fn merged(&mut self, lbn: u32) {
        self.since_merge[lbn as usize] = 0;
    }
    fn memory_bytes(&self) -> u64 {
        // A controller would keep n (1 byte) and α̂ (2 bytes fixed point) per log-block owner;
        // we report what this model stores.
        (self.since_merge.len() * (4 + 8 + 8)) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paper() -> CostModel {
        CostModel::new(1.5, 1.128, 128)
    }

    #[test]
    fn equilibrium_is_half_a_block() {
        assert!((paper().equilibrium_p() - 64.0).abs() < 1e-9);
        let c = CostModel::new(2.0, 0.3, 64);
        assert!((c.equilibrium_p() - 32.0).abs() < 1e-9);
        let m = paper();
        assert!((m.w_mig(64.0) - m.w_merge()).abs() < 1e-12);
        assert!(m.w_mig(63.0) < m.w_merge() && m.w_mig(65.0) > m.w_merge());
    }

    #[test]
    fn paper_check_value_n0_49() {
        let m = paper();
        let n0 = m.optimal_migrations(0.1);
        assert_eq!(n0, 49);
        let ratio = m.w_sequence(0.1, 49.0) / m.w_merge();
        assert!((ratio - 0.050).abs() < 0.0015, "W(n0)/W_merge = {ratio}");
        // W(0) is one merge per N_p pages: exactly W_merge.
        assert!((m.w_sequence(0.1, 0.0) - m.w_merge()).abs() < 1e-12);
    }

    #[test]
    fn ternary_search_agrees_with_brute_force() {
        for &(e, c, np) in &[(1.5, 1.128, 128u32), (2.0, 0.3, 64), (0.5, 2.0, 32), (1.0, 1.0, 4)] {
            let m = CostModel::new(e, c, np);
            for &alpha in &[0.01, 0.05, 0.1, 0.5, 1.0, 3.0, 17.0, 200.0] {
                let max = m.max_migrations(alpha);
                let brute = (0..=max)
                    .min_by(|&a, &b| {
                        m.w_sequence(alpha, a as f64).total_cmp(&m.w_sequence(alpha, b as f64))
                    })
                    .unwrap();
                let fast = m.optimal_migrations(alpha);
                let (wb, wf) =
                    (m.w_sequence(alpha, brute as f64), m.w_sequence(alpha, fast as f64));
                assert!((wb - wf).abs() <= 1e-12 * wb, "α={alpha} np={np}: {brute} vs {fast}");
            }
        }
    }

    #[test]
    fn policies_decide_as_specified() {
        let m = paper();
        let mut cb = by_name("cost-based", m, 4, 64);
        assert!(cb.migrate(0, 63));
        assert!(!cb.migrate(0, 64));
        let mut per = by_name("periodic", m, 4, 3);
        assert!(per.migrate(1, 5) && per.migrate(1, 5) && per.migrate(1, 5));
        assert!(!per.migrate(1, 5), "fourth consecutive migration is forced into a merge");
        per.merged(1);
        assert!(per.migrate(1, 5));
        // Optimal with P_k = 5k·... : a steady α of 5 pages per migration gives a small n0.
        let mut opt = by_name("optimal", m, 1, 0);
        let n0 = m.optimal_migrations(5.0);
        let mut migrations = 0;
        while opt.migrate(0, 5 * (migrations + 1)) {
            migrations += 1;
        }
        assert_eq!(u64::from(migrations), n0);
        let mut none = by_name("merge-only", m, 1, 0);
        assert!(!none.migrate(0, 1));
    }
}
