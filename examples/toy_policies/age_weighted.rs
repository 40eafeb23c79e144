//! Toy cleaning policy (the proof that a policy with a parameter is one file plus one
//! registry line): Cost-benefit with a tunable age exponent, maximise a^α · (1−u)/(2u), where
//! α is `ftl.age_exponent` (default 1). α = 1 is Cost-benefit; α = 0 ignores age and picks the
//! least-valid block, Greedy's choice. Exact in O(pages_per_block) for α ≥ 0 for the reason
//! Cost-benefit is: inside a valid-count bucket u is fixed, so its head (oldest) scores best.

use std::sync::Arc;

use super::{age_ns, CleaningEntry, CleaningSpec, Selection, VictimPolicy};
use crate::flash::BlockId;
use crate::ftl::block_table::BlockTable;
use crate::spec::{check, Param};

pub(super) const ENTRY: CleaningEntry = CleaningEntry {
    name: "age-weighted",
    params: &[Param::new("ftl", "age_exponent")],
    resolve: |_, params| {
        let alpha = params.f64("age_exponent", 1.0)?;
        check(alpha >= 0.0, "ftl.age_exponent", "must be >= 0")?;
        Ok(Arc::new(AgeWeighted { alpha }))
    },
};

#[derive(Clone, Copy, Debug)]
struct AgeWeighted {
    alpha: f64,
}

impl CleaningSpec for AgeWeighted {
    fn name(&self) -> &'static str {
        ENTRY.name
    }
    fn build(&self, _seed: u64) -> Box<dyn VictimPolicy> {
        Box::new(*self)
    }
}

impl VictimPolicy for AgeWeighted {
    fn name(&self) -> &'static str {
        ENTRY.name
    }

    fn select(&mut self, table: &BlockTable, now_ns: u64) -> Option<Selection> {
        let p = table.pages_per_block;
        let mut best = table.bucket_head(0);
        if best != BlockId::NONE {
            return Some(Selection { block: best, capped: false });
        }
        let mut best_score = f64::NEG_INFINITY;
        for valid in 1..p {
            let b = table.bucket_head(valid);
            if b == BlockId::NONE {
                continue;
            }
            let u = f64::from(valid) / f64::from(p);
            let score = age_ns(table, b, now_ns).powf(self.alpha) * (1.0 - u) / (2.0 * u);
            if score > best_score {
                best_score = score;
                best = b;
            }
        }
        if best == BlockId::NONE {
            best = table.bucket_head(p);
        }
        (best != BlockId::NONE).then_some(Selection { block: best, capped: false })
    }
}
