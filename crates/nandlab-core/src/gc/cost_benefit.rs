//! Cost-benefit (Rosenblum & Ousterhout, as in the DAC paper): maximise a·(1−u)/(2u).
//!
//! Exact in O(pages_per_block): inside one valid-count bucket u is fixed, so the best block is
//! the oldest, which is the bucket's head (buckets are kept in modification order).

use std::sync::Arc;

use super::{age_ns, CleaningEntry, CleaningSpec, Selection, VictimPolicy};
use crate::flash::BlockId;
use crate::ftl::block_table::BlockTable;

pub(super) const ENTRY: CleaningEntry = CleaningEntry {
    name: "cost-benefit",
    params: &[],
    resolve: |_, _| Ok(Arc::new(CostBenefit)),
};

#[derive(Clone, Copy, Debug)]
pub struct CostBenefit;

impl CleaningSpec for CostBenefit {
    fn name(&self) -> &'static str {
        ENTRY.name
    }
    fn build(&self, _seed: u64) -> Box<dyn VictimPolicy> {
        Box::new(*self)
    }
}

impl VictimPolicy for CostBenefit {
    fn name(&self) -> &'static str {
        "cost-benefit"
    }

    fn select(&mut self, table: &BlockTable, now_ns: u64) -> Option<Selection> {
        let p = table.pages_per_block;
        let empty = table.bucket_head(0);
        if empty != BlockId::NONE {
            return Some(Selection { block: empty, capped: false });
        }
        let mut best = BlockId::NONE;
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
        if best == BlockId::NONE {
            best = table.bucket_head(p);
        }
        (best != BlockId::NONE).then_some(Selection { block: best, capped: false })
    }
}
