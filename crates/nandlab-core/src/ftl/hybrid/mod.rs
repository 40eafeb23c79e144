//! Hybrid (log-block) FTLs: BAST, SAST and FAST (docs/ALGORITHMS.md §4; lazy wear-leveling paper
//! §2.2, block-recycling paper §3–§5; docs/PAPERS.md).
//!
//! Data blocks are block-mapped: logical block `lbn` (pages `lbn·N_p .. (lbn+1)·N_p`) lives in one
//! physical data block with page `i` at offset `i`. Host writes never update a data block in
//! place; they go to *log blocks*, a small pool (`ftl.log_blocks`, default 8) of blocks mapped
//! page by page (the papers' "sector mapping" inside log blocks; our mapping unit is the flash
//! page, sub-page host writes are read-modify-written by the device). A read returns the newest
//! copy: the log copy if one exists, else the data block's page.
//!
//! Associations (which log blocks a write may use), picked once at construction:
//! - BAST: each logical block owns at most one log block (SAST with N = 1, K = 1).
//! - SAST: groups of N logical blocks share up to K log blocks, filled in order.
//! - FAST: one sequential log block (a write at offset 0 starts it; in-order appends extend it)
//!   plus fully associative random log blocks shared by all logical blocks, reclaimed in FIFO
//!   order.
//!
//! Reclaiming log space merges: *switch* (a log block holding its logical block's pages in place
//! and complete becomes the data block), *partial* (an in-place prefix: the rest is copied in, then
//! switch), *full* (the newest copy of every page is copied into a fresh block; the old data block
//! and the emptied log blocks are erased). BAST adds the block-recycling paper's *migration* of a
//! full log block, chosen by a `RecyclingPolicy` (see `recycling`). Each kind's count, copies,
//! erases and flash time are counted separately (`FtlCounters::recycles`).
//!
//! Blocks are erased when they are released (so the free pool holds erased blocks); the costs are
//! the papers' either way: a full merge erases two blocks, a migration one. With lazy wear leveling
//! on (`set_lazy_wear_leveling`, lazy wear-leveling paper, Algorithm 1, `crate::wear`), `release`
//! first lets it swap a worn victim for a cold logical block's data block.
//!
//! RAM reported (`table_memory_bytes`) is what the modelled controller needs — the block map
//! (4 B per logical block) and a page map per log block (4 B per page) — not this simulator's
//! per-page index, which exists only to make reads O(1).
//!
//! Restart: `recover` (module `recover`) rebuilds every table from the pages' OOB records,
//! completing or repairing work a crash interrupted; `Ftl::checkpoint` writes the tables for the
//! store's fast mount.

mod recover;
pub mod recycling;
pub mod spec;

pub use recover::recover_from_spec;

use std::collections::VecDeque;

use super::{Ftl, FtlCounters, RecycleKind};
use crate::allocation::{AllocationSpec, Allocator, PlaneSet, Room};
use crate::flash::Geometry;
use crate::flash::{BlockId, BlockRecord, Checkpoint, Flash, Lpn, Oob, Ppn, Source, NONE};
use crate::wear::{Endurance, LifetimeState, WearHost, WearLeveler, WearLevelingStats};
use recycling::{CostModel, RecyclingPolicy};
pub(crate) use spec::SAST_GROUP_DATA_BLOCKS;
pub use spec::{resolve_hybrid, HybridKind, HybridSpec};

/// Which data blocks may use which log blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Association {
    /// Groups of `data_blocks` logical blocks share up to `log_blocks` log blocks (BAST: 1, 1).
    Set { data_blocks: u32, log_blocks: u32 },
    /// FAST: one sequential log block plus random log blocks shared by all.
    Full,
}

/// One log block in use.
#[derive(Clone, Copy, Debug)]
struct Log {
    block: BlockId,
    /// Set association: the group. FAST: the logical block of the sequential log; `NONE` for a
    /// random log.
    owner: u32,
    /// Next page to program.
    write_pointer: u32,
    /// Order of allocation (older logs of a group come first).
    allocated: u64,
    /// Last host write (LRU victim choice).
    last_write: u64,
}

