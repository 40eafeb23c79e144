//! The DAC paper's lookup table (docs/ALGORITHMS.md §2): per erase block its state, valid-page
//! count, write pointer (first free page), last modification time, erase count and region; plus the
//! indexes the victim policies search.
//!
//! Index: closed blocks (fully programmed, not open for writing) sit in one of
//! `pages_per_block + 1` buckets by valid-page count, each an intrusive doubly linked list in
//! order of last modification (head = least recently modified). "Modified" means a page of the
//! block was programmed or invalidated; both happen "now", and simulated time never goes
//! backwards, so appending at the tail keeps every bucket sorted with O(1) work per page. That
//! makes Greedy O(pages_per_block) per victim and Cost-benefit exact in the same time (the oldest
//! block of each bucket is that bucket's best), and bounds CAT's branch-and-bound search (see
//! `gc::cat`). A second list keeps closed blocks in the order they were closed (FIFO).
//!
//! A histogram of erase counts gives the minimum and maximum erase count in O(1) amortized.

use crate::flash::BlockId;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockState {
    Free,
    /// The active block of a region: being filled.
    Open,
    /// Fully programmed; a cleaning candidate.
    Closed,
    /// Worn out (erased, never allocated again).
    Retired,
}

pub struct BlockTable {
    pub pages_per_block: u32,
    pub state: Vec<BlockState>,
    pub valid: Vec<u32>,
    pub write_pointer: Vec<u32>,
    /// When each block last changed (a page programmed or invalidated), for cleaning policies
    /// that read ages in simulated time (`VictimPolicy::reads_time`); empty for the others,
    /// which then pay no store per invalidation (`without_modification_times`).
    pub last_modified_ns: Vec<u64>,
    pub erase_count: Vec<u32>,
    pub region: Vec<u8>,
    /// The write clock (host page writes, `ftl::policy::WriteClock`) now, and block → the write
    /// clock at its last program (when it filled): kept by the page FTL only for a victim
    /// policy that asks (`VictimPolicy::needs_write_clock`); otherwise 0 and empty. Like the
    /// clock, they restart at 0 after a restart.
    pub host_writes: u64,
    pub closed_at_write: Vec<u64>,
    bucket_head: Vec<BlockId>,
    bucket_tail: Vec<BlockId>,
    prev: Vec<BlockId>,
    next: Vec<BlockId>,
    fifo_head: BlockId,
    fifo_tail: BlockId,
    fifo_prev: Vec<BlockId>,
    fifo_next: Vec<BlockId>,
    closed_blocks: u32,
    erase_histogram: Vec<u32>,
    erase_min: u32,
    erase_max: u32,
}

impl BlockTable {
    #[must_use]
    pub fn new(blocks: u32, pages_per_block: u32) -> Self {
        let n = blocks as usize;
        let buckets = pages_per_block as usize + 1;
        Self {
            pages_per_block,
            state: vec![BlockState::Free; n],
            valid: vec![0; n],
            write_pointer: vec![0; n],
            last_modified_ns: vec![0; n],
            erase_count: vec![0; n],
            region: vec![0; n],
            host_writes: 0,
            closed_at_write: Vec::new(),
            bucket_head: vec![BlockId::NONE; buckets],
            bucket_tail: vec![BlockId::NONE; buckets],
            prev: vec![BlockId::NONE; n],
            next: vec![BlockId::NONE; n],
            fifo_head: BlockId::NONE,
            fifo_tail: BlockId::NONE,
            fifo_prev: vec![BlockId::NONE; n],
            fifo_next: vec![BlockId::NONE; n],
            closed_blocks: 0,
            erase_histogram: vec![blocks],
            erase_min: 0,
            erase_max: 0,
        }
    }

    #[must_use]
    pub fn blocks(&self) -> u32 {
        self.state.len() as u32
    }

    #[must_use]
    pub fn closed_blocks(&self) -> u32 {
        self.closed_blocks
    }

    /// Least recently modified closed block with exactly `valid` valid pages.
    #[inline]
    #[must_use]
    pub fn bucket_head(&self, valid: u32) -> BlockId {
        self.bucket_head[valid as usize]
    }

    /// Next block in the same bucket (more recently modified), or `BlockId::NONE`.
    #[inline]
    #[must_use]
    pub fn bucket_next(&self, block: BlockId) -> BlockId {
        self.next[block.index()]
    }

    /// Closed block closed longest ago, or `BlockId::NONE`.
    #[inline]
    #[must_use]
    pub fn fifo_head(&self) -> BlockId {
        self.fifo_head
    }

    /// Next closed block in closing order (closed later), or `BlockId::NONE`.
    #[inline]
    #[must_use]
    pub fn fifo_next(&self, block: BlockId) -> BlockId {
        self.fifo_next[block.index()]
    }

