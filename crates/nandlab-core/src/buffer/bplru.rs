//! BPLRU, block-padding LRU (Kim & Ahn, "BPLRU: A Buffer Management Scheme for Improving
//! Random Writes in Flash Storage", FAST'08), the write buffer users compare FAB against.
//!
//! - Block-level LRU: pages are grouped by logical block; a write (hit or miss) moves its block
//!   to the head; the victim is the tail block, all of whose pages leave together.
//! - Page padding: the victim block is written back whole — its pages that are not buffered
//!   are read from flash and written with the buffered ones, in page order — so a log-block
//!   FTL can finish it with a switch merge instead of a full merge (`pads_blocks`).
//! - LRU compensation: a block whose pages were all written in order, first page to last,
//!   is unlikely to be written again soon, so when it becomes complete it moves to the tail
//!   and is the next victim.
//! - A write buffer: reads are served from the buffer on a hit and do not change the order;
//!   a read miss goes to flash without allocating.

use super::list::{BlockOf, KeyMap, Links, List, NIL};
use super::list::{DenseMap, HashedMap};
use super::{Buffer, BufferEntry, BufferShape, Plain, WriteBuffer};
use super::{BufferPolicy, Slot, Victim};
use crate::flash::Lpn;
pub(super) const ENTRY: BufferEntry = BufferEntry {
    name: "bplru",
    params: &[],
    resolve: |_| Ok(std::sync::Arc::new(Plain { dense: make::<DenseMap>, hashed: make::<HashedMap> })),
};

fn make<M: KeyMap>(shape: BufferShape) -> Box<dyn Buffer> {
    Box::new(WriteBuffer::<_, M>::new(
        Bplru::<M>::new(shape.capacity_pages, shape.pages_per_block, shape.logical_blocks()),
        shape,
    ))
}

/// `node_next_seq` value of a block not written in order.
const NOT_SEQUENTIAL: u32 = u32::MAX;

pub struct Bplru<M> {
    pages_per_block: u32,
    block_of: BlockOf,
    nodes: M,
    node_lbn: Vec<u32>,
    node_count: Vec<u32>,
    /// Next page offset a sequential fill of the block would write.
    node_next_seq: Vec<u32>,
    links: Links,
    list: List,
    free_nodes: Vec<u32>,
}

impl<M: KeyMap> Bplru<M> {
    #[must_use]
    pub fn new(capacity_pages: u32, pages_per_block: u32, logical_blocks: u64) -> Self {
        let n = capacity_pages as usize;
        Self {
            pages_per_block,
            block_of: BlockOf::new(pages_per_block),
            nodes: M::new(n, logical_blocks),
            node_lbn: vec![0; n],
            node_count: vec![0; n],
            node_next_seq: vec![0; n],
            links: Links::new(n),
            list: List::default(),
            free_nodes: (0..capacity_pages).rev().collect(),
        }
    }
}

impl<M: KeyMap> BufferPolicy for Bplru<M> {
    fn name(&self) -> &'static str {
        "bplru"
    }

    fn caches_reads(&self) -> bool {
        false
    }

    fn pads_blocks(&self) -> bool {
        true
    }

    #[inline]
    fn inserted(&mut self, _slot: Slot, lpn: Lpn, _dirty: bool) {
        let lbn = self.block_of.lbn(lpn);
        let offset = self.block_of.offset(lpn);
        let n = match self.nodes.get(lbn) {
            Some(n) => {
                self.links.unlink(&mut self.list, n);
                n
            }
            None => {
                let n = self.free_nodes.pop().expect("more block nodes than buffered pages");
                self.nodes.insert(lbn, n);
                self.node_lbn[n as usize] = lbn;
                self.node_count[n as usize] = 0;
                self.node_next_seq[n as usize] = 0;
                n
            }
        };
        let i = n as usize;
        self.node_count[i] += 1;
        self.node_next_seq[i] =
            if self.node_next_seq[i] == offset { offset + 1 } else { NOT_SEQUENTIAL };
        if self.node_next_seq[i] == self.pages_per_block {
            // LRU compensation: a block written sequentially to its end goes first.
            self.links.push_back(&mut self.list, n);
        } else {
            self.links.push_front(&mut self.list, n);
        }
    }

    #[inline]
    fn hit(&mut self, _slot: Slot, lpn: Lpn, write: bool) {
        if !write {
            return;
        }
        let n = self.nodes.get(self.block_of.lbn(lpn)).expect("hit on a block with no node");
        // A rewrite means the block is not a one-pass sequential fill.
        self.node_next_seq[n as usize] = NOT_SEQUENTIAL;
        self.links.move_to_front(&mut self.list, n);
    }

    fn removed(&mut self, _slot: Slot, lpn: Lpn) {
        let lbn = self.block_of.lbn(lpn);
        let n = self.nodes.get(lbn).expect("removing a page of a block with no node");
        self.node_count[n as usize] -= 1;
        self.node_next_seq[n as usize] = NOT_SEQUENTIAL;
        if self.node_count[n as usize] == 0 {
            self.links.unlink(&mut self.list, n);
            self.nodes.remove(lbn);
            self.free_nodes.push(n);
        }
    }

    fn victim(&mut self) -> Victim {
        let n = self.list.tail;
        self.links.unlink(&mut self.list, n);
        let lbn = self.node_lbn[n as usize];
        self.nodes.remove(lbn);
        self.free_nodes.push(n);
        Victim::Block { lbn, pages: self.node_count[n as usize] }
    }

    /// The first buffered page of the block `k` victims ahead.
    fn upcoming_victim(&self, k: u32) -> Option<Victim> {
        let mut n = self.list.tail;
        for _ in 0..k {
            if n == NIL {
                break;
            }
            n = self.links.prev(n);
        }
        (n != NIL).then(|| Victim::Block {
            lbn: self.node_lbn[n as usize],
            pages: self.node_count[n as usize],
        })
    }

    fn block_nodes(&self) -> u32 {
        self.nodes.len() as u32
    }
}
