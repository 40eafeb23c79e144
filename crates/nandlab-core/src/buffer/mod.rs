//! RAM buffers between the host and any FTL (FAB paper, docs/PAPERS.md; docs/ALGORITHMS.md §5).
//!
//! # What this models
//!
//! A DRAM buffer of `buffer.size_bytes` that every host page access passes through, as in
//! the FAB paper, §III-A (Fig. 1): a write is stored in the buffer (a hit overwrites the buffered
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
//! | `fab` | FAB (FAB paper §III–IV) | block with most buffered pages, ties LRU | cached |
//! | `bplru` | BPLRU (Kim & Ahn, FAST'08) | least recently written block, padded | not cached |
//! | `cflru` | CFLRU (Park et al., CASES'06) | LRU clean page in the window, else LRU page | cached |
//!
//! A block victim's pages are written back together in ascending page order, which is what
//! lets a log-block FTL finish them with a switch merge (FAB paper §III-B). "Block" is the
//! logical block `lpn / pages_per_block`, the unit the hybrid FTLs map.
//!
//! # Lookups
//!
//! The FAB paper (§IV-B) searches a linked list of block nodes linearly and reports the search
//! as < 0.1 % of FAB's time but 33 % of page-LRU's. Here every policy finds a page through a
//! page index (`list::KeyMap`: an array indexed by page, or a hash table sized by the buffer
//! when the logical space is too large for an array), O(1), and keeps its recency order in
//! intrusive lists over slot numbers, so the policies differ in what they evict, not in how
//! long they search. A block victim's pages are read off the index in page order.
//!
//! # Speed
//!
//! The buffer is on the per-page path, so its cost is held to a figure (the target: a 1 GiB
//! simulation at most 1.5x slower than without a buffer; `nandlab bench --only buffer`):
//! `WriteBuffer<P, M>` is built once per policy and index kind, so the device makes one
//! dynamic call per page and the policy's calls are static; lists keep an entry's links in
//! one cache line; the coming victims' FTL entries are prefetched when the FTL takes hints.
//!
//! # Timing and flushes
//!
//! Each host page moved into or out of the buffer costs `timing.ram_page_ns` (FAB paper,
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

mod spec;
#[cfg(test)]
mod tests;

use serde::Serialize;

pub use spec::{BufferConfig, BufferSpec, NO_BUFFER};

use crate::error::ConfigError;
use crate::flash::Lpn;
use crate::ftl::Ftl;
use crate::spec::{Named, Param, Params};
use list::KeyMap;
use std::sync::Arc;

/// A slot of the buffer (index into its page arrays).
pub type Slot = u32;

/// What the policy evicts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Victim {
    /// One page.
    Page(Slot),
    /// Every buffered page of logical block `lbn` (`lpn / pages_per_block`), of which the
    /// policy counts `pages`. The mechanism finds them through its page index, in page order.
    Block { lbn: u32, pages: u32 },
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
    /// Chooses and forgets a victim. Called only when at least one page is buffered.
    fn victim(&mut self) -> Victim;
    /// The victim `k` evictions from now if nothing else happens (`k` = 0: the next one), for
    /// cache hints: a guess is fine. Policies that know it cheaply say so.
    fn upcoming_victim(&self, _k: u32) -> Option<Victim> {
        None
    }
    /// Cache hint for a host access to `lpn` a few requests ahead, in two stages (`near` =
    /// false first, then true closer to the access), for policies with per-block state.
    fn prefetch(&self, _lpn: Lpn, _near: bool) {}
    /// Block nodes in use (block-level policies; 0 for page-level ones).
    fn block_nodes(&self) -> u32 {
        0
    }
}

/// Bytes of one block node: FAB paper §IV-A (block number, page count, next pointer, page
/// list pointer).
pub const BLOCK_NODE_BYTES: u64 = 16;

/// How many evictions ahead the first prefetch stage looks (see `prefetch_victims`). Finding
/// a farther victim walks the policy's list through dependent cache misses, which cost more
/// than the hint saves (`nandlab bench --only buffer`: 3 was slower than 1).
const VICTIM_PREFETCH_FAR: u32 = 1;

