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

use super::list::{IndexMap, Links, List};
use super::{BufferPolicy, Slot, Victim};
use crate::flash::Lpn;

/// `node_next_seq` value of a block not written in order.
const NOT_SEQUENTIAL: u32 = u32::MAX;

pub struct Bplru {
    pages_per_block: u32,
    nodes: IndexMap,
    node_lbn: Vec<u32>,
    node_count: Vec<u32>,
    /// Next page offset a sequential fill of the block would write.
    node_next_seq: Vec<u32>,
    links: Links,
    list: List,
    free_nodes: Vec<u32>,
    /// Each node's buffered pages (slots), so a victim's pages are found without probing
    /// every page of its block (`Links` over slots).
    page_links: Links,
    node_pages: Vec<List>,
}

impl Bplru {
    #[must_use]
    pub fn new(capacity_pages: u32, pages_per_block: u32) -> Self {
        let n = capacity_pages as usize;
        Self {
            pages_per_block,
            nodes: IndexMap::with_max_len(n),
            node_lbn: vec![0; n],
            node_count: vec![0; n],
            node_next_seq: vec![0; n],
            links: Links::new(n),
            list: List::default(),
            free_nodes: (0..capacity_pages).rev().collect(),
            page_links: Links::new(n),
            node_pages: vec![List::default(); n],
        }
    }
}

impl BufferPolicy for Bplru {
    fn name(&self) -> &'static str {
        "bplru"
    }

    fn caches_reads(&self) -> bool {
        false
    }

    fn pads_blocks(&self) -> bool {
        true
    }

    fn inserted(&mut self, slot: Slot, lpn: Lpn, _dirty: bool) {
        let lbn = lpn / self.pages_per_block;
        let offset = lpn % self.pages_per_block;
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
        self.page_links.push_back(&mut self.node_pages[i], slot);
        self.node_next_seq[i] =
            if self.node_next_seq[i] == offset { offset + 1 } else { NOT_SEQUENTIAL };
        if self.node_next_seq[i] == self.pages_per_block {
            // LRU compensation: a block written sequentially to its end goes first.
            self.links.push_back(&mut self.list, n);
        } else {
            self.links.push_front(&mut self.list, n);
        }
    }

    fn hit(&mut self, _slot: Slot, lpn: Lpn, write: bool) {
        if !write {
            return;
        }
        let n = self.nodes.get(lpn / self.pages_per_block).expect("hit on a block with no node");
        // A rewrite means the block is not a one-pass sequential fill.
        self.node_next_seq[n as usize] = NOT_SEQUENTIAL;
        self.links.move_to_front(&mut self.list, n);
    }

    fn removed(&mut self, slot: Slot, lpn: Lpn) {
        let lbn = lpn / self.pages_per_block;
        let n = self.nodes.get(lbn).expect("removing a page of a block with no node");
        self.node_count[n as usize] -= 1;
        self.page_links.unlink(&mut self.node_pages[n as usize], slot);
        self.node_next_seq[n as usize] = NOT_SEQUENTIAL;
        if self.node_count[n as usize] == 0 {
            self.links.unlink(&mut self.list, n);
            self.nodes.remove(lbn);
            self.free_nodes.push(n);
        }
    }

    fn victim(&mut self, block_slots: &mut Vec<Slot>) -> Victim {
        let n = self.list.tail;
        self.links.unlink(&mut self.list, n);
        let lbn = self.node_lbn[n as usize];
        self.nodes.remove(lbn);
        self.free_nodes.push(n);
        self.page_links.drain_into(&mut self.node_pages[n as usize], block_slots);
        Victim::Block(lbn)
    }

    fn block_nodes(&self) -> u32 {
        self.nodes.len() as u32
    }
}
