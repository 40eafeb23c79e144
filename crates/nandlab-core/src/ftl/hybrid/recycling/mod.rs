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

use std::sync::Arc;

use crate::error::ConfigError;
use crate::spec::{self, check, Family, Named, Param, Params};

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

/// A recycling policy with its parameters resolved: it builds the policy for an FTL.
pub trait ResolvedRecycling: std::fmt::Debug + Send + Sync {
    /// The policy for an FTL of `logical_blocks` with costs `cost`.
    fn build(&self, cost: CostModel, logical_blocks: u32) -> Box<dyn RecyclingPolicy>;
}

/// One registered recycling policy: its `ftl.recycling` name, whether it migrates (the
/// block-recycling paper's migration is defined for a log block owned by one data block: BAST
/// alone takes such a policy), the parameters it declares, and how it resolves them.
#[derive(Clone, Copy, Debug)]
pub struct RecyclingEntry {
    pub name: &'static str,
    pub migrates: bool,
    pub params: &'static [Param],
    /// Resolves the parameters on a device of `pages_per_block`.
    pub resolve: ResolveRecycling,
}

/// How a recycling policy resolves its parameters on a device of `pages_per_block`.
pub type ResolveRecycling =
    fn(&mut Params<'_>, u32) -> Result<Arc<dyn ResolvedRecycling>, ConfigError>;

impl Named for RecyclingEntry {
    fn name(&self) -> &'static str {
        self.name
    }
    fn params(&self) -> &'static [Param] {
        self.params
    }
}

// The registry: one line per policy.
crate::spec::registry! {
    RecyclingEntry;
    merge_only,
    pub cost_based,
    periodic,
    pub optimal,
}

/// The policy every hybrid kind takes by default.
const DEFAULT: &str = "merge-only";

/// `ftl.recycling` resolved: the policy with its parameters.
#[derive(Clone, Debug)]
pub struct RecyclingSpec {
    name: &'static str,
    resolved: Arc<dyn ResolvedRecycling>,
}

impl RecyclingSpec {
    /// Resolves `ftl.recycling` (default `merge-only`) and the chosen policy's parameters.
    /// `migrates` says whether the FTL kind can migrate.
    pub fn resolve(
        params: &mut Params<'_>,
        migrates: bool,
        pages_per_block: u32,
    ) -> Result<Self, ConfigError> {
        let name: String = params.or("recycling", DEFAULT.to_string())?;
        let entry = spec::lookup(REGISTRY, &name, "ftl.recycling")?;
        check(
            !entry.migrates || migrates,
            "ftl.recycling",
            format!(
                "{name:?} uses the block-recycling paper's migration, which is defined for a log \
                 block owned by one data block: use ftl.kind = \"bast\""
            ),
        )?;
        let resolved = (entry.resolve)(params, pages_per_block)?;
        Ok(Self { name: entry.name, resolved })
    }

    /// The family's declarations (`Tables::settle`).
    #[must_use]
    pub fn family() -> Family {
        Family::of("ftl.recycling", REGISTRY)
    }

    #[must_use]
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The policy for an FTL of `logical_blocks` with costs `cost`.
    #[must_use]
    pub fn build(&self, cost: CostModel, logical_blocks: u32) -> Box<dyn RecyclingPolicy> {
        self.resolved.build(cost, logical_blocks)
    }
}

#[cfg(test)]
/// The policy registered as `name` with its parameters' defaults on blocks of
/// `cost.pages_per_block` pages (`None` for a name no entry has), for callers that build one
/// outside a configuration (tests, tools).
#[must_use]
pub fn by_name(
    name: &str,
    cost: CostModel,
    logical_blocks: u32,
) -> Option<Box<dyn RecyclingPolicy>> {
    let entry = spec::find(REGISTRY, name)?;
    let mut tables = crate::spec::Tables::default();
    let resolved = (entry.resolve)(&mut tables.params("ftl"), cost.pages_per_block).ok()?;
    Some(resolved.build(cost, logical_blocks))
}

/// The registered names.
#[must_use]
pub fn names() -> Vec<&'static str> {
    spec::names(REGISTRY)
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
        let mut cb = by_name("cost-based", m, 4).unwrap();
        assert!(cb.migrate(0, 63));
        assert!(!cb.migrate(0, 64));
        let mut per = cost_based::periodic(m, 4, 3);
        assert!(per.migrate(1, 5) && per.migrate(1, 5) && per.migrate(1, 5));
        assert!(!per.migrate(1, 5), "fourth consecutive migration is forced into a merge");
        per.merged(1);
        assert!(per.migrate(1, 5));
        // Optimal with P_k = 5k·... : a steady α of 5 pages per migration gives a small n0.
        let mut opt = by_name("optimal", m, 1).unwrap();
        let n0 = m.optimal_migrations(5.0);
        let mut migrations = 0;
        while opt.migrate(0, 5 * (migrations + 1)) {
            migrations += 1;
        }
        assert_eq!(u64::from(migrations), n0);
        let mut none = by_name("merge-only", m, 1).unwrap();
        assert!(!none.migrate(0, 1));
    }
}