/// Block victims: the last this many accesses before an eviction prefetch the predicted
/// victim block's index and translation entries.
const BLOCK_VICTIM_LEAD: usize = 3;

/// How many pages ahead a block victim's write-back starts each page's FTL cache misses.
const BLOCK_PREFETCH_PAGES: usize = 6;

/// One registered buffer policy: its `buffer.kind` name, the parameters it declares (read
/// through `Params` when chosen), and how it resolves them into a buffer builder.
#[derive(Clone, Copy, Debug)]
pub struct BufferEntry {
    pub name: &'static str,
    pub params: &'static [Param],
    pub resolve: fn(&mut Params<'_>) -> Result<Arc<dyn ResolvedBuffer>, ConfigError>,
}

impl Named for BufferEntry {
    fn name(&self) -> &'static str {
        self.name
    }
    fn params(&self) -> &'static [Param] {
        self.params
    }
}

/// A buffer policy with its parameters resolved: it builds the buffer for a shape.
pub trait ResolvedBuffer: std::fmt::Debug + Send + Sync {
    fn build(&self, shape: BufferShape) -> Box<dyn Buffer>;
}

/// The resolved form of a policy without parameters: its constructors for the two page-index
/// kinds (`list::KeyMap`).
#[derive(Clone, Copy, Debug)]
pub struct Plain {
    pub dense: fn(BufferShape) -> Box<dyn Buffer>,
    pub hashed: fn(BufferShape) -> Box<dyn Buffer>,
}

impl ResolvedBuffer for Plain {
    fn build(&self, shape: BufferShape) -> Box<dyn Buffer> {
        if dense_index(shape) {
            (self.dense)(shape)
        } else {
            (self.hashed)(shape)
        }
    }
}

/// Whether a buffer of `shape` indexes its pages with a dense array (up to
/// `list::DENSE_MAX_KEYS` logical pages) rather than a hash table.
#[must_use]
pub fn dense_index(shape: BufferShape) -> bool {
    shape.logical_pages <= list::DENSE_MAX_KEYS
}

// The registry: one line per policy (`buffer.kind = "none"` is no buffer, not a policy).
crate::spec::registry! {
    BufferEntry;
    lru,
    fab,
    bplru,
    cflru,
}

/// `buffer.kind` values.
#[must_use]
pub fn kinds() -> Vec<&'static str> {
    let mut names = vec![NO_BUFFER];
    names.extend(crate::spec::names(REGISTRY));
    names
}

/// The buffer registered as `kind` with `shape` and its parameters' defaults (`None` for
/// `none` or a name no entry has), for callers that build one outside a configuration
/// (benchmarks, tests).
#[must_use]
pub fn by_name(kind: &str, shape: BufferShape) -> Option<Box<dyn Buffer>> {
    let entry = REGISTRY.iter().find(|e| e.name == kind)?;
    let mut tables = crate::spec::Tables::default();
    let resolved = (entry.resolve)(&mut tables.params("buffer")).ok()?;
    Some(resolved.build(shape))
}

/// The sizes a buffer is built for.
#[derive(Clone, Copy, Debug)]
pub struct BufferShape {
    pub capacity_pages: u32,
    pub pages_per_block: u32,
    pub logical_pages: u64,
    pub page_size_bytes: u64,
    pub ram_page_ns: u64,
}

impl BufferShape {
    /// Logical blocks of the space the buffer indexes (block-level policies keep one node each).
    #[must_use]
    pub fn logical_blocks(&self) -> u64 {
        self.logical_pages.div_ceil(u64::from(self.pages_per_block))
    }
}

