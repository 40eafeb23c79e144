//! Greedy: clean the block with the most invalid pages (fewest valid). Ties go to the least
//! recently modified block. O(pages_per_block) per victim through the valid-count buckets.

use std::sync::Arc;

use super::{least_valid, CleaningEntry, CleaningSpec, Selection, VictimPolicy};
use crate::ftl::block_table::BlockTable;

pub(super) const ENTRY: CleaningEntry =
    CleaningEntry { name: "greedy", params: &[], resolve: |_, _| Ok(Arc::new(Greedy)) };

#[derive(Clone, Copy, Debug)]
pub struct Greedy;

impl CleaningSpec for Greedy {
    fn name(&self) -> &'static str {
        ENTRY.name
    }
    fn build(&self, _seed: u64) -> Box<dyn VictimPolicy> {
        Box::new(*self)
    }
}

impl VictimPolicy for Greedy {
    fn name(&self) -> &'static str {
        "greedy"
    }
    /// Valid counts only (the oldest first among equals: insertion order).
    fn reads_time(&self) -> bool {
        false
    }

    fn select(&mut self, table: &BlockTable, _now_ns: u64) -> Option<Selection> {
        least_valid(table).map(|block| Selection { block, capped: false })
    }
}
