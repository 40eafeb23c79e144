//! Cost-benefit (Rosenblum & Ousterhout, as in the DAC paper): maximise a·(1−u)/(2u).
//!
//! Exact in O(pages_per_block): inside one valid-count bucket u is fixed, so the best block is
//! the oldest, which is the bucket's head (buckets are kept in modification order).
//!
//! `ftl.cost_benefit_form = "sqrt-append-age"`: the form SepBIT's trace simulator uses (SepBIT
//! paper; docs/ALGORITHMS.md §11.4): maximise (1−u)/u·√a where a is the age since the block's
//! last append (its last page programmed, i.e. when it filled), in host page writes (the page
//! FTL's write clock, `BlockTable::closed_at_write`). Buckets are not in that order, so every
//! closed block is scored: O(blocks) per victim. After a restart every block counts as filled
//! at 0 (the clock restarts).

use std::sync::Arc;

use super::{age_ns, CleaningEntry, CleaningSpec, Selection, VictimPolicy};
use crate::flash::BlockId;
use crate::ftl::block_table::BlockTable;
use crate::spec::{one_of, Param};

/// `ftl.cost_benefit_form`: `"lfs"` (default; a·(1−u)/(2u), a the time since the block's last
/// modification) or `"sqrt-append-age"` (SepBIT's simulator; see the module doc). Left out of
/// configurations that do not set it.
pub(super) const ENTRY: CleaningEntry = CleaningEntry {
    name: "cost-benefit",
    params: &[Param::omitted("ftl", "cost_benefit_form")],
    resolve: |_, params| {
        let form: Option<String> = params.get("cost_benefit_form")?;
        let sqrt_append_age = match form.as_deref() {
            None => false,
            Some(f) => {
                one_of(f, "ftl.cost_benefit_form", &["lfs", "sqrt-append-age"])?;
                params.set("cost_benefit_form", &f);
                f == "sqrt-append-age"
            }
        };
        Ok(Arc::new(CostBenefit { sqrt_append_age }))
    },
};

#[derive(Clone, Copy, Debug, Default)]
pub struct CostBenefit {
    sqrt_append_age: bool,
}

impl CleaningSpec for CostBenefit {
    fn name(&self) -> &'static str {
        ENTRY.name
    }
    fn build(&self, _seed: u64) -> Box<dyn VictimPolicy> {
        Box::new(*self)
    }
}

impl CostBenefit {
    /// The SepBIT simulator's form (`ftl.cost_benefit_form = "sqrt-append-age"`).
    #[cfg(test)]
    pub(super) fn sqrt_append_age() -> Self {
        Self { sqrt_append_age: true }
    }

    /// The SepBIT simulator's form: every closed block scored.
    fn select_sqrt_append_age(table: &BlockTable) -> BlockId {
        let p = table.pages_per_block;
        let mut best = BlockId::NONE;
        let mut best_score = f64::NEG_INFINITY;
        for valid in 1..p {
            let u = f64::from(valid) / f64::from(p);
            let mut b = table.bucket_head(valid);
            while b != BlockId::NONE {
                let age = table.host_writes.saturating_sub(table.closed_at_write[b.index()]);
                let score = (1.0 - u) / u * (age as f64).sqrt();
                if score > best_score {
                    best_score = score;
                    best = b;
                }
                b = table.bucket_next(b);
            }
        }
        best
    }
}

impl VictimPolicy for CostBenefit {
    fn name(&self) -> &'static str {
        "cost-benefit"
    }
    /// The default form's age is simulated time; `sqrt-append-age` counts host page writes.
    fn reads_time(&self) -> bool {
        !self.sqrt_append_age
    }

    fn needs_write_clock(&self) -> bool {
        self.sqrt_append_age
    }

    fn select(&mut self, table: &BlockTable, now_ns: u64) -> Option<Selection> {
        let p = table.pages_per_block;
        let empty = table.bucket_head(0);
        if empty != BlockId::NONE {
            return Some(Selection { block: empty, capped: false });
        }
        let mut best = BlockId::NONE;
        if self.sqrt_append_age {
            best = Self::select_sqrt_append_age(table);
        } else {
            let mut best_score = f64::NEG_INFINITY;
            for valid in 1..p {
                let b = table.bucket_head(valid);
                if b == BlockId::NONE {
                    continue;
                }
                let u = f64::from(valid) / f64::from(p);
                let score = age_ns(table, b, now_ns) * (1.0 - u) / (2.0 * u);
                if score > best_score {
                    best_score = score;
                    best = b;
                }
            }
        }
        if best == BlockId::NONE {
            best = table.bucket_head(p);
        }
        (best != BlockId::NONE).then_some(Selection { block: best, capped: false })
    }
}