/// A RAM buffer as the device drives it. The one implementation is `WriteBuffer<P>`, built
/// for its policy `P` once (`by_name`), so the policy's calls in the per-page path are static
/// and inlined: the device pays one dynamic call per page, as it does for the FTL.
pub trait Buffer: Send {
    fn name(&self) -> &'static str;
    fn capacity_pages(&self) -> u32;
    /// Pages buffered now.
    fn len(&self) -> u32;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Whether `lpn` is buffered, and if so whether it is dirty.
    fn state(&self, lpn: Lpn) -> Option<bool>;
    /// Whether any buffered page is dirty (O(capacity)).
    fn has_dirty(&self) -> bool;
    fn counters(&self) -> BufferCounters;
    /// RAM time accumulated since the last call (the device adds it to the request's service).
    fn take_pending_ns(&mut self) -> u64;
    /// RAM the buffer uses: payload, slot arrays, index.
    fn memory_bytes(&self) -> u64;
    /// Writes one whole page into the buffer.
    fn write(&mut self, ftl: &mut dyn Ftl, lpn: Lpn, now_ns: u64, data: Option<&[u8]>);
    /// Reads one whole page through the buffer; false when the page holds no data.
    fn read(&mut self, ftl: &mut dyn Ftl, lpn: Lpn, now_ns: u64, out: Option<&mut [u8]>) -> bool;
    /// `write` of the whole pages `lpns`, in order, without payload: one call for a request's
    /// run of pages (a simulation's common case) rather than one per page.
    fn write_pages(&mut self, ftl: &mut dyn Ftl, lpns: std::ops::Range<Lpn>, now_ns: u64);
    /// `read` of the pages `lpns`, in order, without payload; returns how many held no data.
    fn read_pages(&mut self, ftl: &mut dyn Ftl, lpns: std::ops::Range<Lpn>, now_ns: u64) -> u64;
    /// Discards page `lpn` from the buffer (the caller trims it in the FTL).
    fn trim(&mut self, lpn: Lpn);
    /// Writes every dirty page back in ascending page order; the pages stay buffered, clean.
    fn flush(&mut self, ftl: &mut dyn Ftl, now_ns: u64, reason: FlushReason);
    /// Cache hint for a host access to `lpn` a few requests ahead (`near`: second stage).
    fn prefetch(&self, lpn: Lpn, near: bool);
    /// Tells the buffer which FTL it sits in front of (whether the FTL takes cache hints).
    fn attach(&mut self, ftl: &dyn Ftl);
    /// Invariant check.
    fn check(&self);
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
    /// Most block nodes in use at once, and their RAM (FAB paper, Table III).
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
pub struct WriteBuffer<P, M> {
    policy: P,
    capacity_pages: u32,
    pages_per_block: u32,
    logical_pages: u64,
    page_bytes: usize,
    ram_page_ns: u64,
    index: M,
    slot_lpn: Vec<Lpn>,
    dirty: Vec<bool>,
    free: Vec<Slot>,
    /// Page bytes by slot; empty until the first payload arrives.
    data: Vec<u8>,
    scratch: Vec<u8>,
    /// Slots of the victim block being written back, in page order (reused).
    block_slots: Vec<Slot>,
    pending_ns: u64,
    counters: BufferCounters,
    /// Whether the FTL behind takes cache hints (`Buffer::attach`).
    ftl_hints: bool,
}

impl<P: BufferPolicy, M: KeyMap> WriteBuffer<P, M> {
    #[must_use]
    pub fn new(policy: P, shape: BufferShape) -> Self {
        let BufferShape {
            capacity_pages,
            pages_per_block,
            logical_pages,
            page_size_bytes,
            ram_page_ns,
        } = shape;
        assert!(capacity_pages >= 1, "a buffer needs at least one page");
        let n = capacity_pages as usize;
        Self {
            policy,
            capacity_pages,
            pages_per_block,
            logical_pages,
            page_bytes: page_size_bytes as usize,
            ram_page_ns,
            index: M::new(n, logical_pages),
            slot_lpn: vec![Lpn::default(); n],
            dirty: vec![false; n],
            // Popped from the end: slot 0 is used first.
            free: (0..capacity_pages).rev().collect(),
            data: Vec::new(),
            scratch: Vec::new(),
            block_slots: Vec::with_capacity(pages_per_block as usize),
            pending_ns: 0,
            counters: BufferCounters::default(),
            ftl_hints: false,
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

    /// Whether `lpn` is buffered, and if so whether it is dirty.
    #[must_use]
    pub fn state(&self, lpn: Lpn) -> Option<bool> {
        self.index.get(lpn.get()).map(|s| self.dirty[s as usize])
    }

    /// Whether any buffered page is dirty (O(capacity)).
    #[must_use]
    pub fn has_dirty(&self) -> bool {
        self.dirty.iter().any(|&d| d)
    }

    #[must_use]
    pub fn counters(&self) -> BufferCounters {
        let c = self.counters;
        let accesses = c.read_hits + c.read_misses + c.write_hits + c.write_misses;
        BufferCounters { ram_ns: accesses * self.ram_page_ns, ..c }
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

    /// Every host page access costs one RAM page transfer (`counters().ram_ns` counts them).
    #[inline]
    fn charge_ram(&mut self) {
        self.pending_ns += self.ram_page_ns;
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
    #[inline(always)]
    pub fn write(&mut self, ftl: &mut dyn Ftl, lpn: Lpn, now_ns: u64, data: Option<&[u8]>) {
        self.charge_ram();
        if data.is_some() {
            self.ensure_payload();
        }
        let slot = match self.index.get(lpn.get()) {
            Some(slot) => {
                self.counters.write_hits += 1;
                self.policy.hit(slot, lpn, true);
                slot
            }
            None => {
                self.counters.write_misses += 1;
                let slot = self.allocate(ftl, now_ns);
                self.index.insert(lpn.get(), slot);
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
    #[inline]
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
        if let Some(slot) = self.index.get(lpn.get()) {
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
            // A failed read's bytes are not the page's: never cache them as a clean copy.
            if ftl.flash_mut().error_pending() {
                self.free.push(slot);
                return mapped;
            }
            mapped
        };
        debug_assert!(mapped, "is_mapped said yes");
        self.index.insert(lpn.get(), slot);
        self.slot_lpn[slot as usize] = lpn;
        self.dirty[slot as usize] = false;
        self.policy.inserted(slot, lpn, false);
        self.note_nodes();
        true
    }

    /// Discards page `lpn` from the buffer (the caller trims it in the FTL).
    pub fn trim(&mut self, lpn: Lpn) {
        if let Some(slot) = self.index.remove(lpn.get()) {
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

    /// Cache hint for a host access to `lpn` a few requests ahead, in the device's two stages
    /// (`near` = false: the index cell; true: what the policy will touch).
    #[inline]
    pub fn prefetch(&self, lpn: Lpn, near: bool) {
        if !near {
            self.index.prefetch(lpn.get());
        }
        self.policy.prefetch(lpn, near);
    }

    /// Cache hints for the coming evictions: with a buffer the FTL writes other pages than
    /// the host's (the victims), whose translation entries and index cells would otherwise
    /// be cold misses. Two stages, as in the device.
    #[inline]
    fn prefetch_victims(&self, ftl: &dyn Ftl) {
        // Only the last access before an eviction has anything to do (or with page victims,
        // which are evicted one per access, every access if the FTL takes hints).
        let free = self.free.len();
        if (1..=BLOCK_VICTIM_LEAD).contains(&free) || (free == 0 && self.ftl_hints) {
            self.prefetch_next_victims(ftl);
        }
    }

    #[inline(never)]
    fn prefetch_next_victims(&self, ftl: &dyn Ftl) {
        match self.free.len() {
            // Page victims: one eviction per access, so the victims a few accesses ahead.
            // (Finding them costs cache misses of its own, which pay off only when the FTL
            // takes hints too.)
            0 => {
                if let Some(v @ Victim::Page(_)) = self.policy.upcoming_victim(0) {
                    ftl.prefetch_mapped(self.victim_lpn(v));
                }
                if let Some(v @ Victim::Page(_)) = self.policy.upcoming_victim(VICTIM_PREFETCH_FAR)
                {
                    let lpn = self.victim_lpn(v);
                    ftl.prefetch_translation(lpn);
                    self.index.prefetch(lpn.get());
                }
            }
            // Block victims free several slots at once: one access before the next eviction,
            // the whole block's index entries and translation entries (a few cache lines
            // each); `evict_block` starts the rest.
            1..=BLOCK_VICTIM_LEAD => {
                if let Some(Victim::Block { lbn, .. }) = self.policy.upcoming_victim(0) {
                    let ppb = u64::from(self.pages_per_block);
                    let first = u64::from(lbn) * ppb;
                    let end = (first + ppb).min(self.logical_pages);
                    // One hint per 64-byte line of 4-byte entries.
                    for lpn in (first..end).step_by(16) {
                        self.index.prefetch(lpn as u32);
                        if self.ftl_hints {
                            ftl.prefetch_translation(Lpn::from_u64(lpn));
                        }
                    }
                }
            }
            _ => {}
        }
    }

    /// A page of victim `v` (a block's first page).
    #[inline]
    fn victim_lpn(&self, v: Victim) -> Lpn {
        match v {
            Victim::Page(slot) => self.slot_lpn[slot as usize],
            Victim::Block { lbn, .. } => Lpn::new(lbn.saturating_mul(self.pages_per_block)),
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
    #[inline]
    fn allocate(&mut self, ftl: &mut dyn Ftl, now_ns: u64) -> Slot {
        // A block victim frees many slots at once: most allocations take one directly.
        match self.free.pop() {
            Some(slot) => slot,
            None => self.allocate_by_eviction(ftl, now_ns),
        }
    }

    #[inline]
    fn allocate_by_eviction(&mut self, ftl: &mut dyn Ftl, now_ns: u64) -> Slot {
        while self.free.is_empty() {
            self.evict(ftl, now_ns);
        }
        self.free.pop().expect("a slot was freed")
    }

    #[inline]
    fn evict(&mut self, ftl: &mut dyn Ftl, now_ns: u64) {
        self.counters.victims += 1;
        match self.policy.victim() {
            Victim::Page(slot) => {
                let lpn = self.slot_lpn[slot as usize];
                if self.dirty[slot as usize] {
                    ftl.write_page(lpn, now_ns, self.page_data(slot));
                    self.counters.written_back_pages += 1;
                }
                self.release(lpn, slot);
            }
            Victim::Block { lbn, pages } => self.evict_block(ftl, lbn, pages, now_ns),
        }
    }

    fn release(&mut self, lpn: Lpn, slot: Slot) {
        let removed = self.index.remove(lpn.get());
        assert_eq!(removed, Some(slot), "victim page {lpn} was not where the policy said");
        self.dirty[slot as usize] = false;
        self.free.push(slot);
        self.counters.evicted_pages += 1;
    }

    /// Writes a victim block's pages back in page order (padding them when the policy asks).
    #[inline(never)]
    fn evict_block(&mut self, ftl: &mut dyn Ftl, lbn: u32, pages: u32, now_ns: u64) {
        // The block's pages, in page order, from the index: a dense index holds a block's
        // entries in a few adjacent cache lines, so this costs less than the policies keeping
        // per-block page lists on every access would.
        let mut slots = std::mem::take(&mut self.block_slots);
        slots.clear();
        let ppb = u64::from(self.pages_per_block);
        let first = u64::from(lbn) * ppb;
        let end = (first + ppb).min(self.logical_pages);
        // All of the block's index lines at once, rather than one miss after another.
        for lpn in (first..end).step_by(16) {
            self.index.prefetch(lpn as u32);
        }
        // The policy's count ends the scan early (and is checked: with a wrong count the
        // scan would end too early or the assertion below fail).
        self.index.values_in_range(first as u32, end as u32, pages as usize, &mut slots);
        debug_assert!(
            (first..end).filter(|&l| self.index.get(l as u32).is_some()).count() == pages as usize,
            "victim block {lbn}: more pages buffered than counted"
        );
        assert_eq!(slots.len(), pages as usize, "victim block {lbn}: pages buffered vs counted");
        assert!(!slots.is_empty(), "victim block {lbn} has no buffered page");
        if self.policy.pads_blocks() && slots.iter().any(|&s| self.dirty[s as usize]) {
            // Every page of the block, buffered or read from flash, in page order.
            let mut next = 0;
            for lpn in first..end {
                let lpn = Lpn::from_u64(lpn);
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
                        // A failed read's bytes are not the page's: the page stays where it is.
                        if !ftl.flash_mut().error_pending() {
                            ftl.write_page(lpn, now_ns, Some(&self.scratch));
                        }
                    }
                }
            }
            debug_assert_eq!(next, slots.len());
        } else {
            // Each page's FTL cache misses are started a few pages before its write.
            let hints = self.ftl_hints;
            if hints {
                for &slot in slots.iter().skip(1).take(BLOCK_PREFETCH_PAGES) {
                    ftl.prefetch_mapped(self.slot_lpn[slot as usize]);
                }
            }
            for (i, &slot) in slots.iter().enumerate() {
                if let (true, Some(&ahead)) = (hints, slots.get(i + 1 + BLOCK_PREFETCH_PAGES)) {
                    ftl.prefetch_mapped(self.slot_lpn[ahead as usize]);
                }
                let lpn = self.slot_lpn[slot as usize];
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
                assert_eq!(self.index.get(self.slot_lpn[s as usize].get()), Some(s), "slot {s}");
            }
        }
    }
}

impl<P: BufferPolicy, M: KeyMap> Buffer for WriteBuffer<P, M> {
    fn name(&self) -> &'static str {
        WriteBuffer::name(self)
    }
    fn capacity_pages(&self) -> u32 {
        WriteBuffer::capacity_pages(self)
    }
    fn len(&self) -> u32 {
        WriteBuffer::len(self)
    }
    fn state(&self, lpn: Lpn) -> Option<bool> {
        WriteBuffer::state(self, lpn)
    }
    fn has_dirty(&self) -> bool {
        WriteBuffer::has_dirty(self)
    }
    fn counters(&self) -> BufferCounters {
        WriteBuffer::counters(self)
    }
    fn take_pending_ns(&mut self) -> u64 {
        WriteBuffer::take_pending_ns(self)
    }
    fn memory_bytes(&self) -> u64 {
        WriteBuffer::memory_bytes(self)
    }
    fn write(&mut self, ftl: &mut dyn Ftl, lpn: Lpn, now_ns: u64, data: Option<&[u8]>) {
        WriteBuffer::write(self, ftl, lpn, now_ns, data);
    }
    fn read(&mut self, ftl: &mut dyn Ftl, lpn: Lpn, now_ns: u64, out: Option<&mut [u8]>) -> bool {
        WriteBuffer::read(self, ftl, lpn, now_ns, out)
    }
    fn write_pages(&mut self, ftl: &mut dyn Ftl, lpns: std::ops::Range<Lpn>, now_ns: u64) {
        for lpn in (lpns.start.get()..lpns.end.get()).map(Lpn::new) {
            WriteBuffer::write(self, ftl, lpn, now_ns, None);
        }
    }
    fn read_pages(&mut self, ftl: &mut dyn Ftl, lpns: std::ops::Range<Lpn>, now_ns: u64) -> u64 {
        let mut unmapped = 0;
        for lpn in (lpns.start.get()..lpns.end.get()).map(Lpn::new) {
            unmapped += u64::from(!WriteBuffer::read(self, ftl, lpn, now_ns, None));
        }
        unmapped
    }
    fn trim(&mut self, lpn: Lpn) {
        WriteBuffer::trim(self, lpn);
    }
    fn flush(&mut self, ftl: &mut dyn Ftl, now_ns: u64, reason: FlushReason) {
        WriteBuffer::flush(self, ftl, now_ns, reason);
    }
    fn prefetch(&self, lpn: Lpn, near: bool) {
        WriteBuffer::prefetch(self, lpn, near);
    }
    fn attach(&mut self, ftl: &dyn Ftl) {
        self.ftl_hints = ftl.takes_prefetch_hints();
    }
    fn check(&self) {
        WriteBuffer::check(self);
    }
}