    #[must_use]
    pub fn erase_count_min(&self) -> u32 {
        self.erase_min
    }

    #[must_use]
    pub fn erase_count_max(&self) -> u32 {
        self.erase_max
    }

    /// Cache hint: the block's entry (and its bucket neighbours) will be updated soon.
    #[inline]
    pub fn prefetch(&self, block: BlockId) {
        let b = block.index();
        nandlab_prefetch::prefetch(&self.valid, b);
        if !self.last_modified_ns.is_empty() {
            nandlab_prefetch::prefetch(&self.last_modified_ns, b);
        }
        nandlab_prefetch::prefetch(&self.state, b);
        nandlab_prefetch::prefetch(&self.prev, b);
        nandlab_prefetch::prefetch(&self.next, b);
    }

    /// Opens a free block as a region's active block.
    pub fn open(&mut self, block: BlockId, region: u8, now_ns: u64) {
        let b = block.index();
        assert_eq!(self.state[b], BlockState::Free);
        assert_eq!(self.valid[b], 0);
        assert_eq!(self.write_pointer[b], 0);
        self.state[b] = BlockState::Open;
        self.region[b] = region;
        self.touch(b, now_ns);
    }

    /// Records a page programmed at the block's write pointer; returns the page's offset.
    #[inline]
    pub fn program(&mut self, block: BlockId, now_ns: u64) -> u32 {
        let b = block.index();
        debug_assert_eq!(self.state[b], BlockState::Open);
        let offset = self.write_pointer[b];
        assert!(offset < self.pages_per_block);
        self.write_pointer[b] = offset + 1;
        self.valid[b] += 1;
        self.touch(b, now_ns);
        offset
    }

    #[inline]
    #[must_use]
    pub fn is_full(&self, block: BlockId) -> bool {
        self.write_pointer[block.index()] == self.pages_per_block
    }

    /// A fully programmed open block becomes a cleaning candidate.
    pub fn close(&mut self, block: BlockId) {
        let b = block.index();
        assert_eq!(self.state[b], BlockState::Open);
        assert!(self.is_full(block));
        self.state[b] = BlockState::Closed;
        self.closed_blocks += 1;
        self.bucket_push(block, self.valid[b]);
        self.fifo_push(block);
    }

    /// One of the block's pages became invalid (overwritten, trimmed or copied away).
    #[inline]
    pub fn invalidate(&mut self, block: BlockId, now_ns: u64) {
        let b = block.index();
        let valid = self.valid[b];
        assert!(valid > 0, "invalidate on block {block} with no valid page");
        self.valid[b] = valid - 1;
        self.touch(b, now_ns);
        if self.state[b] == BlockState::Closed {
            self.bucket_unlink(block, valid);
            self.bucket_push(block, valid - 1);
        }
    }

    /// Takes a closed block out of the candidate indexes (it is being cleaned).
    pub fn take_victim(&mut self, block: BlockId) {
        let b = block.index();
        assert_eq!(self.state[b], BlockState::Closed);
        self.bucket_unlink(block, self.valid[b]);
        self.fifo_unlink(block);
        self.closed_blocks -= 1;
        self.state[b] = BlockState::Open; // No longer a candidate; not yet free.
    }

    /// The block was erased: it is free again.
    /// An erased block wore out: it leaves service.
    pub fn retire(&mut self, block: BlockId) {
        assert_eq!(self.state[block.index()], BlockState::Free);
        self.state[block.index()] = BlockState::Retired;
    }

    pub fn erased(&mut self, block: BlockId) {
        let b = block.index();
        assert_eq!(self.valid[b], 0, "erase of block {block} with valid pages");
        self.state[b] = BlockState::Free;
        self.write_pointer[b] = 0;
        let old = self.erase_count[b];
        self.erase_count[b] = old + 1;
        self.erase_histogram[old as usize] -= 1;
        if self.erase_histogram.len() <= old as usize + 1 {
            self.erase_histogram.push(0);
        }
        self.erase_histogram[old as usize + 1] += 1;
        self.erase_max = self.erase_max.max(old + 1);
        while self.erase_histogram[self.erase_min as usize] == 0 {
            self.erase_min += 1;
        }
    }

    /// Sets a free block's erase count from the media (recovery).
    pub fn restore_erase_count(&mut self, block: BlockId, count: u32) {
        let b = block.index();
        assert_eq!(self.state[b], BlockState::Free);
        let old = self.erase_count[b] as usize;
        self.erase_histogram[old] -= 1;
        if self.erase_histogram.len() <= count as usize {
            self.erase_histogram.resize(count as usize + 1, 0);
        }
        self.erase_histogram[count as usize] += 1;
        self.erase_count[b] = count;
        self.erase_max = self.erase_max.max(count);
        self.erase_min = self.erase_histogram.iter().position(|&n| n > 0).unwrap_or(0) as u32;
    }

