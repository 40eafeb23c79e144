//! RAM buffers between the host and any FTL (SPEC §5, paper 001).
//!
//! # What this models
//!
//! A DRAM buffer of `buffer.size_bytes` that every host page access passes through, as in
//! paper 001 §III-A (Fig. 1): a write is stored in the buffer (a hit overwrites the buffered
//! copy); a read is served from the buffer when the page is there, and otherwise from flash;
//! when a page must be brought in and the buffer is full, the replacement policy picks a
//! victim and its dirty pages are written to the FTL (clean pages are dropped). The FTL sees
//! evictions as ordinary host writes, so every FTL kind works behind every buffer.
//!
//! Mechanism apart from policy: this module owns the slots, the page index, the payload, the
//! write-back and the counters; a `BufferPolicy` (one file each, registered in `by_name`) only
//! orders entries and names victims:
//!
//! | `buffer.kind` | policy | victim | read misses |
//! |---|---|---|---|
//! | `none` | no buffer (the paper's PLAIN) | — | — |
//! | `lru` | page-level LRU (the paper's BUF_LRU) | least recently used page | cached |
//! | `fab` | FAB, paper 001 §III–IV | block with most buffered pages, ties LRU | cached |
//! | `bplru` | BPLRU (Kim & Ahn, FAST'08) | least recently written block, padded | not cached |
//! | `cflru` | CFLRU (Park et al., CASES'06) | LRU clean page in the window, else LRU page | cached |
//!
//! A block victim's pages are written back together in ascending page order, which is what
//! lets a log-block FTL finish them with a switch merge (paper 001 §III-B). "Block" is the
//! logical block `lpn / pages_per_block`, the unit the hybrid FTLs map.
//!
//! # Lookups
//!
//! Paper 001 §IV-B searches a linked list of block nodes linearly and reports the search
//! as < 0.1 % of FAB's time but 33 % of page-LRU's. Here every policy finds a page through a
//! hash index sized by the buffer (`list::IndexMap`), O(1) expected, and keeps its recency
//! order in intrusive lists over slot numbers, so the policies differ in what they evict, not
//! in how long they search; `make bench` measures buffer operations per second.
//!
//! # Timing and flushes
//!
//! Each host page moved into or out of the buffer costs `timing.ram_page_ns` (paper 001
//! Table II: 2,560 ns per 512 B). A host FLUSH (and `Device::sync`) writes every dirty page
//! back, in ascending page order, and keeps it buffered, clean. The end of a run writes the
//! rest back (`Device::finish`), counted apart so users see how much of the saving was only
//! deferred.
//!
//! # Payload
//!
//! A buffer keeps page bytes once the device has been given any (payload-storing media and
//! the NBD server); a simulation-only run stores none.

pub mod list;

mod bplru;
mod cflru;
mod fab;
mod lru;
#[cfg(test)]
mod tests;

use serde::Serialize;

use crate::config::Resolved;
use crate::flash::Lpn;
use crate::ftl::Ftl;
use list::IndexMap;

/// A slot of the buffer (index into its page arrays).
pub type Slot = u32;

/// What the policy evicts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Victim {
    /// One page.
    Page(Slot),
    /// Every buffered page of logical block `lbn` (`lpn / pages_per_block`); the policy has
    /// listed their slots, in any order.
    Block(u32),
}

/// A replacement policy: orders the buffered pages and names victims. The mechanism calls
/// exactly one of `inserted` / `hit` per host page access, `removed` when a page leaves
/// without being a victim (host trim), `cleaned` when a dirty page is written back but stays,
/// and `victim` when it needs room; a victim has left the policy's structures when `victim`
/// returns.
pub trait BufferPolicy: Send {
    fn name(&self) -> &'static str;
    /// Whether a read miss brings the page into the buffer (page caches) or is served by flash
    /// alone (write buffers).
    fn caches_reads(&self) -> bool {
        true
    }
    /// Whether a block victim is written back whole: its pages that are not buffered are read
    /// from flash and written with the rest (BPLRU's page padding).
    fn pads_blocks(&self) -> bool {
        false
    }
    /// Page `lpn` entered the buffer in `slot`.
    fn inserted(&mut self, slot: Slot, lpn: Lpn, dirty: bool);
    /// Buffered page `lpn` (in `slot`) was read (`write = false`) or written again.
    fn hit(&mut self, slot: Slot, lpn: Lpn, write: bool);
    /// Page `lpn` left the buffer without being a victim.
    fn removed(&mut self, slot: Slot, lpn: Lpn);
    /// A dirty page was written back and stays buffered, clean.
    fn cleaned(&mut self, _slot: Slot) {}
    /// Chooses and forgets a victim. Called only when at least one page is buffered. A block
    /// victim's slots are pushed onto `block_slots` (empty on entry).
    fn victim(&mut self, block_slots: &mut Vec<Slot>) -> Victim;
    /// The page `k` evictions from now if nothing else happens (`k` = 0: the next victim), for
    /// cache hints; page-level policies that know it cheaply say so.
    fn upcoming_victim(&self, _k: u32) -> Option<Slot> {
        None
    }
    /// Block nodes in use (block-level policies; 0 for page-level ones).
    fn block_nodes(&self) -> u32 {
        0
    }
}

