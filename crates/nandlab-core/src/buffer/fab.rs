//! FAB, the flash-aware buffer of the FAB paper (§III-B, §IV, Figs. 2, 3 and 5).
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

use super::list::{BlockOf, KeyMap, Links, List, NIL};
use super::list::{DenseMap, HashedMap};
use super::{Buffer, BufferEntry, BufferShape, Plain, WriteBuffer};
use super::{BufferPolicy, Slot, Victim};
use crate::flash::Lpn;
pub(super) const ENTRY: BufferEntry = BufferEntry {
    name: "fab",
    params: &[],
    resolve: |_| Ok(std::sync::Arc::new(Plain { dense: make::<DenseMap>, hashed: make::<HashedMap> })),
};

fn make<M: KeyMap>(shape: BufferShape) -> Box<dyn Buffer> {
    Box::new(WriteBuffer::<_, M>::new(
        Fab::<M>::new(shape.capacity_pages, shape.pages_per_block, shape.logical_blocks()),
        shape,
    ))
}

/// A block node (FAB paper §IV-A), its fields together so one access touches one cache line.
#[derive(Clone, Copy, Default)]
struct Node {
    lbn: u32,
    /// Buffered pages of the block.
    count: u32,
    /// Access clock value of the node's last access (orders a node whose count falls).
    stamp: u64,
}

pub struct Fab<M> {
    block_of: BlockOf,
    /// Block → node.
    nodes: M,
    node: Vec<Node>,
    clock: u64,
    links: Links,
    /// `by_count[c]`: nodes with `c` buffered pages, most recent at the head.
    by_count: Vec<List>,
    /// Highest `c` whose list may be non-empty.
    max_count: u32,
    free_nodes: Vec<u32>,
}

impl<M: KeyMap> Fab<M> {
    #[must_use]
    pub fn new(capacity_pages: u32, pages_per_block: u32, logical_blocks: u64) -> Self {
        // At most one node per buffered page.
        let n = capacity_pages as usize;
        Self {
            block_of: BlockOf::new(pages_per_block),
            nodes: M::new(n, logical_blocks),
            node: vec![Node::default(); n],
            clock: 0,
            links: Links::new(n),
            by_count: vec![List::default(); pages_per_block as usize + 1],
            max_count: 0,
            free_nodes: (0..capacity_pages).rev().collect(),
        }
    }

    /// The block node of `lpn`, created (with no pages, on no list) if absent.
    #[inline]
    fn node_of(&mut self, lpn: Lpn) -> u32 {
        let lbn = self.block_of.lbn(lpn);
        if let Some(n) = self.nodes.get(lbn) {
            return n;
        }
        let n = self.free_nodes.pop().expect("more block nodes than buffered pages");
        self.nodes.insert(lbn, n);
        self.node[n as usize] = Node { lbn, ..Node::default() };
        n
    }

    fn touch(&mut self, n: u32) {
        self.clock += 1;
        self.node[n as usize].stamp = self.clock;
        let c = self.node[n as usize].count as usize;
        self.links.move_to_front(&mut self.by_count[c], n);
    }

    /// The victim choice of Fig. 5, by a walk over the block list from its tail (test oracle).
    #[cfg(test)]
    pub fn victim_by_scan(&self) -> Option<u32> {
        let mut all: Vec<u32> = (0..self.node.len() as u32)
            .filter(|&n| self.nodes.get(self.node[n as usize].lbn) == Some(n))
            .collect();
        // Tail first = least recent first.
        all.sort_by_key(|&n| self.node[n as usize].stamp);
        let mut best: Option<u32> = None;
        let mut best_count = 0;
        for n in all {
            let Node { lbn, count: c, .. } = self.node[n as usize];
            if c as usize == self.by_count.len() - 1 {
                return Some(lbn);
            }
            if c > best_count {
                best_count = c;
                best = Some(lbn);
            }
        }
        best
    }
}

impl<M: KeyMap> BufferPolicy for Fab<M> {
    fn name(&self) -> &'static str {
        "fab"
    }

    #[inline(always)]
    fn inserted(&mut self, _slot: Slot, lpn: Lpn, _dirty: bool) {
        let n = self.node_of(lpn);
        self.clock += 1;
        let node = &mut self.node[n as usize];
        let c = node.count;
        node.count = c + 1;
        node.stamp = self.clock;
        if c > 0 {
            self.links.unlink(&mut self.by_count[c as usize], n);
        }
        self.max_count = self.max_count.max(c + 1);
        self.links.push_front(&mut self.by_count[c as usize + 1], n);
    }

    #[inline]
    fn hit(&mut self, _slot: Slot, lpn: Lpn, _write: bool) {
        let n = self.nodes.get(self.block_of.lbn(lpn)).expect("hit on a block with no node");
        self.touch(n);
    }

    fn removed(&mut self, _slot: Slot, lpn: Lpn) {
        let lbn = self.block_of.lbn(lpn);
        let n = self.nodes.get(lbn).expect("removing a page of a block with no node");
        let node = &mut self.node[n as usize];
        let c = node.count;
        self.links.unlink(&mut self.by_count[c as usize], n);
        if c == 1 {
            self.nodes.remove(lbn);
            self.free_nodes.push(n);
            return;
        }
        node.count = c - 1;
        // Keep the count list in recency order: before the first node accessed earlier.
        let list = &mut self.by_count[c as usize - 1];
        let stamp = node.stamp;
        let mut at = list.head;
        while at != NIL && self.node[at as usize].stamp > stamp {
            at = self.links.next(at);
        }
        self.links.insert_before(list, at, n);
    }

    fn victim(&mut self) -> Victim {
        while self.by_count[self.max_count as usize].is_empty() {
            assert!(self.max_count > 0, "victim asked of an empty buffer");
            self.max_count -= 1;
        }
        let list = &mut self.by_count[self.max_count as usize];
        let n = list.tail;
        self.links.unlink(list, n);
        let Node { lbn, count, .. } = self.node[n as usize];
        self.nodes.remove(lbn);
        self.free_nodes.push(n);
        Victim::Block { lbn, pages: count }
    }

    /// The block `k` victims ahead in the fullest count list (a hint: insertions may promote
    /// other blocks first).
    fn upcoming_victim(&self, k: u32) -> Option<Victim> {
        let mut c = self.max_count as usize;
        while c > 0 && self.by_count[c].is_empty() {
            c -= 1;
        }
        let mut n = self.by_count[c].tail;
        for _ in 0..k {
            if n == NIL {
                break;
            }
            n = self.links.prev(n);
        }
        (n != NIL).then(|| {
            let Node { lbn, count, .. } = self.node[n as usize];
            Victim::Block { lbn, pages: count }
        })
    }

    fn prefetch(&self, lpn: Lpn, near: bool) {
        let lbn = self.block_of.lbn(lpn);
        if !near {
            self.nodes.prefetch(lbn);
        } else if let Some(n) = self.nodes.get(lbn) {
            nandlab_prefetch::prefetch(&self.node, n as usize);
            self.links.prefetch(n);
        }
    }

    fn block_nodes(&self) -> u32 {
        self.nodes.len() as u32
    }
}
