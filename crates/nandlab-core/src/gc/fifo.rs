//! FIFO (least recently written, LRW): clean blocks in the order they were filled, whatever
//! their contents — the reference policy of the closed-form write-amplification theory.

use super::{Selection, VictimPolicy};
use crate::flash::NONE;
use crate::ftl::block_table::BlockTable;

pub struct Fifo;

impl VictimPolicy for Fifo {
    fn name(&self) -> &'static str {
        "fifo"
    }

    fn select(&mut self, table: &BlockTable, _now_ns: u64) -> Option<Selection> {
        let block = table.fifo_head();
        (block != NONE).then_some(Selection { block, capped: false })
    }
}
