//! Greedy: clean the block with the most invalid pages (fewest valid). Ties go to the least
//! recently modified block. O(pages_per_block) per victim through the valid-count buckets.

use super::{least_valid, Selection, VictimPolicy};
use crate::ftl::block_table::BlockTable;

pub struct Greedy;

impl VictimPolicy for Greedy {
    fn name(&self) -> &'static str {
        "greedy"
    }

    fn select(&mut self, table: &BlockTable, _now_ns: u64) -> Option<Selection> {
        least_valid(table).map(|block| Selection { block, capped: false })
    }
}
