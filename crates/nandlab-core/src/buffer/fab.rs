//! FAB, the flash-aware buffer of paper 001 (§III-B, §IV, Figs. 2, 3 and 5).
//!
//! Pages are grouped by logical block into block nodes kept in recency order: every access to
//! a page (read or write, hit or miss) moves its block to the head (`Rearrange_Blocklist_For_LRU`).
//! The victim is the block with the most buffered pages; a completely buffered block is taken
//! at once, scanning from the tail; among blocks with equally many pages, the one nearest the
//! tail (least recently used). All of the victim's pages leave together.
//!
//! Fig. 5 scans the whole block list from the tail. The choice it makes is "most pages, then
//! least recent" (a full block has the most pages there can be, and the scan meets the least
//! recent full block first), so the same choice is made here in O(1): block nodes sit in one
//! recency list per page count, and the victim is the tail of the fullest non-empty list. Two
//! nodes' relative order inside a count list is their relative recency, because a node only
//! enters a list at its head when it is accessed; the exception is a node whose count falls
//! (a host trim of one of its pages), which is placed by its last-access stamp.

use super::list::{IndexMap, Links, List, NIL};
use super::{BufferPolicy, Slot, Victim};
use crate::flash::Lpn;

pub struct Fab {
    pages_per_block: u32,
    /// Block → node.
    nodes: IndexMap,
    node_lbn: Vec<u32>,
    node_count: Vec<u32>,
    /// Access clock value of each node's last access (orders a node whose count falls).
    node_stamp: Vec<u64>,
    clock: u64,
    links: Links,
    /// `by_count[c]`: nodes with `c` buffered pages, most recent at the head.
    by_count: Vec<List>,
    /// Highest `c` whose list may be non-empty.
    max_count: u32,
    free_nodes: Vec<u32>,
    /// Each node's buffered pages (slots), so a victim's pages are found without probing
    /// every page of its block (`Links` over slots).
    page_links: Links,
    node_pages: Vec<List>,
}

impl Fab {
    #[must_use]
    pub fn new(capacity_pages: u32, pages_per_block: u32) -> Self {
        // At most one node per buffered page.
        let n = capacity_pages as usize;
        Self {
            pages_per_block,
            nodes: IndexMap::with_max_len(n),
            node_lbn: vec![0; n],
            node_count: vec![0; n],
            node_stamp: vec![0; n],
            clock: 0,
            links: Links::new(n),
            by_count: vec![List::default(); pages_per_block as usize + 1],
            max_count: 0,
            free_nodes: (0..capacity_pages).rev().collect(),
            page_links: Links::new(n),
            node_pages: vec![List::default(); n],
        }
    }

    /// The block node of `lpn`, created (with no pages, on no list) if absent.
    fn node_of(&mut self, lpn: Lpn) -> u32 {
        let lbn = lpn / self.pages_per_block;
        if let Some(n) = self.nodes.get(lbn) {
            return n;
        }
        let n = self.free_nodes.pop().expect("more block nodes than buffered pages");
        self.nodes.insert(lbn, n);
        self.node_lbn[n as usize] = lbn;
        self.node_count[n as usize] = 0;
        n
    }

    fn touch(&mut self, n: u32) {
        self.clock += 1;
        self.node_stamp[n as usize] = self.clock;
        let c = self.node_count[n as usize] as usize;
        self.links.move_to_front(&mut self.by_count[c], n);
    }

    /// The victim choice of Fig. 5, by a walk over the block list from its tail (test oracle).
    #[cfg(test)]
    pub fn victim_by_scan(&self) -> Option<u32> {
        let mut all: Vec<u32> = (0..self.node_lbn.len() as u32)
            .filter(|&n| self.nodes.get(self.node_lbn[n as usize]) == Some(n))
            .collect();
        // Tail first = least recent first.
        all.sort_by_key(|&n| self.node_stamp[n as usize]);
        let mut best: Option<u32> = None;
        let mut best_count = 0;
        for n in all {
            let c = self.node_count[n as usize];
            if c == self.pages_per_block {
                return Some(self.node_lbn[n as usize]);
            }
            if c > best_count {
                best_count = c;
                best = Some(self.node_lbn[n as usize]);
            }
        }
        best
    }
}

impl BufferPolicy for Fab {
    fn name(&self) -> &'static str {
        "fab"
    }

    fn inserted(&mut self, slot: Slot, lpn: Lpn, _dirty: bool) {
        let n = self.node_of(lpn);
        let c = self.node_count[n as usize];
        if c > 0 {
            self.links.unlink(&mut self.by_count[c as usize], n);
        }
        self.node_count[n as usize] = c + 1;
        self.page_links.push_back(&mut self.node_pages[n as usize], slot);
        self.max_count = self.max_count.max(c + 1);
        self.clock += 1;
        self.node_stamp[n as usize] = self.clock;
        self.links.push_front(&mut self.by_count[c as usize + 1], n);
    }

    fn hit(&mut self, _slot: Slot, lpn: Lpn, _write: bool) {
        let n = self.nodes.get(lpn / self.pages_per_block).expect("hit on a block with no node");
        self.touch(n);
    }

    fn removed(&mut self, slot: Slot, lpn: Lpn) {
        let lbn = lpn / self.pages_per_block;
        let n = self.nodes.get(lbn).expect("removing a page of a block with no node");
        let c = self.node_count[n as usize];
        self.links.unlink(&mut self.by_count[c as usize], n);
        self.page_links.unlink(&mut self.node_pages[n as usize], slot);
        if c == 1 {
            self.nodes.remove(lbn);
            self.free_nodes.push(n);
            return;
        }
        self.node_count[n as usize] = c - 1;
        // Keep the count list in recency order: before the first node accessed earlier.
        let list = &mut self.by_count[c as usize - 1];
        let stamp = self.node_stamp[n as usize];
        let mut at = list.head;
        while at != NIL && self.node_stamp[at as usize] > stamp {
            at = self.links.next(at);
        }
        self.links.insert_before(list, at, n);
    }

    fn victim(&mut self, block_slots: &mut Vec<Slot>) -> Victim {
        while self.by_count[self.max_count as usize].is_empty() {
            assert!(self.max_count > 0, "victim asked of an empty buffer");
            self.max_count -= 1;
        }
        let list = &mut self.by_count[self.max_count as usize];
        let n = list.tail;
        self.links.unlink(list, n);
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