/// Bytes of one block node: paper 001 §IV-A (block number, page count, next pointer, page
/// list pointer).
pub const BLOCK_NODE_BYTES: u64 = 16;

/// `buffer.kind` values.
pub const BUFFER_KINDS: &[&str] = &["none", "lru", "fab", "bplru", "cflru"];

/// The registry: one line per policy. `None` for `buffer.kind = "none"`.
#[must_use]
pub fn policy_by_name(
    kind: &str,
    capacity_pages: u32,
    pages_per_block: u32,
    cflru_window: f64,
) -> Option<Box<dyn BufferPolicy>> {
    Some(match kind {
        "lru" => Box::new(lru::Lru::new(capacity_pages)),
        "fab" => Box::new(fab::Fab::new(capacity_pages, pages_per_block)),
        "bplru" => Box::new(bplru::Bplru::new(capacity_pages, pages_per_block)),
        "cflru" => Box::new(cflru::Cflru::new(capacity_pages, cflru_window)),
        _ => return None,
    })
}

/// The buffer a resolved config asks for (`None` for `buffer.kind = "none"`).
#[must_use]
pub fn from_config(r: &Resolved) -> Option<WriteBuffer> {
    let b = &r.config.buffer;
    let g = &r.geometry;
    let capacity = r.buffer_pages();
    let window = b.cflru_window.unwrap_or(0.5);
    let policy = policy_by_name(&b.kind, capacity, g.pages_per_block, window)?;
    Some(WriteBuffer::new(
        policy,
        capacity,
        g.pages_per_block,
        g.logical_pages,
        g.page_size_bytes,
        r.timing.ram_page_ns,
    ))
}

/// What the buffer did (window counters; `block_nodes_max` is the peak since construction).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct BufferCounters {
    pub read_hits: u64,
    pub read_misses: u64,
    pub write_hits: u64,
    pub write_misses: u64,
    /// Replacement decisions (a block victim counts once).
    pub victims: u64,
    /// Pages that left the buffer as (part of) a victim.
    pub evicted_pages: u64,
    /// Dirty pages written to the FTL, for any reason (eviction, FLUSH, end of run).
    pub written_back_pages: u64,
    /// Of those, written by a host FLUSH or `Device::sync`.
    pub flush_written_pages: u64,
    /// Of those, written at the end of the run.
    pub final_written_pages: u64,
    /// BPLRU page padding: pages read from flash to complete a victim block, and pages
    /// written for it beyond the dirty ones (padding reads plus clean buffered pages).
    pub padding_reads: u64,
    pub padding_writes: u64,
    /// RAM time of host page transfers.
    pub ram_ns: u64,
    /// Most block nodes in use at once, and their RAM (paper 001 Table III).
    pub block_nodes_max: u64,
    pub metadata_bytes_max: u64,
}

impl std::ops::Sub for BufferCounters {
    type Output = Self;
    fn sub(self, o: Self) -> Self {
        Self {
            read_hits: self.read_hits - o.read_hits,
            read_misses: self.read_misses - o.read_misses,
            write_hits: self.write_hits - o.write_hits,
            write_misses: self.write_misses - o.write_misses,
            victims: self.victims - o.victims,
            evicted_pages: self.evicted_pages - o.evicted_pages,
            written_back_pages: self.written_back_pages - o.written_back_pages,
            flush_written_pages: self.flush_written_pages - o.flush_written_pages,
            final_written_pages: self.final_written_pages - o.final_written_pages,
            padding_reads: self.padding_reads - o.padding_reads,
            padding_writes: self.padding_writes - o.padding_writes,
            ram_ns: self.ram_ns - o.ram_ns,
            // Peaks are not windowed.
            block_nodes_max: self.block_nodes_max,
            metadata_bytes_max: self.metadata_bytes_max,
        }
    }
}

