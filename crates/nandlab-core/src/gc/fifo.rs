//! FIFO (least recently written, LRW): clean blocks in the order they were filled, whatever
//! their contents — the reference policy of the closed-form write-amplification theory.

use std::sync::Arc;

use super::{CleaningEntry, CleaningSpec, Selection, VictimPolicy};
use crate::flash::BlockId;
use crate::ftl::block_table::BlockTable;

pub(super) const ENTRY: CleaningEntry =
    CleaningEntry { name: "fifo", params: &[], resolve: |_, _| Ok(Arc::new(Fifo)) };

#[derive(Clone, Copy, Debug)]
pub struct Fifo;

impl CleaningSpec for Fifo {
    fn name(&self) -> &'static str {
        ENTRY.name
    }
    fn build(&self, _seed: u64) -> Box<dyn VictimPolicy> {
        Box::new(*self)
    }
}

impl VictimPolicy for Fifo {
    fn name(&self) -> &'static str {
        "fifo"
    }
    /// The order blocks closed in, only.
    fn reads_time(&self) -> bool {
        false
    }

    fn select(&mut self, table: &BlockTable, _now_ns: u64) -> Option<Selection> {
        let block = table.fifo_head();
        (block != BlockId::NONE).then_some(Selection { block, capped: false })
    }
}