pub struct HybridFtl {
    geometry: Geometry,
    ppb: u32,
    flash: Flash,
    association: Association,
    name: &'static str,
    /// Log blocks the pool may hold at once.
    log_blocks_max: u32,
    logical_blocks: u32,
    /// LBN → its data block (`BlockId::NONE`: never consolidated).
    data: Vec<BlockId>,
    /// LPN → the newest copy when it is in a log block, else `Ppn::NONE`.
    log_ppn: Vec<Ppn>,
    /// One bit per physical page: set iff it holds the newest copy of its LPN.
    valid_bits: Vec<u64>,
    /// Valid pages per block.
    block_valid: Vec<u32>,
    erase_counts: Vec<u32>,
    /// Log slots (`None` = unused); at most `log_blocks_max` are `Some`.
    logs: Vec<Option<Log>>,
    logs_in_use: u32,
    /// Set association: each group's log being filled (slot), `NONE` if the group has none.
    group_active: Vec<u32>,
    /// Set association: log blocks each group holds.
    group_logs: Vec<u32>,
    /// FAST: the sequential log's slot, `NONE` if none.
    sequential: u32,
    /// FAST: random log slots, oldest first (the back one is being filled).
    random: VecDeque<u32>,
    /// Erased blocks of each plane, in allocation order.
    free: Vec<VecDeque<BlockId>>,
    free_count: u32,
    /// Planes with a free block.
    free_planes: PlaneSet,
    /// Picks the plane of every new block (`ftl.allocation`).
    alloc: Box<dyn Allocator>,
    recycling: Box<dyn RecyclingPolicy>,
    seq: u64,
    clock: u64,
    counters: FtlCounters,
    /// The wear leveler (`wear.kind`), told of every erase; `None`: off.
    wear: Option<Box<dyn WearLeveler>>,
    endurance: Endurance,
}

/// Flash cost so far of the cleaner's work: for attributing it to a recycle kind.
#[derive(Clone, Copy)]
struct Mark {
    copies: u64,
    erases: u64,
    busy_ns: u64,
}

impl HybridFtl {
    /// A hybrid FTL over a fresh (all erased) flash. Configuration limits are checked by
    /// `Config::resolve`; violating them here is a bug.
    #[must_use]
    pub(crate) fn new(
        flash: Flash,
        association: Association,
        log_blocks_max: u32,
        recycling: Box<dyn RecyclingPolicy>,
    ) -> Self {
        let geometry = *flash.geometry();
        let ppb = geometry.pages_per_block;
        let logical_blocks = geometry.logical_pages.div_ceil(u64::from(ppb)) as u32;
        assert!(
            u64::from(geometry.blocks) > u64::from(logical_blocks) + u64::from(log_blocks_max),
            "a merge needs a free block beyond the data and log blocks"
        );
        let (name, groups) = match association {
            Association::Set { data_blocks, log_blocks } => {
                assert!(data_blocks >= 1 && (1..=log_blocks_max).contains(&log_blocks));
                assert_eq!(logical_blocks % data_blocks, 0);
                let name = if data_blocks == 1 && log_blocks == 1 { "bast" } else { "sast" };
                (name, logical_blocks / data_blocks)
            }
            Association::Full => {
                assert!(log_blocks_max >= 2, "FAST needs a sequential and a random log block");
                ("fast", 0)
            }
        };
        let blocks = geometry.blocks as usize;
        let hw = *flash.engine().hardware();
        let planes = flash.planes();
        let mut free = vec![VecDeque::new(); planes as usize];
        for b in geometry.block_ids() {
            free[flash.plane_of(b) as usize].push_back(b);
        }
        Self {
            geometry,
            ppb,
            flash,
            association,
            name,
            log_blocks_max,
            logical_blocks,
            data: vec![BlockId::NONE; logical_blocks as usize],
            log_ppn: vec![Ppn::NONE; geometry.logical_pages as usize],
            valid_bits: vec![0; (geometry.physical_pages() as usize).div_ceil(64)],
            block_valid: vec![0; blocks],
            erase_counts: vec![0; blocks],
            logs: vec![None; log_blocks_max as usize],
            logs_in_use: 0,
            group_active: vec![NONE; groups as usize],
            group_logs: vec![0; groups as usize],
            sequential: NONE,
            random: VecDeque::new(),
            free,
            free_count: geometry.blocks,
            free_planes: (0..planes).fold(PlaneSet::new(planes), |mut set, p| {
                set.insert(p);
                set
            }),
            alloc: crate::allocation::dynamic::DynamicSpec.build(&hw),
            recycling,
            seq: 0,
            clock: 0,
            counters: FtlCounters::default(),
            wear: None,
            endurance: Endurance::new(0, geometry.blocks, 0),
        }
    }

    /// Attaches a wear leveler (`WearSpec::build`; `None` turns leveling off). Its units
    /// are logical blocks (`WearHost::units`).
    pub(crate) fn set_wear_leveler(&mut self, leveler: Option<Box<dyn WearLeveler>>) {
        self.wear = leveler;
    }

    /// Rated program/erase cycles per block (0 = unlimited). The FTL keeps its data blocks, its
    /// log blocks, one block for a merge and `extra_spare` more good (a served drive keeps one
    /// for recovery's repair merge; see `Resolved::served`); blocks beyond those may be retired.
    pub(crate) fn set_endurance(&mut self, cycles: u32, extra_spare: u32) {
        let min_good = self.logical_blocks + self.log_blocks_max + 1 + extra_spare;
        self.endurance = Endurance::new(cycles, self.geometry.blocks, min_good);
    }

    /// Free blocks (erased, ready for allocation).
    #[must_use]
    pub fn free_blocks(&self) -> usize {
        self.free_count as usize
    }

    /// Sets the allocation policy (`ftl.allocation`; `dynamic` until set).
    pub(crate) fn set_allocator(&mut self, alloc: Box<dyn Allocator>) {
        self.alloc = alloc;
    }

