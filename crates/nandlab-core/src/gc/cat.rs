//! CAT, cost-age-times (Chiang & Chang): minimise u/((1−u)·a) · t, with t used as t + 1 (see the
//! module doc of `gc`).
//!
//! Exact branch and bound over the valid-count buckets. Inside a bucket u is fixed and entries
//! run from oldest to youngest, so for the j-th entry and every later one the score is at least
//! u/(1−u) · (t_min + 1) / a_j, where t_min is the device's minimum erase count: once that bound
//! reaches the best score found, the rest of the bucket cannot win and is skipped. The search
//! also stops after `ftl.victim_scan_limit` blocks (then it is approximate; such searches are
//! counted in the `victim_searches_capped` metric, which is 0 in all our experiments).

use std::sync::Arc;

use super::{age_ns, CleaningEntry, CleaningSpec, Selection, VictimPolicy};
use crate::flash::BlockId;
use crate::ftl::block_table::BlockTable;
use crate::spec::{check, Param};

pub(super) const ENTRY: CleaningEntry = CleaningEntry {
    name: "cat",
    // Shown in every configuration (the key predates per-policy parameters).
    params: &[Param::shown("ftl", "victim_scan_limit", || crate::spec::Value::from(65_536))],
    resolve: |_, params| {
        let scan_limit = params.u32("victim_scan_limit", 65_536)?;
        check(scan_limit >= 1, "ftl.victim_scan_limit", "must be at least 1")?;
        Ok(Arc::new(Cat { scan_limit }))
    },
};

#[derive(Clone, Copy, Debug)]
pub struct Cat {
    /// `ftl.victim_scan_limit`.
    pub scan_limit: u32,
}

impl CleaningSpec for Cat {
    fn name(&self) -> &'static str {
        ENTRY.name
    }
    fn build(&self, _seed: u64) -> Box<dyn VictimPolicy> {
        Box::new(*self)
    }
}

impl VictimPolicy for Cat {
    fn name(&self) -> &'static str {
        "cat"
    }

    fn select(&mut self, table: &BlockTable, now_ns: u64) -> Option<Selection> {
        let p = table.pages_per_block;
        let empty = table.bucket_head(0);
        if empty != BlockId::NONE {
            return Some(Selection { block: empty, capped: false });
        }
        let t_min = f64::from(table.erase_count_min()) + 1.0;
        let mut best = BlockId::NONE;
        let mut best_score = f64::INFINITY;
        let mut examined = 0u32;
        for valid in 1..p {
            let u = f64::from(valid) / f64::from(p);
            let ratio = u / (1.0 - u);
            let mut b = table.bucket_head(valid);
            while b != BlockId::NONE {
                let age = age_ns(table, b, now_ns);
                if ratio * t_min / age >= best_score {
                    break;
                }
                if examined == self.scan_limit {
                    return Some(Selection { block: best, capped: true });
                }
                examined += 1;
                let t = f64::from(table.erase_count[b.index()]) + 1.0;
                let score = ratio * t / age;
                if score < best_score {
                    best_score = score;
                    best = b;
                }
                b = table.bucket_next(b);
            }
        }
        if best == BlockId::NONE {
            best = table.bucket_head(p);
        }
        (best != BlockId::NONE).then_some(Selection { block: best, capped: false })
    }
}