    /// Number of blocks with each erase count (index = erase count).
    #[must_use]
    pub fn erase_histogram(&self) -> &[u32] {
        &self.erase_histogram
    }

    /// Records a change of block `b` at `now_ns` (when modification times are kept).
    #[inline(always)]
    fn touch(&mut self, b: usize, now_ns: u64) {
        if let Some(t) = self.last_modified_ns.get_mut(b) {
            debug_assert!(now_ns >= *t);
            *t = now_ns;
        }
    }

    /// Drops the modification times (see `last_modified_ns`): for cleaning policies that do
    /// not read them.
    #[must_use]
    pub fn without_modification_times(mut self) -> Self {
        self.last_modified_ns = Vec::new();
        self
    }

    fn bucket_push(&mut self, block: BlockId, valid: u32) {
        let v = valid as usize;
        let b = block.index();
        let tail = self.bucket_tail[v];
        self.prev[b] = tail;
        self.next[b] = BlockId::NONE;
        if tail == BlockId::NONE {
            self.bucket_head[v] = block;
        } else {
            debug_assert!(
                self.last_modified_ns.is_empty() || {
                    let t = &self.last_modified_ns;
                    t[tail.index()] <= t[b]
                }
            );
            self.next[tail.index()] = block;
        }
        self.bucket_tail[v] = block;
    }

    fn bucket_unlink(&mut self, block: BlockId, valid: u32) {
        let v = valid as usize;
        let b = block.index();
        let (p, n) = (self.prev[b], self.next[b]);
        if p == BlockId::NONE {
            debug_assert_eq!(self.bucket_head[v], block);
            self.bucket_head[v] = n;
        } else {
            self.next[p.index()] = n;
        }
        if n == BlockId::NONE {
            debug_assert_eq!(self.bucket_tail[v], block);
            self.bucket_tail[v] = p;
        } else {
            self.prev[n.index()] = p;
        }
        self.prev[b] = BlockId::NONE;
        self.next[b] = BlockId::NONE;
    }

    fn fifo_push(&mut self, block: BlockId) {
        let b = block.index();
        self.fifo_prev[b] = self.fifo_tail;
        self.fifo_next[b] = BlockId::NONE;
        if self.fifo_tail == BlockId::NONE {
            self.fifo_head = block;
        } else {
            self.fifo_next[self.fifo_tail.index()] = block;
        }
        self.fifo_tail = block;
    }

    fn fifo_unlink(&mut self, block: BlockId) {
        let b = block.index();
        let (p, n) = (self.fifo_prev[b], self.fifo_next[b]);
        if p == BlockId::NONE {
            self.fifo_head = n;
        } else {
            self.fifo_next[p.index()] = n;
        }
        if n == BlockId::NONE {
            self.fifo_tail = p;
        } else {
            self.fifo_prev[n.index()] = p;
        }
        self.fifo_prev[b] = BlockId::NONE;
        self.fifo_next[b] = BlockId::NONE;
    }

    /// Full consistency check of the indexes (O(blocks)); for tests and `run.check_every_requests`.
    pub fn check(&self) {
        let mut seen = 0u32;
        for v in 0..=self.pages_per_block {
            let mut b = self.bucket_head[v as usize];
            let mut prev = BlockId::NONE;
            let mut last = 0u64;
            while b != BlockId::NONE {
                let i = b.index();
                assert_eq!(self.state[i], BlockState::Closed, "block {b} in bucket not closed");
                assert_eq!(self.valid[i], v, "block {b} in bucket {v} has {}", self.valid[i]);
                assert_eq!(self.prev[i], prev);
                if let Some(&t) = self.last_modified_ns.get(i) {
                    assert!(t >= last, "bucket {v} not in time order");
                    last = t;
                }
                prev = b;
                b = self.next[i];
                seen += 1;
                assert!(seen <= self.blocks(), "cycle in bucket {v}");
            }
            assert_eq!(self.bucket_tail[v as usize], prev);
        }
        assert_eq!(seen, self.closed_blocks);
        let mut fifo = 0u32;
        let mut b = self.fifo_head;
        while b != BlockId::NONE {
            assert_eq!(self.state[b.index()], BlockState::Closed);
            fifo += 1;
            assert!(fifo <= self.blocks(), "cycle in fifo");
            b = self.fifo_next[b.index()];
        }
        assert_eq!(fifo, self.closed_blocks);
        let total: u32 = self.erase_histogram.iter().sum();
        assert_eq!(total, self.blocks());
        let min = self.erase_count.iter().copied().min().unwrap_or(0);
        let max = self.erase_count.iter().copied().max().unwrap_or(0);
        assert_eq!((min, max), (self.erase_min, self.erase_max));
    }
}