    /// The data block of logical block `lbn` (`None`: never consolidated).
    #[must_use]
    pub fn data_block(&self, lbn: u32) -> Option<BlockId> {
        let d = self.data[lbn as usize];
        (d != BlockId::NONE).then_some(d)
    }

    /// The log blocks in use, oldest first: `(block, owner, write pointer)`. The owner is the
    /// group (BAST, SAST: the logical block when N = 1), FAST's sequential log's logical block,
    /// or `None` for a FAST random log.
    #[must_use]
    pub fn log_blocks(&self) -> Vec<(BlockId, Option<u32>, u32)> {
        let mut logs: Vec<Log> = self.logs.iter().flatten().copied().collect();
        logs.sort_by_key(|l| (l.allocated, l.block));
        logs.iter()
            .map(|l| (l.block, (l.owner != NONE).then_some(l.owner), l.write_pointer))
            .collect()
    }

    /// FAST: the sequential log's block, if any.
    #[must_use]
    pub fn sequential_log(&self) -> Option<BlockId> {
        (self.sequential != NONE).then(|| self.log(self.sequential).block)
    }

    /// The recycling policy's name (`merge-only`, ...).
    #[must_use]
    pub fn recycling(&self) -> &'static str {
        self.recycling.name()
    }

    // ---- page state -------------------------------------------------------------------------

    #[inline]
    fn is_valid(&self, ppn: Ppn) -> bool {
        self.valid_bits[ppn.index() / 64] & (1 << (ppn.get() % 64)) != 0
    }

    #[inline]
    fn mark_valid(&mut self, ppn: Ppn) {
        debug_assert!(!self.is_valid(ppn));
        self.valid_bits[ppn.index() / 64] |= 1 << (ppn.get() % 64);
        self.block_valid[self.geometry.block_of(ppn).index()] += 1;
    }

    #[inline]
    fn invalidate(&mut self, ppn: Ppn) {
        debug_assert!(self.is_valid(ppn));
        self.valid_bits[ppn.index() / 64] &= !(1 << (ppn.get() % 64));
        self.block_valid[self.geometry.block_of(ppn).index()] -= 1;
    }

    /// The logical block of `lpn`.
    #[inline]
    fn lbn(&self, lpn: Lpn) -> u32 {
        lpn.get() / self.ppb
    }

    /// The offset of `lpn` in its logical block (and of its copy in a data block).
    #[inline]
    fn offset(&self, lpn: Lpn) -> u32 {
        lpn.get() % self.ppb
    }

    /// Page `offset` of logical block `lbn`.
    #[inline]
    fn lpn(&self, lbn: u32, offset: u32) -> Lpn {
        Lpn::new(lbn * self.ppb + offset)
    }

    /// The newest copy of `lpn`, if any.
    #[inline]
    fn newest(&self, lpn: Lpn) -> Option<Ppn> {
        let l = self.log_ppn[lpn.index()];
        if l != Ppn::NONE {
            return Some(l);
        }
        let d = self.data[self.lbn(lpn) as usize];
        if d == BlockId::NONE {
            return None;
        }
        let ppn = self.geometry.ppn(d, self.offset(lpn));
        self.is_valid(ppn).then_some(ppn)
    }

    // ---- blocks -----------------------------------------------------------------------------

    /// A free block for `key` (the logical block or group it is for, `NONE` for a shared log)
    /// from the plane the allocator picks.
    fn take_free(&mut self, key: u32) -> BlockId {
        assert!(self.free_count > 0, "the free reserve covers every allocation");
        let plane = if self.free.len() == 1 {
            0
        } else {
            self.alloc.host(self.flash.engine(), key, Room { a: &self.free_planes, b: None })
        };
        let list = &mut self.free[plane as usize];
        let b = list.pop_front().expect("the picked plane has a free block");
        if list.is_empty() {
            self.free_planes.remove(plane);
        }
        self.free_count -= 1;
        debug_assert_eq!(self.flash.media().programmed_pages(b), 0);
        b
    }

    /// Puts an erased block back on its plane's free list (`front`: to be used next).
    fn push_free(&mut self, block: BlockId, front: bool) {
        let plane = self.flash.plane_of(block);
        self.free_planes.insert(plane);
        let list = &mut self.free[plane as usize];
        if front {
            list.push_front(block);
        } else {
            list.push_back(block);
        }
        self.free_count += 1;
    }

    /// Erases a block that holds no valid page and returns it to the free pool. A block that was
    /// never programmed since its last erase goes back without another erase.
    fn release(&mut self, block: BlockId) {
        debug_assert_eq!(self.block_valid[block.index()], 0);
        if self.flash.media().programmed_pages(block) == 0 {
            self.push_free(block, true);
            return;
        }
        // Lazy wear leveling may put cold data into a worn victim and hand back the block
        // that data came from, which is then erased instead (Algorithm 1).
        let block = match self.wear.take() {
            None => block,
            Some(mut w) => {
                let b = w.on_victim(self, block);
                w.erased(b);
                self.wear = Some(w);
                b
            }
        };
        self.flash.erase(block, Source::Cleaner);
        self.return_erased(block);
    }

    /// Counts an erase of `block` (done by the caller) and returns it to the free pool, unless
    /// it has worn out and is retired.
    fn return_erased(&mut self, block: BlockId) {
        let count = &mut self.erase_counts[block.index()];
        *count += 1;
        // Good blocks ≥ data + log blocks + 1 leaves a free block for every merge step.
        if !self.endurance.after_erase(block, *count, true) {
            self.push_free(block, false);
        }
    }

    /// Lets a static wear leveler force static data out (between host writes, when no merge is
    /// under way and a free block exists).
    fn level_wear(&mut self) {
        if self.wear.as_ref().is_some_and(|w| w.wants_work()) {
            let mut w = self.wear.take().expect("checked");
            w.work(self);
            self.wear = Some(w);
        }
    }

    fn new_log(&mut self, owner: u32) -> u32 {
        debug_assert!(self.logs_in_use < self.log_blocks_max);
        let slot = self.logs.iter().position(Option::is_none).expect("a log slot is free") as u32;
        let block = self.take_free(owner);
        self.clock += 1;
        self.logs[slot as usize] = Some(Log {
            block,
            owner,
            write_pointer: 0,
            allocated: self.clock,
            last_write: self.clock,
        });
        self.logs_in_use += 1;
        slot
    }

    fn log(&self, slot: u32) -> Log {
        self.logs[slot as usize].expect("slot in use")
    }

    fn drop_slot(&mut self, slot: u32) {
        debug_assert!(self.logs[slot as usize].is_some());
        self.logs[slot as usize] = None;
        self.logs_in_use -= 1;
    }

    // ---- accounting -------------------------------------------------------------------------

    fn mark(&self) -> Mark {
        let c = &self.flash.counters;
        Mark {
            copies: c.copies[Source::Cleaner as usize],
            erases: c.erases[Source::Cleaner as usize],
            busy_ns: c.busy_ns,
        }
    }

    /// Attributes the cleaner's flash work since `from` to `kind`; `count` operations.
    fn account(&mut self, kind: RecycleKind, from: Mark, count: u64) {
        let now = self.mark();
        let s = &mut self.counters.recycles[kind as usize];
        s.count += count;
        s.copied_pages += now.copies - from.copies;
        s.erases += now.erases - from.erases;
        s.busy_ns += now.busy_ns - from.busy_ns;
    }

    // ---- host write -------------------------------------------------------------------------

    fn program_log(&mut self, slot: u32, lpn: Lpn, data: Option<&[u8]>) {
        let mut log = self.log(slot);
        debug_assert!(log.write_pointer < self.ppb);
        let ppn = self.geometry.ppn(log.block, log.write_pointer);
        if let Some(old) = self.newest(lpn) {
            self.invalidate(old);
        }
        self.seq += 1;
        self.flash.program(ppn, Oob { lpn, seq: self.seq, region: 0 }, Source::Host, data);
        self.mark_valid(ppn);
        self.log_ppn[lpn.index()] = ppn;
        self.clock += 1;
        log.write_pointer += 1;
        log.last_write = self.clock;
        self.logs[slot as usize] = Some(log);
    }

    // ---- merges -----------------------------------------------------------------------------

    /// Does log `slot` hold pages 0..write_pointer of `lbn` in place, all still newest?
    fn in_place(&self, slot: u32, lbn: u32) -> bool {
        let log = self.log(slot);
        if log.write_pointer == 0 {
            return false;
        }
        (0..log.write_pointer).all(|i| {
            let ppn = self.geometry.ppn(log.block, i);
            self.is_valid(ppn) && self.flash.lpn(ppn) == Some(self.lpn(lbn, i))
        })
    }

    /// Copies the newest copy of `lbn`'s pages `from..N_p` into `block` at their offsets
    /// (skipping pages with no copy), making `block` hold them.
    fn gather(&mut self, lbn: u32, block: BlockId, from: u32) {
        for off in from..self.ppb {
            let lpn = self.lpn(lbn, off);
            if u64::from(lpn) >= self.geometry.logical_pages {
                break;
            }
            let Some(src) = self.newest(lpn) else { continue };
            self.move_page(src, self.geometry.ppn(block, off), Source::Cleaner);
            self.log_ppn[lpn.index()] = Ppn::NONE;
        }
    }

    /// The cleaner (or wear leveler) copies the newest copy at `src` to `dst`, which becomes
    /// the newest; returns the page's LPN. The caller updates `log_ppn`.
    fn move_page(&mut self, src: Ppn, dst: Ppn, source: Source) -> Lpn {
        // Only the LPN is read back (every page of this FTL is in region 0): the whole OOB
        // record costs a division and two more table reads per copied page.
        let lpn = self.flash.lpn(src).expect("a valid page is programmed");
        debug_assert_eq!(self.flash.oob(src).map(|o| o.region), Some(0));
        self.seq += 1;
        self.flash.copy(src, dst, Oob { lpn, seq: self.seq, region: 0 }, source);
        self.invalidate(src);
        self.mark_valid(dst);
        lpn
    }

    /// Consolidates logical block `lbn`: afterwards its data block holds the newest copy of
    /// each of its pages and no log block holds a valid page of it. `candidate` is a log slot
    /// that may hold its pages in place (switch or partial merge); it is consumed if used.
    /// Erasing the log blocks this empties is the caller's job. Returns the merge kind.
    fn merge_lbn(&mut self, lbn: u32, candidate: Option<u32>) -> RecycleKind {
        let old_data = self.data[lbn as usize];
        let (kind, new_data) = match candidate.filter(|&s| self.in_place(s, lbn)) {
            Some(slot) => {
                let log = self.log(slot);
                for off in 0..log.write_pointer {
                    let lpn = self.lpn(lbn, off);
                    self.log_ppn[lpn.index()] = Ppn::NONE;
                }
                self.gather(lbn, log.block, log.write_pointer);
                self.drop_slot(slot);
                let kind = if log.write_pointer == self.ppb {
                    RecycleKind::SwitchMerge
                } else {
                    RecycleKind::PartialMerge
                };
                (kind, log.block)
            }
            None => {
                let block = self.take_free(lbn);
                self.gather(lbn, block, 0);
                (RecycleKind::FullMerge, block)
            }
        };
        if self.block_valid[new_data.index()] == 0 {
            // Nothing of this logical block is left (trimmed): it needs no data block.
            self.release(new_data);
            self.data[lbn as usize] = BlockId::NONE;
        } else {
            self.data[lbn as usize] = new_data;
        }
        if old_data != BlockId::NONE {
            self.release(old_data);
        }
        self.recycling.merged(lbn);
        kind
    }

    /// Merges every logical block with valid pages in log `slots`, then erases the emptied
    /// logs. The log erases are charged to the full merges when there were any (a full merge's
    /// cost includes its log block's erase), else counted as discards.
    fn merge_logs(&mut self, slots: &[u32]) {
        let mut full = false;
        for &slot in slots {
            if self.logs[slot as usize].is_none() {
                continue; // consumed by a switch or partial merge of an earlier block
            }
            let log = self.log(slot);
            for i in 0..log.write_pointer {
                let ppn = self.geometry.ppn(log.block, i);
                if !self.is_valid(ppn) {
                    continue;
                }
                let lbn = self.lbn(self.flash.lpn(ppn).expect("valid page is programmed"));
                let candidate = self.candidate_for(lbn, slots);
                let start = self.mark();
                let kind = self.merge_lbn(lbn, candidate);
                full |= kind == RecycleKind::FullMerge;
                self.account(kind, start, 1);
                if self.logs[slot as usize].is_none() {
                    break; // this log became the data block
                }
            }
        }
        let start = self.mark();
        let mut discarded = 0;
        for &slot in slots {
            if let Some(log) = self.logs[slot as usize] {
                self.release(log.block);
                self.drop_slot(slot);
                discarded += 1;
            }
        }
        if full {
            self.account(RecycleKind::FullMerge, start, 0);
        } else {
            self.account(RecycleKind::Discard, start, discarded);
        }
    }

    /// The log among `slots` (or FAST's sequential log) whose first page is `lbn`'s page 0:
    /// the only one that can hold `lbn` in place.
    fn candidate_for(&self, lbn: u32, slots: &[u32]) -> Option<u32> {
        let first = self.lpn(lbn, 0);
        let starts_lbn = |s: u32| {
            self.logs[s as usize].is_some_and(|l| {
                l.write_pointer > 0 && self.flash.lpn(self.geometry.ppn(l.block, 0)) == Some(first)
            })
        };
        if self.sequential != NONE && starts_lbn(self.sequential) {
            return Some(self.sequential);
        }
        slots.iter().copied().find(|&s| starts_lbn(s))
    }

    /// The block-recycling paper's migration: copy the valid pages of log `slot` into a fresh log
    /// block, in log order, and erase the old one.
    fn migrate(&mut self, slot: u32) {
        let start = self.mark();
        let old = self.log(slot);
        let block = self.take_free(old.owner);
        let mut w = 0;
        for i in 0..old.write_pointer {
            let src = self.geometry.ppn(old.block, i);
            if !self.is_valid(src) {
                continue;
            }
            let dst = self.geometry.ppn(block, w);
            let lpn = self.move_page(src, dst, Source::Cleaner);
            self.log_ppn[lpn.index()] = dst;
            w += 1;
        }
        self.release(old.block);
        self.logs[slot as usize] = Some(Log { block, write_pointer: w, ..old });
        self.account(RecycleKind::Migration, start, 1);
    }

    // ---- set-associative (BAST, SAST) -------------------------------------------------------

    fn group_slots(&self, group: u32) -> Vec<u32> {
        let mut slots: Vec<(u64, u32)> = self
            .logs
            .iter()
            .enumerate()
            .filter_map(|(s, l)| l.filter(|l| l.owner == group).map(|l| (l.allocated, s as u32)))
            .collect();
        slots.sort_unstable();
        slots.into_iter().map(|(_, s)| s).collect()
    }

    /// Merges all of `group`'s logs, leaving it none.
    fn merge_group(&mut self, group: u32) {
        let slots = self.group_slots(group);
        self.merge_logs(&slots);
        self.group_active[group as usize] = NONE;
        self.group_logs[group as usize] = 0;
    }

    /// The least recently written group holding logs, other than `except`.
    fn lru_group(&self, except: u32) -> Option<u32> {
        self.logs
            .iter()
            .flatten()
            .filter(|l| l.owner != except)
            .min_by_key(|l| l.last_write)
            .map(|l| l.owner)
    }

    fn write_set(&mut self, lpn: Lpn, data: Option<&[u8]>, n: u32, k: u32) {
        let lbn = self.lbn(lpn);
        let group = lbn / n;
        let g = group as usize;
        loop {
            let active = self.group_active[g];
            if active != NONE && self.log(active).write_pointer < self.ppb {
                self.program_log(active, lpn, data);
                return;
            }
            if active != NONE && self.group_logs[g] >= k {
                // The group's logs are all full: recycle them.
                if n == 1 && k == 1 && !self.in_place(active, lbn) {
                    let valid = self.block_valid[self.log(active).block.index()];
                    if valid == 0 {
                        self.merge_group(group);
                        continue;
                    }
                    if self.recycling.migrate(lbn, valid) {
                        self.migrate(active);
                        continue;
                    }
                }
                self.merge_group(group);
                continue;
            }
            // The group may take another log block.
            if self.logs_in_use == self.log_blocks_max {
                match self.lru_group(group) {
                    Some(victim) => self.merge_group(victim),
                    None => {
                        self.merge_group(group);
                        continue;
                    }
                }
            }
            let slot = self.new_log(group);
            self.group_active[g] = slot;
            self.group_logs[g] += 1;
        }
    }

    // ---- fully associative (FAST) -----------------------------------------------------------

    fn write_fast(&mut self, lpn: Lpn, data: Option<&[u8]>) {
        let lbn = self.lbn(lpn);
        let off = self.offset(lpn);
        if off == 0 {
            if self.sequential != NONE {
                let slot = self.sequential;
                self.sequential = NONE;
                self.merge_logs(&[slot]);
            }
            self.sequential = self.new_log(lbn);
            self.program_log(self.sequential, lpn, data);
            return;
        }
        if self.sequential != NONE {
            let s = self.log(self.sequential);
            if s.owner == lbn && s.write_pointer == off {
                self.program_log(self.sequential, lpn, data);
                return;
            }
        }
        loop {
            if let Some(&slot) = self.random.back() {
                if self.log(slot).write_pointer < self.ppb {
                    self.program_log(slot, lpn, data);
                    return;
                }
            }
            // Random logs may use every log block but the sequential one.
            if (self.random.len() as u32) < self.log_blocks_max - 1 {
                let slot = self.new_log(NONE);
                self.random.push_back(slot);
                continue;
            }
            let victim = self.random.pop_front().expect("random logs exist");
            self.merge_logs(&[victim]);
            if self.sequential != NONE {
                if self.logs[self.sequential as usize].is_none() {
                    self.sequential = NONE; // consumed: its logical block was merged in place
                } else if self.block_valid[self.log(self.sequential).block.index()] == 0 {
                    // Its logical block was fully merged: nothing in it is worth keeping.
                    let slot = self.sequential;
                    self.sequential = NONE;
                    self.merge_logs(&[slot]);
                }
            }
        }
    }
}