/// Why dirty pages are written back without being evicted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlushReason {
    /// Host FLUSH, FUA or shutdown: the pages stay buffered, clean.
    Host,
    /// End of a simulation run.
    EndOfRun,
}

/// The buffer mechanism (see the module doc).
pub struct WriteBuffer {
    policy: Box<dyn BufferPolicy>,
    capacity_pages: u32,
    pages_per_block: u32,
    logical_pages: u64,
    page_bytes: usize,
    ram_page_ns: u64,
    index: IndexMap,
    slot_lpn: Vec<Lpn>,
    dirty: Vec<bool>,
    free: Vec<Slot>,
    /// Page bytes by slot; empty until the first payload arrives.
    data: Vec<u8>,
    scratch: Vec<u8>,
    /// Slots of the victim block being written back (reused).
    block_slots: Vec<Slot>,
    pending_ns: u64,
    counters: BufferCounters,
}

impl WriteBuffer {
    #[must_use]
    pub fn new(
        policy: Box<dyn BufferPolicy>,
        capacity_pages: u32,
        pages_per_block: u32,
        logical_pages: u64,
        page_size_bytes: u64,
        ram_page_ns: u64,
    ) -> Self {
        assert!(capacity_pages >= 1, "a buffer needs at least one page");
        let n = capacity_pages as usize;
        Self {
            policy,
            capacity_pages,
            pages_per_block,
            logical_pages,
            page_bytes: page_size_bytes as usize,
            ram_page_ns,
            index: IndexMap::with_max_len(n),
            slot_lpn: vec![0; n],
            dirty: vec![false; n],
            // Popped from the end: slot 0 is used first.
            free: (0..capacity_pages).rev().collect(),
            data: Vec::new(),
            scratch: Vec::new(),
            block_slots: Vec::with_capacity(pages_per_block as usize),
            pending_ns: 0,
            counters: BufferCounters::default(),
        }
    }

