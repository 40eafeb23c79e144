//! Random-d ("d-choices"): sample d closed blocks uniformly and clean the one with the fewest
//! valid pages. A cheap reference policy between FIFO (d = 1 behaves like random) and Greedy
//! (d → ∞).

use std::sync::Arc;

use super::{CleaningEntry, CleaningSpec, Selection, VictimPolicy};
use crate::flash::BlockId;
use crate::ftl::block_table::{BlockState, BlockTable};
use crate::rng::Prng;
use crate::spec::{check, Param};

pub(super) const ENTRY: CleaningEntry = CleaningEntry {
    name: "random-d",
    // Shown in every configuration (the key predates per-policy parameters).
    params: &[Param::shown("ftl", "random_d", || crate::spec::Value::from(8))],
    resolve: |_, params| {
        let d = params.u32("random_d", 8)?;
        check(d >= 1, "ftl.random_d", "must be at least 1")?;
        Ok(Arc::new(RandomDSpec { d }))
    },
};

/// `ftl.random_d`, the sample size.
#[derive(Clone, Copy, Debug)]
struct RandomDSpec {
    d: u32,
}

impl CleaningSpec for RandomDSpec {
    fn name(&self) -> &'static str {
        ENTRY.name
    }
    fn build(&self, seed: u64) -> Box<dyn VictimPolicy> {
        Box::new(RandomD::new(self.d, seed))
    }
}

pub struct RandomD {
    d: u32,
    rng: Prng,
}

impl RandomD {
    #[must_use]
    pub fn new(d: u32, seed: u64) -> Self {
        assert!(d >= 1);
        Self { d, rng: Prng::for_stream(seed, "gc.random-d") }
    }
}

impl VictimPolicy for RandomD {
    fn name(&self) -> &'static str {
        "random-d"
    }
    /// Sampled blocks' valid counts, only.
    fn reads_time(&self) -> bool {
        false
    }

    fn select(&mut self, table: &BlockTable, _now_ns: u64) -> Option<Selection> {
        if table.closed_blocks() == 0 {
            return None;
        }
        let blocks = u64::from(table.blocks());
        let mut best: Option<BlockId> = None;
        let mut sampled = 0;
        // Rejection sampling over all blocks; closed blocks are the vast majority at steady
        // state, and the attempt cap keeps the search bounded.
        let mut attempts = 0u32;
        while sampled < self.d && attempts < 64 * self.d {
            attempts += 1;
            let b = BlockId::new(self.rng.below(blocks) as u32);
            if table.state[b.index()] != BlockState::Closed {
                continue;
            }
            sampled += 1;
            if best.is_none_or(|x| table.valid[b.index()] < table.valid[x.index()]) {
                best = Some(b);
            }
        }
        let block = best.or_else(|| super::least_valid(table))?;
        Some(Selection { block, capped: sampled < self.d })
    }
}