/// Algorithm 1's subroutines. A unit is a logical block; its "sector mapping" is any page of
/// it in a log block; its data block is `pbn`.
impl WearHost for HybridFtl {
    fn erase_count(&self, b: BlockId) -> u32 {
        self.erase_counts[b.index()]
    }

    fn units(&self) -> u32 {
        self.logical_blocks
    }

    fn has_sector_mapping(&mut self, lbn: u32) -> bool {
        let first = u64::from(lbn) * u64::from(self.ppb);
        let end = (first + u64::from(self.ppb)).min(self.geometry.logical_pages);
        (first..end).any(|lpn| self.log_ppn[lpn as usize] != Ppn::NONE)
    }

    fn pbn(&self, lbn: u32) -> Option<BlockId> {
        let d = self.data[lbn as usize];
        (d != BlockId::NONE && self.block_valid[d.index()] > 0).then_some(d)
    }

    fn erase(&mut self, b: BlockId) {
        debug_assert_eq!(self.block_valid[b.index()], 0);
        self.flash.erase(b, Source::WearLeveling);
        self.erase_counts[b.index()] += 1;
        self.endurance.observe(self.erase_counts[b.index()]);
    }

    /// A data block whose logical block has no log mapping is copied into a free block; the
    /// old block is erased and freed. Log blocks, free blocks and data blocks being updated
    /// are left to the merges that will erase them anyway.
    fn evict(&mut self, b: BlockId) -> bool {
        let Some(ppn) = self.geometry.pages_of(b).find(|&p| self.is_valid(p)) else {
            return false;
        };
        let lbn = self.lbn(self.flash.lpn(ppn).expect("valid page is programmed"));
        if self.data[lbn as usize] != b || self.has_sector_mapping(lbn) {
            return false;
        }
        let to = self.take_free(lbn);
        self.move_block(lbn, b, to);
        self.flash.erase(b, Source::WearLeveling);
        self.return_erased(b);
        true
    }