    #[must_use]
    pub fn name(&self) -> &'static str {
        self.policy.name()
    }

    #[must_use]
    pub fn capacity_pages(&self) -> u32 {
        self.capacity_pages
    }

    /// Pages buffered now.
    #[must_use]
    pub fn len(&self) -> u32 {
        self.capacity_pages - self.free.len() as u32
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `lpn` is buffered, and if so whether it is dirty.
    #[must_use]
    pub fn state(&self, lpn: Lpn) -> Option<bool> {
        self.index.get(lpn).map(|s| self.dirty[s as usize])
    }

    /// Whether any buffered page is dirty (O(capacity)).
    #[must_use]
    pub fn has_dirty(&self) -> bool {
        self.dirty.iter().any(|&d| d)
    }

    #[must_use]
    pub fn counters(&self) -> BufferCounters {
        self.counters
    }

    /// RAM time accumulated since the last call (the device adds it to the request's service).
    pub fn take_pending_ns(&mut self) -> u64 {
        std::mem::take(&mut self.pending_ns)
    }

    /// RAM the buffer uses: payload, slot arrays, index (what the simulator holds, not the
    /// modelled `metadata_bytes_max`).
    #[must_use]
    pub fn memory_bytes(&self) -> u64 {
        self.data.len() as u64 + self.slot_lpn.len() as u64 * 5 + self.index.memory_bytes()
    }

    #[inline]
    fn charge_ram(&mut self) {
        self.pending_ns += self.ram_page_ns;
        self.counters.ram_ns += self.ram_page_ns;
    }

    fn ensure_payload(&mut self) {
        if self.data.is_empty() {
            self.data = vec![0; self.capacity_pages as usize * self.page_bytes];
            self.scratch = vec![0; self.page_bytes];
        }
    }

    #[inline]
    fn page_data(&self, slot: Slot) -> Option<&[u8]> {
        if self.data.is_empty() {
            return None;
        }
        let s = slot as usize * self.page_bytes;
        Some(&self.data[s..s + self.page_bytes])
    }

    #[inline]
    fn page_data_mut(&mut self, slot: Slot) -> &mut [u8] {
        let s = slot as usize * self.page_bytes;
        &mut self.data[s..s + self.page_bytes]
    }

    /// Writes one whole page into the buffer.
    pub fn write(&mut self, ftl: &mut dyn Ftl, lpn: Lpn, now_ns: u64, data: Option<&[u8]>) {
        self.charge_ram();
        if data.is_some() {
            self.ensure_payload();
        }
        let slot = match self.index.get(lpn) {
            Some(slot) => {
                self.counters.write_hits += 1;
                self.policy.hit(slot, lpn, true);
                slot
            }
            None => {
                self.counters.write_misses += 1;
                let slot = self.allocate(ftl, now_ns);
                self.index.insert(lpn, slot);
                self.slot_lpn[slot as usize] = lpn;
                self.policy.inserted(slot, lpn, true);
                self.note_nodes();
                self.prefetch_victims(ftl);
                slot
            }
        };
        self.dirty[slot as usize] = true;
        if let Some(d) = data {
            self.page_data_mut(slot).copy_from_slice(d);
        }
    }

    /// Reads one whole page through the buffer; returns false when the page holds no data
    /// (neither buffered nor mapped).
    pub fn read(
        &mut self,
        ftl: &mut dyn Ftl,
        lpn: Lpn,
        now_ns: u64,
        out: Option<&mut [u8]>,
    ) -> bool {
        self.charge_ram();
        if out.is_some() {
            self.ensure_payload();
        }
        if let Some(slot) = self.index.get(lpn) {
            self.counters.read_hits += 1;
            self.policy.hit(slot, lpn, false);
            if let (Some(o), Some(d)) = (out, self.page_data(slot)) {
                o.copy_from_slice(d);
            }
            return true;
        }
        self.counters.read_misses += 1;
        // An unmapped page reads as zeros without touching flash: nothing worth caching.
        if !self.policy.caches_reads() || !ftl.is_mapped(lpn) {
            return ftl.read_page(lpn, now_ns, out);
        }
        let slot = self.allocate(ftl, now_ns);
        let mapped = if self.data.is_empty() {
            ftl.read_page(lpn, now_ns, None)
        } else {
            let s = slot as usize * self.page_bytes;
            let mapped = ftl.read_page(lpn, now_ns, Some(&mut self.data[s..s + self.page_bytes]));
            if let Some(o) = out {
                o.copy_from_slice(&self.data[s..s + self.page_bytes]);
            }
            mapped
        };
        debug_assert!(mapped, "is_mapped said yes");
        self.index.insert(lpn, slot);
        self.slot_lpn[slot as usize] = lpn;
        self.dirty[slot as usize] = false;
        self.policy.inserted(slot, lpn, false);
        self.note_nodes();
        true
    }

    /// Discards page `lpn` from the buffer (the caller trims it in the FTL).
    pub fn trim(&mut self, lpn: Lpn) {
        if let Some(slot) = self.index.remove(lpn) {
            self.policy.removed(slot, lpn);
            self.dirty[slot as usize] = false;
            self.free.push(slot);
        }
    }

    /// Writes every dirty page back in ascending page order; the pages stay buffered, clean.
    pub fn flush(&mut self, ftl: &mut dyn Ftl, now_ns: u64, reason: FlushReason) {
        let mut dirty: Vec<(Lpn, Slot)> = (0..self.capacity_pages)
            .filter(|&s| self.dirty[s as usize])
            .map(|s| (self.slot_lpn[s as usize], s))
            .collect();
        dirty.sort_unstable();
        for &(lpn, slot) in &dirty {
            ftl.write_page(lpn, now_ns, self.page_data(slot));
            self.dirty[slot as usize] = false;
            self.policy.cleaned(slot);
        }
        let n = dirty.len() as u64;
        self.counters.written_back_pages += n;
        match reason {
            FlushReason::Host => self.counters.flush_written_pages += n,
            FlushReason::EndOfRun => self.counters.final_written_pages += n,
        }
    }

    /// Cache hints for the FTL work of the coming evictions: the device prefetches what the
    /// host's pages need, but with a buffer the FTL writes other pages (the victims), whose
    /// translation entries would otherwise be cold misses. Two stages, as in the device.
    #[inline]
    fn prefetch_victims(&self, ftl: &dyn Ftl) {
        if !self.free.is_empty() {
            return;
        }
        if let Some(s) = self.policy.upcoming_victim(0) {
            ftl.prefetch_mapped(self.slot_lpn[s as usize]);
        }
        if let Some(s) = self.policy.upcoming_victim(2) {
            ftl.prefetch_translation(self.slot_lpn[s as usize]);
        }
    }

    fn note_nodes(&mut self) {
        let n = u64::from(self.policy.block_nodes());
        if n > self.counters.block_nodes_max {
            self.counters.block_nodes_max = n;
            self.counters.metadata_bytes_max = n * BLOCK_NODE_BYTES;
        }
    }

    /// A free slot, evicting victims until there is one.
    fn allocate(&mut self, ftl: &mut dyn Ftl, now_ns: u64) -> Slot {
        while self.free.is_empty() {
            self.evict(ftl, now_ns);
        }
        self.free.pop().expect("a slot was freed")
    }

    fn evict(&mut self, ftl: &mut dyn Ftl, now_ns: u64) {
        self.counters.victims += 1;
        self.block_slots.clear();
        match self.policy.victim(&mut self.block_slots) {
            Victim::Page(slot) => {
                let lpn = self.slot_lpn[slot as usize];
                if self.dirty[slot as usize] {
                    ftl.write_page(lpn, now_ns, self.page_data(slot));
                    self.counters.written_back_pages += 1;
                }
                self.release(lpn, slot);
            }
            Victim::Block(lbn) => self.evict_block(ftl, lbn, now_ns),
        }
    }

    fn release(&mut self, lpn: Lpn, slot: Slot) {
        let removed = self.index.remove(lpn);
        assert_eq!(removed, Some(slot), "victim page {lpn} was not where the policy said");
        self.dirty[slot as usize] = false;
        self.free.push(slot);
        self.counters.evicted_pages += 1;
    }

    /// Writes a victim block's pages back in page order (padding them when the policy asks).
    fn evict_block(&mut self, ftl: &mut dyn Ftl, lbn: u32, now_ns: u64) {
        let mut slots = std::mem::take(&mut self.block_slots);
        assert!(!slots.is_empty(), "victim block {lbn} has no buffered page");
        // Policies list a block's pages in arrival order, which a sequential stream makes
        // ascending already: check before sorting.
        if !slots.windows(2).all(|w| self.slot_lpn[w[0] as usize] < self.slot_lpn[w[1] as usize]) {
            slots.sort_unstable_by_key(|&s| self.slot_lpn[s as usize]);
        }
        let any_dirty = slots.iter().any(|&s| self.dirty[s as usize]);
        let ppb = u64::from(self.pages_per_block);
        if any_dirty && self.policy.pads_blocks() {
            // Every page of the block, buffered or read from flash, in page order.
            let first = u64::from(lbn) * ppb;
            let end = (first + ppb).min(self.logical_pages);
            let mut next = 0;
            for lpn in first..end {
                let lpn = lpn as Lpn;
                if next < slots.len() && self.slot_lpn[slots[next] as usize] == lpn {
                    let slot = slots[next];
                    next += 1;
                    ftl.write_page(lpn, now_ns, self.page_data(slot));
                    if self.dirty[slot as usize] {
                        self.counters.written_back_pages += 1;
                    } else {
                        self.counters.padding_writes += 1;
                    }
                    self.release(lpn, slot);
                } else if ftl.is_mapped(lpn) {
                    self.counters.padding_reads += 1;
                    self.counters.padding_writes += 1;
                    if self.data.is_empty() {
                        ftl.read_page(lpn, now_ns, None);
                        ftl.write_page(lpn, now_ns, None);
                    } else {
                        ftl.read_page(lpn, now_ns, Some(&mut self.scratch));
                        ftl.write_page(lpn, now_ns, Some(&self.scratch));
                    }
                }
            }
            assert_eq!(next, slots.len(), "victim block {lbn} listed a page of another block");
        } else {
            for &slot in &slots {
                let lpn = self.slot_lpn[slot as usize];
                debug_assert_eq!(u64::from(lpn) / ppb, u64::from(lbn));
                if self.dirty[slot as usize] {
                    ftl.write_page(lpn, now_ns, self.page_data(slot));
                    self.counters.written_back_pages += 1;
                }
                self.release(lpn, slot);
            }
        }
        slots.clear();
        self.block_slots = slots;
    }

    /// Invariant check: index, slots, free list and policy agree.
    pub fn check(&self) {
        assert_eq!(self.index.len() + self.free.len(), self.capacity_pages as usize);
        let mut is_free = vec![false; self.capacity_pages as usize];
        for &s in &self.free {
            assert!(!is_free[s as usize], "slot {s} free twice");
            is_free[s as usize] = true;
            assert!(!self.dirty[s as usize], "free slot {s} is dirty");
        }
        for s in 0..self.capacity_pages {
            if !is_free[s as usize] {
                assert_eq!(self.index.get(self.slot_lpn[s as usize]), Some(s), "slot {s}");
            }
        }
    }
}