    fn move_block(&mut self, lbn: u32, from: BlockId, to: BlockId) {
        debug_assert_eq!(self.data[lbn as usize], from);
        for off in 0..self.ppb {
            let src = self.geometry.ppn(from, off);
            if self.is_valid(src) {
                self.move_page(src, self.geometry.ppn(to, off), Source::WearLeveling);
            }
        }
        self.data[lbn as usize] = to;
    }
}

impl Ftl for HybridFtl {
    fn name(&self) -> &'static str {
        self.name
    }

    fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    fn write_page(&mut self, lpn: Lpn, _now_ns: u64, data: Option<&[u8]>) {
        self.level_wear();
        match self.association {
            Association::Set { data_blocks, log_blocks } => {
                self.write_set(lpn, data, data_blocks, log_blocks);
            }
            Association::Full => self.write_fast(lpn, data),
        }
    }

    fn read_page(&mut self, lpn: Lpn, _now_ns: u64, data: Option<&mut [u8]>) -> bool {
        match self.newest(lpn) {
            Some(ppn) => {
                self.flash.read(ppn, Source::Host, data);
                true
            }
            None => false,
        }
    }

    fn trim_page(&mut self, lpn: Lpn, _now_ns: u64) {
        if let Some(ppn) = self.newest(lpn) {
            self.invalidate(ppn);
            self.log_ppn[lpn.index()] = Ppn::NONE;
        }
    }

    fn is_mapped(&self, lpn: Lpn) -> bool {
        self.newest(lpn).is_some()
    }

    /// Region 0: a data block; region 1: a log block.
    fn locate(&self, lpn: Lpn) -> Option<(Ppn, u8)> {
        self.newest(lpn).map(|ppn| (ppn, u8::from(self.log_ppn[lpn.index()] != Ppn::NONE)))
    }

    fn flash(&self) -> &Flash {
        &self.flash
    }

    fn flash_mut(&mut self) -> &mut Flash {
        &mut self.flash
    }

    fn counters(&self) -> FtlCounters {
        self.counters
    }

    fn erase_counts(&self) -> &[u32] {
        &self.erase_counts
    }

    fn wear_leveling(&self) -> Option<WearLevelingStats> {
        self.wear.as_ref().map(|w| w.stats())
    }

    fn lifetime(&self) -> LifetimeState {
        self.endurance.state()
    }

    /// The newest copy of every LPN, and each block's state: 1 for a log block that may still be
    /// programmed (the mount re-reads it), 2 for a block that will not be programmed before its
    /// next erase (data blocks: recovery never programs one; full logs), 0 free or retired.
    fn checkpoint(&mut self, now_ns: u64) -> Result<(), crate::error::MediaError> {
        let mut state = vec![0u8; self.geometry.blocks as usize];
        for &d in self.data.iter().filter(|&&d| d != BlockId::NONE) {
            state[d.index()] = 2;
        }
        for log in self.logs.iter().flatten() {
            state[log.block.index()] = if log.write_pointer < self.ppb { 1 } else { 2 };
        }
        let media = self.flash.media();
        let blocks: Vec<BlockRecord> = self
            .geometry
            .block_ids()
            .map(|b| BlockRecord {
                erase_count: self.erase_counts[b.index()],
                region: 0,
                state: state[b.index()],
                write_pointer: media.programmed_pages(b),
                valid_pages: self.block_valid[b.index()],
            })
            .collect();
        let l2p: Vec<Ppn> = (0..self.geometry.logical_pages)
            .map(|l| self.newest(Lpn::from_u64(l)).unwrap_or(Ppn::NONE))
            .collect();
        let free_order: Vec<BlockId> = self.free.iter().flatten().copied().collect();
        let cp = Checkpoint {
            seq: self.seq,
            time_ns: now_ns,
            blocks: &blocks,
            l2p: &l2p,
            free_order: &free_order,
        };
        self.flash.media_mut().write_checkpoint(&cp)
    }

    fn table_memory_bytes(&self) -> u64 {
        let block_map = u64::from(self.logical_blocks) * 4;
        let log_maps = u64::from(self.log_blocks_max) * u64::from(self.ppb) * 4;
        block_map + log_maps + self.recycling.memory_bytes()
    }

    fn check(&self) {
        let geometry = &self.geometry;
        let mut valid = vec![0u32; self.block_valid.len()];
        let mut role = vec![0u8; self.block_valid.len()]; // 0 free, 1 data, 2 log
        for &d in self.data.iter().filter(|&&d| d != BlockId::NONE) {
            assert_eq!(role[d.index()], 0, "block {d} has two roles");
            role[d.index()] = 1;
        }
        let mut in_use = 0;
        for log in self.logs.iter().flatten() {
            assert_eq!(role[log.block.index()], 0, "log block {} has two roles", log.block);
            role[log.block.index()] = 2;
            assert_eq!(self.flash.media().programmed_pages(log.block), log.write_pointer);
            in_use += 1;
        }
        assert_eq!(in_use, self.logs_in_use);
        assert!(self.logs_in_use <= self.log_blocks_max);
        let listed: usize = self.free.iter().map(VecDeque::len).sum();
        assert_eq!(listed, self.free_count as usize, "free blocks counted");
        for (plane, list) in self.free.iter().enumerate() {
            for &b in list {
                assert_eq!(self.flash.plane_of(b) as usize, plane, "free block {b} on its plane");
            }
            assert_eq!(!list.is_empty(), self.free_planes.contains(plane as u32), "free planes");
        }
        for &b in self.free.iter().flatten() {
            assert_eq!(role[b.index()], 0, "free block {b} is in use");
            assert_eq!(self.flash.media().programmed_pages(b), 0, "free block {b} not erased");
            assert_eq!(self.block_valid[b.index()], 0);
            role[b.index()] = 3;
        }
        for b in geometry.block_ids() {
            if self.endurance.is_retired(b) {
                assert_eq!(role[b.index()], 0, "retired block {b} is in use");
                role[b.index()] = 4;
            }
        }
        assert!(role.iter().all(|&r| r != 0), "every block is data, log, free or retired");
        for lpn in (0..geometry.logical_pages).map(Lpn::from_u64) {
            let l = self.log_ppn[lpn.index()];
            if l != Ppn::NONE {
                let role_of_l = role[geometry.block_of(l).index()];
                assert_eq!(role_of_l, 2, "log copy of {lpn} outside a log block");
                assert!(self.is_valid(l));
                assert_eq!(self.flash.lpn(l), Some(lpn));
                let d = self.data[self.lbn(lpn) as usize];
                if d != BlockId::NONE {
                    let in_data = geometry.ppn(d, self.offset(lpn));
                    assert!(!self.is_valid(in_data), "two valid copies of {lpn}");
                }
            }
            if let Some(ppn) = self.newest(lpn) {
                valid[geometry.block_of(ppn).index()] += 1;
                assert_eq!(self.flash.lpn(ppn), Some(lpn), "newest copy of {lpn} holds another");
            }
        }
        assert_eq!(valid, self.block_valid, "valid counts disagree with the maps");
        let bits: u64 = self.valid_bits.iter().map(|w| u64::from(w.count_ones())).sum();
        assert_eq!(bits, valid.iter().map(|&v| u64::from(v)).sum::<u64>());
        if let Association::Set { .. } = self.association {
            for (g, &a) in self.group_active.iter().enumerate() {
                let held = self.logs.iter().flatten().filter(|l| l.owner == g as u32).count();
                assert_eq!(held as u32, self.group_logs[g]);
                assert_eq!(a == NONE, held == 0);
            }
        } else {
            let random = self.random.len() + usize::from(self.sequential != NONE);
            assert_eq!(random as u32, self.logs_in_use);
        }
    }
}

impl HybridFtl {
    /// The hybrid FTL `spec` describes, over `flash` (no wear leveler yet: the assembly
    /// attaches one, `set_wear_leveler`). `endurance_cycles` and `spare_blocks` as
    /// `set_endurance` takes them.
    #[must_use]
    pub(crate) fn from_spec(
        spec: &HybridSpec,
        flash: Flash,
        endurance_cycles: u32,
        spare_blocks: u32,
    ) -> Self {
        let g = flash.geometry();
        let ppb = g.pages_per_block;
        let logical_blocks = g.logical_pages.div_ceil(u64::from(ppb)) as u32;
        let policy = spec.recycling.build(cost_model(flash.timing(), ppb), logical_blocks);
        let mut ftl = Self::new(flash, spec.association, spec.log_blocks, policy);
        ftl.set_endurance(endurance_cycles, spare_blocks);
        ftl
    }

    /// Logical blocks (the units a wear leveler moves).
    #[must_use]
    pub fn logical_blocks(&self) -> u32 {
        self.logical_blocks
    }
}

/// The per-available-page cost model of a flash timing (C_E = erase, C_cp = page copy).
#[must_use]
pub fn cost_model(timing: &crate::flash::Timing, pages_per_block: u32) -> CostModel {
    CostModel::new(timing.erase_block_ns as f64, timing.copy_cost_ns() as f64, pages_per_block)
}

#[cfg(test)]
mod tests;
