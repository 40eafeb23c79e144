//! Page-mapped log-structured FTL (DAC paper, docs/ALGORITHMS.md §2): the translation table (LPN →
//! PPN, with the page's region and region entry time), the region table (each region's active
//! block), the lookup table (`BlockTable`), a free-block list and the cleaner.
//!
//! Write path: if free blocks are below `gc_free_blocks_min`, clean until they are not; ask the
//! placement for the page's region; program at that region's active block (opening a free one
//! when full); map the LPN; invalidate the old copy. Cleaning: ask the victim policy for a
//! closed block, copy each valid page (LPN from the page's OOB, valid iff the translation table
//! still points at it) to the region the placement picks, erase the victim, free it.
//!
//! A page's region is not stored per page: every block holds pages of one region, so the
//! region is the block's. Entry times are kept only for placements that use them.
//!
//! A placement whose top region is RAM (DEB's EBR, DAC's RAM region; LFSS thesis) has those pages
//! kept in a `RamRegion`: the translation table maps them to pseudo page numbers past the
//! flash, updates are in place at RAM cost, and the region writes its oldest pages back to the
//! flash regions the placement picks when it fills (`ram_write_back`). With
//! `set_wear_aware_allocation`, a region opening a block takes a less worn free block when it
//! is among the hotter half of the regions and a more worn one otherwise (DEB's wear-aware
//! movement of erase blocks between regions).

use std::collections::VecDeque;

use super::block_table::{BlockState, BlockTable};
use super::ram_region::{RamRegion, RamRegionInfo, RamWriteBack};
use super::{Ftl, FtlCounters, FtlRecovery};
use crate::allocation::{AllocationSpec, Allocator, PlaneSet, Room};
use crate::error::RecoveryError;
use crate::flash::Geometry;
use crate::flash::{
    BlockId, BlockRecord, Checkpoint, Flash, Lpn, Media, NvramEntry, Oob, Ppn, Source,
};
use crate::ftl::policy::{Collected, PageState, Placement, Selection, VictimPolicy, WriteClock};
use crate::wear::{Endurance, LifetimeState, WearHost, WearLeveler, WearLevelingStats};

pub struct PageFtl {
    geometry: Geometry,
    pages_per_block: u32,
    flash: Flash,
    /// LPN → PPN (`Ppn::NONE` = unmapped).
    l2p: Vec<Ppn>,
    /// LPN → time it entered its region (empty unless the placement needs it).
    entered_ns: Vec<u64>,
    /// The placement keeps time in host writes (`Placement::needs_write_clock`): the FTL counts
    /// them, keeps `last_write` and `opened_at`, and reports fills and collections.
    write_clock: bool,
    /// `Placement::wants_prefetch`, asked once.
    placement_prefetch: bool,
    clock: WriteClock,
    /// LPN → the write clock at its last host write (empty unless `write_clock`).
    last_write: Vec<u32>,
    /// Block → the write clock when it was opened (empty unless `write_clock`).
    opened_at: Vec<u64>,
    /// One bit per physical page: set iff the translation table points at it. Redundant with
    /// `l2p`, but the cleaner can find a victim's valid pages from these few cache lines
    /// instead of one random translation-table load per page.
    valid_bits: Vec<u64>,
    words_per_block: u32,
    blocks: BlockTable,
    /// Active (open) block of each region on each plane (index `region × planes + plane`),
    /// `BlockId::NONE` if none.
    active: Vec<BlockId>,
    /// Flash regions (logs).
    flash_regions: u32,
    /// The placement's regions (flash plus a RAM region, if any), fixed at construction: each
    /// host write checks its pick against this rather than asking the placement again.
    regions: u32,
    /// Planes of the device: every region keeps an open block on each (`allocation`).
    planes: u32,
    /// Per region: planes whose active block has room (not `BlockId::NONE`).
    open_planes: Vec<PlaneSet>,
    /// Planes with a free block.
    free_planes: PlaneSet,
    /// Free blocks of each plane, oldest first.
    free: Vec<VecDeque<BlockId>>,
    /// Free blocks over every plane.
    free_count: u32,
    /// Picks the plane of every page written (`ftl.allocation`).
    alloc: Box<dyn Allocator>,
    /// Background cleaning runs while fewer free blocks remain (0: foreground only).
    gc_background_free_blocks: u32,
    gc_free_blocks_min: u32,
    victim: Box<dyn VictimPolicy>,
    placement: Box<dyn Placement>,
    /// The placement picks victims and hears of closed blocks (`Placement::selects_victims`).
    placement_victims: bool,
    /// Simulated time of the write that called the wear leveler (its host calls need it).
    wear_now_ns: u64,
    /// Blocks the cleaner erased while the leveler was out working (`level_wear`), to tell it
    /// when it is back.
    erased_while_leveling: Vec<BlockId>,
    leveling: bool,
    /// Per block: the program sequence number when it was last closed (for the wear
    /// leveler's recency test; empty without a leveler).
    closed_seq: Vec<u64>,
    seq: u64,
    counters: FtlCounters,
    /// The wear leveler (`wear.kind`), told of every erase; `None`: off.
    wear: Option<Box<dyn WearLeveler>>,
    endurance: Endurance,
    /// The RAM region, when the placement's top region is RAM.
    ram: Option<RamRegion>,
    /// Region index of the RAM region (= the number of flash regions).
    ram_index: u8,
    ram_page_ns: u64,
    /// Every RAM-region write is persisted through the media's NVRAM (a served drive's image:
    /// battery-backed RAM survives a crash, so the process crash must not lose it either).
    nvram: bool,
    /// Open blocks by wear: hotter regions take the least worn free block of a window.
    wear_aware: bool,
    /// The media's NVRAM entries, read by `recover` and restored by `restore_nvram`.
    nvram_entries: Vec<NvramEntry>,
    /// The victim's LPNs (`Media::block_lpns`), copied once per victim (reused).
    victim_lpns: Vec<Lpn>,
}

/// Free blocks a wear-aware allocation looks at (the free queue's oldest ones): bounded so an
/// allocation costs O(1) on a fresh device whose free queue holds every block.
const WEAR_AWARE_WINDOW: usize = 64;

impl PageFtl {
    #[must_use]
    pub(crate) fn new(
        flash: Flash,
        victim: Box<dyn VictimPolicy>,
        placement: Box<dyn Placement>,
        gc_free_blocks_min: u32,
    ) -> Self {
        let geometry = *flash.geometry();
        let regions = placement.regions();
        assert!((1..=255).contains(&regions));
        // A RAM top region holds no blocks: only the flash regions have active blocks.
        let flash_regions = regions - u32::from(placement.ram_region());
        assert!(flash_regions >= 1, "a RAM region needs a flash region to write back to");
        assert!(gc_free_blocks_min >= 2, "the cleaner needs a block to copy into");
        assert!(geometry.blocks > gc_free_blocks_min + regions * flash.planes());
        let logical = geometry.logical_pages as usize;
        let entered_ns =
            if placement.needs_residence_time() { vec![0; logical] } else { Vec::new() };
        let write_clock = placement.needs_write_clock() || victim.needs_write_clock();
        let last_write = if placement.needs_last_write() { vec![0; logical] } else { Vec::new() };
        let opened_at = if write_clock { vec![0; geometry.blocks as usize] } else { Vec::new() };
        let words_per_block = geometry.pages_per_block.div_ceil(64);
        let hw = *flash.engine().hardware();
        let planes = flash.planes();
        let mut free = vec![VecDeque::new(); planes as usize];
        for b in geometry.block_ids() {
            free[flash.plane_of(b) as usize].push_back(b);
        }
        Self {
            geometry,
            pages_per_block: geometry.pages_per_block,
            flash,
            l2p: vec![Ppn::NONE; logical],
            entered_ns,
            write_clock,
            placement_prefetch: placement.wants_prefetch(),
            clock: WriteClock::default(),
            last_write,
            opened_at,
            valid_bits: vec![0; (geometry.blocks * words_per_block) as usize],
            words_per_block,
            blocks: {
                let mut t = BlockTable::new(geometry.blocks, geometry.pages_per_block);
                if !victim.reads_time() {
                    t = t.without_modification_times();
                }
                if victim.needs_write_clock() {
                    t.closed_at_write = vec![0; geometry.blocks as usize];
                }
                t
            },
            active: vec![BlockId::NONE; (flash_regions * planes) as usize],
            flash_regions,
            regions,
            planes,
            open_planes: vec![PlaneSet::new(planes); flash_regions as usize],
            free_planes: (0..planes).fold(PlaneSet::new(planes), |mut set, p| {
                set.insert(p);
                set
            }),
            free,
            free_count: geometry.blocks,
            alloc: crate::allocation::dynamic::DynamicSpec.build(&hw),
            gc_background_free_blocks: 0,
            gc_free_blocks_min,
            victim,
            placement_victims: placement.selects_victims(),
            placement,
            wear_now_ns: 0,
            erased_while_leveling: Vec::new(),
            leveling: false,
            closed_seq: Vec::new(),
            seq: 0,
            counters: FtlCounters::default(),
            wear: None,
            endurance: Endurance::new(0, geometry.blocks, 0),
            ram: None,
            ram_index: flash_regions as u8,
            ram_page_ns: 0,
            nvram: false,
            wear_aware: false,
            nvram_entries: Vec::new(),
            victim_lpns: Vec::new(),
        }
    }

    /// Gives the placement's RAM top region its size (`capacity_pages`), write-back threshold
    /// (fraction of it) and per-page access time.
    pub(crate) fn set_ram_region(&mut self, capacity_pages: u32, threshold: f64, ram_page_ns: u64) {
        assert!(self.placement.ram_region(), "the placement has no RAM region");
        // RAM slots are numbered past the flash's pages.
        let base = Ppn::from_u64(self.geometry.physical_pages());
        self.ram =
            Some(RamRegion::new(capacity_pages, threshold, base, self.geometry.page_size_bytes));
        self.ram_page_ns = ram_page_ns;
        // A media with NVRAM for the whole region persists it (a served image); the
        // simulation's media has none and pays nothing.
        self.nvram = self.flash.media().nvram_pages() >= capacity_pages;
    }

    /// Writes a RAM slot through to the media's NVRAM (see `nvram`).
    #[inline]
    fn persist_ram(&mut self, ppn: Ppn, lpn: Lpn, data: Option<&[u8]>) {
        if self.nvram {
            let slot = self.ram.as_ref().expect("a RAM region").slot_of(ppn);
            self.flash.media_mut().nvram_write(slot, lpn, self.seq, data);
        }
    }

    /// Wear-aware block allocation (DEB): see the module doc.
    pub(crate) fn set_wear_aware_allocation(&mut self, on: bool) {
        self.wear_aware = on;
    }

    /// Whether `ppn` is a RAM region slot.
    #[inline]
    fn in_ram(&self, ppn: Ppn) -> bool {
        self.ram.as_ref().is_some_and(|r| r.holds(ppn))
    }

    /// Host write of `lpn` into the RAM region: in place when it is there already (DEB rule 6),
    /// else into a new slot, after writing the oldest pages back if the region is at its
    /// threshold (rule 5); the page's flash copy, if any, becomes garbage.
    fn write_ram(&mut self, lpn: Lpn, old: Option<PageState>, now_ns: u64, data: Option<&[u8]>) {
        let ns = self.ram_page_ns;
        let old_ppn = self.l2p[lpn.index()];
        let ram = self.ram.as_mut().expect("the placement's RAM region is configured");
        if old_ppn != Ppn::NONE && ram.holds(old_ppn) {
            ram.update(old_ppn, data, ns);
            self.flash.charge_ram(ns);
            self.persist_ram(old_ppn, lpn, data);
            return;
        }
        if ram.over_threshold_after_insert() {
            let n = ram.write_back_count();
            ram.counters.write_backs += 1;
            self.write_back_oldest(n, RamWriteBack::Threshold, now_ns);
        }
        // Cleaning during the write-back may have moved the page's flash copy.
        let old_ppn = self.l2p[lpn.index()];
        let ram = self.ram.as_mut().expect("checked");
        let ppn = ram.insert(lpn, data, ns);
        self.flash.charge_ram(ns);
        self.persist_ram(ppn, lpn, data);
        self.l2p[lpn.index()] = ppn;
        self.set_region_entry(lpn, old, self.ram_index, now_ns);
        if old_ppn != Ppn::NONE {
            self.invalidate(old_ppn, now_ns);
        }
    }

    /// Writes the `n` oldest RAM pages back to the flash regions the placement picks.
    fn write_back_oldest(&mut self, n: u32, reason: RamWriteBack, now_ns: u64) {
        for _ in 0..n {
            let Some((lpn, ppn)) = self.ram.as_ref().and_then(RamRegion::oldest) else { break };
            let state = PageState {
                region: self.ram_index,
                entered_ns: self.entered_ns.get(lpn.index()).copied().unwrap_or(0),
                last_write: self.last_write.get(lpn.index()).copied().unwrap_or(0),
            };
            let region = self.placement.ram_write_back(lpn, state, now_ns);
            assert!(region < self.ram_index, "a RAM page is written back to a flash region");
            if self.free_count < self.gc_free_blocks_min {
                self.clean(now_ns);
            }
            let target = self.next_page(region, lpn, None, now_ns);
            self.seq += 1;
            let oob = Oob { lpn, seq: self.seq, region };
            let ram = self.ram.as_mut().expect("checked");
            self.flash.program(target, oob, Source::Host, ram.payload(ppn));
            ram.remove(ppn);
            let c = &mut ram.counters;
            match reason {
                RamWriteBack::Threshold => c.write_back_pages += 1,
                RamWriteBack::Shutdown => c.shutdown_write_back_pages += 1,
                RamWriteBack::EndOfRun => c.final_write_back_pages += 1,
            }
            self.l2p[lpn.index()] = target;
            self.mark_valid(target);
            self.set_region_entry(lpn, Some(state), region, now_ns);
        }
    }

    /// A free block for a region to open: the oldest free one, or with wear-aware allocation
    /// the least worn (hotter half of the regions) or most worn (colder half) among the
    /// oldest `WEAR_AWARE_WINDOW`.
    #[inline]
    fn take_free(&mut self, region: u8, plane: u32) -> BlockId {
        self.free_count -= 1;
        let free = &mut self.free[plane as usize];
        if free.len() == 1 {
            self.free_planes.remove(plane);
        }
        if !self.wear_aware {
            return free.pop_front().expect("the plane the allocator picked has a free block");
        }
        let hot = 2 * u32::from(region) >= self.flash_regions;
        let counts = &self.blocks.erase_count;
        let window = free.iter().take(WEAR_AWARE_WINDOW).enumerate();
        let pick = if hot {
            window.min_by_key(|&(_, &b)| counts[b.index()]).map(|(i, _)| i)
        } else {
            // The first of the most worn: `max_by_key` would take the last.
            window.min_by_key(|&(_, &b)| std::cmp::Reverse(counts[b.index()])).map(|(i, _)| i)
        };
        let i = pick.expect("the plane the allocator picked has a free block");
        free.remove(i).expect("index in range")
    }

    /// Attaches a wear leveler (`WearSpec::build`; `None` turns leveling off). Its units
    /// are physical blocks (see `crate::wear` for why).
    pub(crate) fn set_wear_leveler(&mut self, leveler: Option<Box<dyn WearLeveler>>) {
        self.wear = leveler;
        let n = if self.wear.is_some() { self.geometry.blocks as usize } else { 0 };
        self.closed_seq = vec![0; n];
    }

    /// Rated program/erase cycles per block (0 = unlimited). The FTL keeps enough good blocks
    /// for its logical pages plus the reserve `Config::resolve` requires (free-block minimum,
    /// one open block per region, one more); blocks beyond those may be retired. Free blocks
    /// already at the limit (a recovered device) are retired now.
    pub(crate) fn set_endurance_cycles(&mut self, cycles: u32) {
        let data_blocks = self.geometry.logical_pages.div_ceil(u64::from(self.pages_per_block));
        let min_good = data_blocks as u32 + self.gc_free_blocks_min + self.active.len() as u32 + 1;
        self.endurance =
            Endurance::new(cycles, self.geometry.blocks, min_good.min(self.geometry.blocks));
        let mut free = std::mem::take(&mut self.free);
        for list in &mut free {
            list.retain(|&b| {
                let worn = self.endurance.after_erase(b, self.blocks.erase_count[b.index()], true);
                if worn {
                    self.blocks.retire(b);
                    self.free_count -= 1;
                }
                !worn
            });
        }
        self.free = free;
        self.rebuild_plane_sets();
    }

    /// Counts the erase of `block` (already erased on flash) and returns it to the free pool,
    /// unless it has worn out and is retired.
    fn return_erased(&mut self, block: BlockId) {
        self.blocks.erased(block);
        // Retiring is safe while the free blocks left can take one cleaning step's copies
        // (gc_free_blocks_min − 1 ≥ the blocks a step may open, `Config::resolve`).
        let room = self.free_count + 1 >= self.gc_free_blocks_min;
        if self.endurance.after_erase(block, self.blocks.erase_count[block.index()], room) {
            self.blocks.retire(block);
        } else {
            let plane = self.flash.plane_of(block);
            self.free[plane as usize].push_back(block);
            self.free_planes.insert(plane);
            self.free_count += 1;
        }
    }

    /// Lets a static wear leveler force static data out (between host writes, with the free
    /// reserve whole).
    fn level_wear(&mut self, now_ns: u64) {
        if self.wear.as_ref().is_some_and(|w| w.wants_work()) {
            let mut w = self.wear.take().expect("checked");
            self.wear_now_ns = now_ns;
            self.leveling = true;
            w.work(self);
            self.leveling = false;
            for b in self.erased_while_leveling.drain(..) {
                w.erased(b);
            }
            self.wear = Some(w);
        }
    }

    /// Rebuilds the RAM tables from what the flash holds (docs/ALGORITHMS.md §2.5: every table is a
    /// copy of on-flash state; a restart loses no programmed data). For each programmed page the
    /// OOB names its LPN and sequence number; the copy with the largest sequence number is the
    /// current one. Erase counts and write pointers come from the media; a partly programmed block
    /// is its region's active block.
    ///
    /// What the flash holds is checked, never trusted blindly: an implausible erase count or a
    /// block of a region the placement does not have is `RecoveryError::Damaged` (an image of
    /// another layout is refused before this by the store's identity check). More than one
    /// partly programmed block in a region (a damaged last record of a full block; a block of a
    /// crashed erase) cannot all stay open: the one written last stays active and the others
    /// are sealed — their unprogrammed pages are programmed as garbage so they become ordinary
    /// closed blocks the cleaner reclaims (`FtlRecovery::sealed_blocks`).
    ///
    /// Limits, documented: a TRIM leaves no trace on flash here, so a trimmed page whose old
    /// copy was not yet erased comes back after recovery (NBD allows any content after a
    /// trim); last-modification times restart at `now_ns` (cleaning ages restart); DAC region
    /// entry times restart at `now_ns` too. RAM-region pages persisted in NVRAM are restored
    /// afterwards by `restore_nvram` (once the RAM region is configured).
    pub(crate) fn recover(
        flash: Flash,
        victim: Box<dyn VictimPolicy>,
        placement: Box<dyn Placement>,
        gc_free_blocks_min: u32,
        now_ns: u64,
    ) -> Result<(Self, FtlRecovery), RecoveryError> {
        let mut ftl = Self::new(flash, victim, placement, gc_free_blocks_min);
        let mut report = FtlRecovery::default();
        let block_seq = ftl.scan_flash(now_ns)?;
        ftl.reopen_partial_blocks(&block_seq, now_ns, &mut report);
        ftl.rebuild_plane_sets();
        if !ftl.entered_ns.is_empty() {
            ftl.entered_ns.fill(now_ns);
        }
        ftl.finish_interrupted_cleaning(now_ns, &mut report);
        ftl.recount_mapped();
        if ftl.free.is_empty() {
            return Err(RecoveryError::NoSpace {
                what: "no erased block on the flash and no interrupted cleaning step to finish"
                    .into(),
            });
        }
        Ok((ftl, report))
    }

    /// Recovery, first pass: every programmed page's OOB, the newest copy of each LPN mapped,
    /// erase counts restored, free blocks listed, programmed blocks left open. Returns the
    /// largest sequence number of each block (which partly programmed block of a region was
    /// written last).
    fn scan_flash(&mut self, now_ns: u64) -> Result<Vec<u64>, RecoveryError> {
        let geometry = self.geometry;
        let flash_regions = self.flash_regions as usize;
        let mut newest_seq = vec![0u64; self.l2p.len()];
        let mut block_seq = vec![0u64; self.geometry.blocks as usize];
        self.free.iter_mut().for_each(VecDeque::clear);
        self.free_count = 0;
        for block in geometry.block_ids() {
            let b = block.index();
            let erases = self.flash.erase_count(block);
            if erases > crate::flash::MAX_PLAUSIBLE_ERASE_COUNT {
                return Err(RecoveryError::Damaged {
                    what: format!(
                        "block {block} records {erases} erases (more than {}: not wear but \
                         damage)",
                        crate::flash::MAX_PLAUSIBLE_ERASE_COUNT
                    ),
                });
            }
            self.blocks.restore_erase_count(block, erases);
            let programmed = self.flash.media().programmed_pages(block);
            if programmed == 0 {
                self.free[self.flash.plane_of(block) as usize].push_back(block);
                self.free_count += 1;
                continue;
            }
            let oobs = (0..programmed).map(|o| self.flash.oob(geometry.ppn(block, o)));
            let holds_data =
                oobs.clone().flatten().any(|o| u64::from(o.lpn) < self.geometry.logical_pages);
            let mut region = self.flash.oob(geometry.ppn(block, 0)).map_or(0, |o| o.region);
            if usize::from(region) >= flash_regions {
                if holds_data {
                    return Err(RecoveryError::Damaged {
                        what: format!(
                            "block {block} holds pages of flash region {region}, but the \
                             placement has {flash_regions} flash region(s)"
                        ),
                    });
                }
                // Only garbage: its region does not matter, it is cleaned like any other.
                region = 0;
            }
            self.blocks.open(block, region, now_ns);
            for offset in 0..programmed {
                let ppn = geometry.ppn(block, offset);
                let Some(oob) = self.flash.oob(ppn) else {
                    return Err(RecoveryError::Damaged {
                        what: format!("page {ppn} below block {block}'s write pointer is erased"),
                    });
                };
                self.blocks.program(block, now_ns);
                self.seq = self.seq.max(oob.seq);
                block_seq[b] = block_seq[b].max(oob.seq);
                if u64::from(oob.lpn) >= self.geometry.logical_pages {
                    // A torn page (`GARBAGE_LPN`): it holds no data we can serve; it stays
                    // programmed and invalid until erased.
                    self.mark_valid(ppn);
                    self.invalidate(ppn, now_ns);
                    continue;
                }
                let lpn = oob.lpn.index();
                let old = self.l2p[lpn];
                if old == Ppn::NONE || oob.seq > newest_seq[lpn] {
                    newest_seq[lpn] = oob.seq;
                    self.l2p[lpn] = ppn;
                    self.mark_valid(ppn);
                    if old != Ppn::NONE {
                        self.invalidate(old, now_ns);
                    }
                } else {
                    // An older copy: programmed, but invalid from the start.
                    self.mark_valid(ppn);
                    self.invalidate(ppn, now_ns);
                }
            }
            debug_assert_eq!(self.blocks.write_pointer[b], programmed);
        }
        Ok(block_seq)
    }

    /// Recovery, second pass: the partly programmed block of each region written last stays
    /// active; any other is sealed (see `recover`). Full blocks are closed only now, so the
    /// victim indexes see final valid counts.
    fn reopen_partial_blocks(&mut self, block_seq: &[u64], now_ns: u64, report: &mut FtlRecovery) {
        // One open block per region on each plane: index region × planes + plane.
        let mut open_by_slot: Vec<Vec<BlockId>> = vec![Vec::new(); self.active.len()];
        for block in self.geometry.block_ids() {
            if self.blocks.state[block.index()] == BlockState::Open && !self.blocks.is_full(block) {
                let r = self.blocks.region[block.index()] as usize;
                let plane = self.flash.plane_of(block) as usize;
                open_by_slot[r * self.planes as usize + plane].push(block);
            }
        }
        for (slot, blocks) in open_by_slot.iter().enumerate() {
            let r = slot / self.planes as usize;
            let keep = blocks.iter().copied().max_by_key(|&b| (block_seq[b.index()], b));
            for &block in blocks {
                if Some(block) == keep {
                    self.active[slot] = block;
                    continue;
                }
                let region = r as u8;
                while !self.blocks.is_full(block) {
                    let ppn = self.geometry.ppn(block, self.blocks.program(block, now_ns));
                    self.seq += 1;
                    let oob = Oob { lpn: crate::flash::GARBAGE_LPN, seq: self.seq, region };
                    self.flash.program(ppn, oob, Source::Cleaner, None);
                    self.mark_valid(ppn);
                    self.invalidate(ppn, now_ns);
                    report.sealing_pages += 1;
                }
                report.sealed_blocks += 1;
            }
        }
        for block in self.geometry.block_ids() {
            if self.blocks.state[block.index()] == BlockState::Open && self.blocks.is_full(block) {
                self.blocks.close(block);
            }
        }
    }

    /// Recovery, last pass: finishes a cleaning step a crash interrupted.
    fn finish_interrupted_cleaning(&mut self, now_ns: u64, report: &mut FtlRecovery) {
        // A crash inside a cleaning step can leave every block used: the step had opened the
        // blocks its copies needed and would have freed its victim at the end. Finish it: the
        // victim is the block holding the previous copy of the page programmed last (that
        // program was one of the step's copies). Its remaining valid pages fit in the room the
        // step opened. Without a free block and without such a victim the image was not
        // written by this FTL. Between requests the FTL keeps at least `gc_free_blocks_min - 1`
        // blocks free (a write may open one after the cleaner restored the minimum), so fewer
        // means a cleaning step was under way.
        //
        // The NVRAM's entries are read now (`restore_nvram` takes them from here). While a
        // cleaning step is being repaired, a flash copy that an entry supersedes is no page's
        // current copy: it must neither keep a block from being erased nor be copied by the
        // step's completion — the copy's new sequence number would beat the entry, and the
        // stale flash copy would be served after the restore and after any later restart
        // (tests/page_recovery.rs `crash_at_every_operation`,
        // `cleaning_cut_with_a_page_superseded_in_nvram`).
        self.nvram_entries = self.flash.media_mut().take_nvram_entries();
        if self.free_count + 1 < self.gc_free_blocks_min {
            self.unmap_superseded_by_nvram(now_ns);
        }
        // A step cut after its last copy, or during its erase (a cut erase leaves the victim's
        // surviving records below its write pointer as garbage: the block may even be partly
        // programmed and have become its region's active block), leaves the victim with no
        // valid page, and the page programmed last no longer points at a victim with pages to
        // copy: erase such blocks first — the step's own next operation — before looking for a
        // victim to finish (they hold no page a read can reach).
        // (tests/page_recovery.rs: `crash_at_every_operation`, `cleaning_cut_before_its_erase`.)
        for block in self.geometry.block_ids() {
            if self.free_count + 1 >= self.gc_free_blocks_min {
                break;
            }
            let b = block.index();
            if self.blocks.valid[b] > 0 {
                continue;
            }
            match self.blocks.state[b] {
                BlockState::Closed => self.blocks.take_victim(block),
                BlockState::Open => {
                    let r = usize::from(self.blocks.region[b]);
                    let slot = r * self.planes as usize + self.flash.plane_of(block) as usize;
                    if self.active[slot] == block {
                        self.active[slot] = BlockId::NONE;
                        self.open_planes[r].remove(self.flash.plane_of(block));
                    }
                }
                BlockState::Free | BlockState::Retired => continue,
            }
            self.flash.erase(block, Source::Cleaner);
            self.return_erased(block);
            report.erased_blocks += 1;
        }
        if self.free_count + 1 < self.gc_free_blocks_min {
            // Pages a trim had left behind are current again after a restart (a trim leaves no
            // record) and may need more room than the step opened: then the step cannot be
            // finished here — refused below rather than running out of blocks mid-copy
            // (tests/page_recovery.rs `crash_at_every_operation`, `Sweep::trim_cuts`).
            let victim = self.interrupted_victim();
            if let Some(v) = victim {
                // Before the fit check: it asks the placement where each copy goes, which may
                // depend on what the collection tells it.
                self.report_collecting(v);
            }
            let victim = victim.filter(|&v| self.completion_fits(v, now_ns));
            if let Some(victim) = victim {
                self.empty_block(victim, Source::Cleaner, now_ns);
                self.flash.erase(victim, Source::Cleaner);
                self.return_erased(victim);
                self.counters.gc_victims += 1;
                report.cleanings_completed += 1;
            }
        }
    }

    /// The victim of a cleaning step a crash interrupted, if the last page programmed was a
    /// cleaner copy: the closed block, with valid pages left, that holds the previous copy of
    /// that page's LPN. (After recovery every copy's sequence number is on flash: O(pages).)
    fn interrupted_victim(&self) -> Option<BlockId> {
        let logical = self.geometry.logical_pages;
        let flash = &self.flash;
        let last = self
            .geometry
            .ppns()
            .filter_map(|p| flash.oob(p).filter(|o| u64::from(o.lpn) < logical))
            .max_by_key(|o| o.seq)?;
        let previous = self
            .geometry
            .ppns()
            .filter(|&p| flash.oob(p).is_some_and(|o| o.lpn == last.lpn && o.seq < last.seq))
            .max_by_key(|&p| flash.oob(p).map_or(0, |o| o.seq))?;
        let block = self.geometry.block_of(previous);
        let b = block.index();
        (self.blocks.state[b] == BlockState::Closed && self.blocks.valid[b] > 0).then_some(block)
    }

    /// Whether the valid pages of `victim` fit where the placement sends them: the pages left
    /// in each region's active block, then whole free blocks. (Asked through
    /// `cleaner_copy_peek`, which records nothing and answers as the copies' `cleaner_copy`
    /// will.)
    fn completion_fits(&mut self, victim: BlockId, now_ns: u64) -> bool {
        let ppb = self.pages_per_block;
        let mut need = vec![0u32; self.flash_regions as usize];
        for ppn in self.geometry.pages_of(victim) {
            let Some(lpn) = self.flash.lpn(ppn) else { continue };
            if u64::from(lpn) < self.geometry.logical_pages && self.l2p[lpn.index()] == ppn {
                let state = self.page_state(lpn, ppn);
                let region = self.placement.cleaner_copy_peek(lpn, state, now_ns);
                need[usize::from(region)] += 1;
            }
        }
        // Copies fill the regions' open blocks on every plane before a new block is opened.
        let planes = self.planes as usize;
        let blocks: u32 = need
            .iter()
            .enumerate()
            .map(|(r, &n)| {
                let left: u32 = self.active[r * planes..(r + 1) * planes]
                    .iter()
                    .map(|&a| {
                        if a == BlockId::NONE {
                            0
                        } else {
                            ppb - self.blocks.write_pointer[a.index()]
                        }
                    })
                    .sum();
                n.saturating_sub(left).div_ceil(ppb)
            })
            .sum();
        blocks <= self.free_count
    }

    /// Unmaps the LPNs whose flash copy an NVRAM entry supersedes by `restore_nvram`'s rule
    /// (the LPN's newest entry has a sequence number ≥ the copy's): that entry is the page's
    /// current copy, restored later. (With `serve.ram_region_battery = "failed"` such an LPN
    /// then reads as never written rather than as its older flash copy: both are the loss the
    /// failed battery models.)
    fn unmap_superseded_by_nvram(&mut self, now_ns: u64) {
        let mut newest: Vec<(Lpn, u64, u64)> = self
            .nvram_entries
            .iter()
            .filter(|e| u64::from(e.lpn) < self.geometry.logical_pages)
            .map(|e| (e.lpn, e.order, e.seq))
            .collect();
        newest.sort_unstable_by_key(|&(lpn, order, _)| (lpn, std::cmp::Reverse(order)));
        newest.dedup_by_key(|e| e.0);
        for (lpn, _, seq) in newest {
            let ppn = self.l2p[lpn.index()];
            if ppn != Ppn::NONE && self.flash.oob(ppn).is_some_and(|o| seq >= o.seq) {
                self.l2p[lpn.index()] = Ppn::NONE;
                self.invalidate(ppn, now_ns);
            }
        }
    }

    /// Restores the RAM region from the media's NVRAM after `recover` (and `set_ram_region`):
    /// an NVRAM entry newer than every flash copy of its LPN (sequence number ≥ the newest
    /// flash copy's; of two entries of one LPN the later written) is the page's current copy.
    /// Entries go back in write order, so the region's update order survives, each into the
    /// slot it was found in (nothing is rewritten). A damaged entry keeps its LPN mapped to
    /// RAM and reading as an error (never the older flash copy). Without a RAM region in the
    /// configuration the winning entries are written to flash through the normal write path.
    /// With `battery_failed` every entry is dropped (`nvram_pages_lost`): the older flash copy,
    /// if any, is what the host reads — data loss modelled on request.
    pub(crate) fn restore_nvram(
        &mut self,
        battery_failed: bool,
        now_ns: u64,
        report: &mut FtlRecovery,
    ) -> Result<(), RecoveryError> {
        // `recover` read them (a media hands them out once).
        let mut entries = std::mem::take(&mut self.nvram_entries);
        entries.append(&mut self.flash.media_mut().take_nvram_entries());
        if entries.is_empty() {
            return Ok(());
        }
        // Later programs must be newer than every entry.
        self.seq = self.seq.max(entries.iter().map(|e| e.seq).max().unwrap_or(0));
        // Newest entry per LPN, in write order.
        entries.retain(|e| u64::from(e.lpn) < self.geometry.logical_pages);
        entries.sort_unstable_by_key(|e| (e.lpn, std::cmp::Reverse(e.order)));
        entries.dedup_by_key(|e| e.lpn);
        entries.retain(|e| {
            let ppn = self.l2p[e.lpn.index()];
            ppn == Ppn::NONE || self.flash.oob(ppn).is_none_or(|o| e.seq >= o.seq)
        });
        // Each entry goes back into the RAM slot of the NVRAM slot it was found in, so its cell
        // stays that slot's newest and nothing is written: a crash during this restore finds
        // every entry again. (Slots assigned afresh, each entry written through again, made the
        // slot written the newest version of an entry of another LPN not yet restored — lost
        // by a crash here; tests/page_recovery.rs `crash_at_every_operation`.) Entries of
        // slots past this configuration's region (an NVRAM larger than it) come after those,
        // into free slots, written through.
        let capacity = self.ram.as_ref().map_or(0, RamRegion::capacity_pages);
        entries.sort_unstable_by_key(|e| (e.slot >= capacity, e.order));
        if battery_failed {
            report.nvram_pages_lost += entries.len() as u32;
            return Ok(());
        }
        for e in entries {
            report.nvram_pages_restored += 1;
            if self.ram.is_none() {
                if e.damaged {
                    return Err(RecoveryError::Damaged {
                        what: format!(
                            "LPN {}'s newest copy is a damaged NVRAM page and this configuration \
                             has no RAM region to keep it as lost",
                            e.lpn
                        ),
                    });
                }
                self.write_page(e.lpn, now_ns, e.data.as_deref());
                continue;
            }
            let lpn = e.lpn;
            let in_place = e.slot < capacity;
            let ram = self.ram.as_mut().expect("checked");
            if !in_place && ram.over_threshold_after_insert() {
                let n = ram.write_back_count();
                ram.counters.write_backs += 1;
                self.write_back_oldest(n, RamWriteBack::Threshold, now_ns);
            }
            let old_ppn = self.l2p[lpn.index()];
            let old = (old_ppn != Ppn::NONE).then(|| self.page_state(lpn, old_ppn));
            let ram = self.ram.as_mut().expect("checked");
            let ppn = if in_place {
                // One entry per slot, into a region empty until now.
                ram.insert_at(e.slot, lpn, e.data.as_deref()).expect("slot free")
            } else {
                let ppn = ram.insert(lpn, e.data.as_deref(), 0);
                // Restoring is not a host write.
                ram.counters.host_write_pages -= 1;
                ppn
            };
            self.l2p[lpn.index()] = ppn;
            self.set_region_entry(lpn, old, self.ram_index, now_ns);
            if old_ppn != Ppn::NONE {
                self.invalidate(old_ppn, now_ns);
            }
            let seq = e.seq;
            if e.damaged {
                let ram = self.ram.as_mut().expect("checked");
                ram.poison(ppn);
                let slot = ram.slot_of(ppn);
                if self.nvram {
                    self.flash.media_mut().nvram_poison(slot, lpn, seq);
                }
            } else if self.nvram && !in_place {
                let slot = self.ram.as_ref().expect("checked").slot_of(ppn);
                self.flash.media_mut().nvram_write(slot, lpn, seq, e.data.as_deref());
            }
        }
        self.recount_mapped();
        Ok(())
    }

    /// Gives back the media (for recovery tests: a new FTL rebuilt from it).
    #[must_use]
    pub fn into_media(self) -> Box<dyn Media> {
        self.flash.into_media()
    }

    #[must_use]
    pub fn block_table(&self) -> &BlockTable {
        &self.blocks
    }

    #[must_use]
    pub fn free_blocks(&self) -> usize {
        self.free_count as usize
    }

    /// Physical page an LPN maps to, if any.
    #[must_use]
    pub fn lookup(&self, lpn: Lpn) -> Option<Ppn> {
        let p = self.l2p[lpn.index()];
        (p != Ppn::NONE).then_some(p)
    }

    #[inline]
    fn page_state(&self, lpn: Lpn, ppn: Ppn) -> PageState {
        let region = if self.in_ram(ppn) {
            self.ram_index
        } else {
            self.blocks.region[self.flash.block_of(ppn).index()]
        };
        PageState {
            region,
            entered_ns: self.entered_ns.get(lpn.index()).copied().unwrap_or(0),
            last_write: self.last_write.get(lpn.index()).copied().unwrap_or(0),
        }
    }

    /// A page to program in `region` for LPN `lpn` (a host write) or for a cleaner copy out
    /// of a block on `victim_plane`, on the plane the allocator picks, opening a new active
    /// block there if needed. Never cleans: the caller made sure enough free blocks exist.
    #[inline]
    fn next_page(&mut self, region: u8, lpn: Lpn, victim_plane: Option<u32>, now_ns: u64) -> Ppn {
        let plane = self.pick_plane(region, lpn, victim_plane);
        let slot = region as usize * self.planes as usize + plane as usize;
        let mut block = self.active[slot];
        if block == BlockId::NONE {
            block = self.take_free(region, plane);
            self.blocks.open(block, region, now_ns);
            if let Some(t) = self.opened_at.get_mut(block.index()) {
                *t = self.clock.host_writes;
            }
            self.active[slot] = block;
            self.open_planes[region as usize].insert(plane);
        }
        let offset = self.blocks.program(block, now_ns);
        let ppn = self.geometry.ppn(block, offset);
        if self.blocks.is_full(block) {
            // A full block stops being active: it may be cleaned and freed from now on.
            self.blocks.close(block);
            self.mark_closed(block);
            if let Some(t) = self.blocks.closed_at_write.get_mut(block.index()) {
                *t = self.clock.host_writes;
            }
            if self.placement_victims {
                self.placement.block_closed(block, region);
            }
            self.active[slot] = BlockId::NONE;
            self.open_planes[region as usize].remove(plane);
            if self.write_clock {
                self.placement.filled(region);
            }
        }
        ppn
    }

    /// Recomputes the plane sets from the active blocks and free lists (after recovery or
    /// retirement changed them wholesale).
    fn rebuild_plane_sets(&mut self) {
        let planes = self.planes as usize;
        for r in 0..self.flash_regions as usize {
            let mut set = PlaneSet::new(self.planes);
            for (p, &b) in self.active[r * planes..(r + 1) * planes].iter().enumerate() {
                if b != BlockId::NONE {
                    set.insert(p as u32);
                }
            }
            self.open_planes[r] = set;
        }
        let mut free = PlaneSet::new(self.planes);
        for (p, list) in self.free.iter().enumerate() {
            if !list.is_empty() {
                free.insert(p as u32);
            }
        }
        self.free_planes = free;
    }

    /// The plane of the next page of `region` (see `allocation`): for a host write, a plane
    /// whose open block has room or that has a free block; for a cleaner copy, a plane whose
    /// open block has room — a free block is opened only when none has, so a cleaning step
    /// opens at most one block per destination region.
    #[inline(always)]
    fn pick_plane(&mut self, region: u8, lpn: Lpn, victim_plane: Option<u32>) -> u32 {
        if self.planes == 1 {
            return 0;
        }
        self.pick_plane_among(region, lpn, victim_plane)
    }

    #[inline(never)]
    fn pick_plane_among(&mut self, region: u8, lpn: Lpn, victim_plane: Option<u32>) -> u32 {
        let open = &self.open_planes[region as usize];
        let free = &self.free_planes;
        let engine = self.flash.engine();
        let plane = match victim_plane {
            Some(v) if !open.is_empty() => self.alloc.cleaner(engine, v, Room { a: open, b: None }),
            Some(v) => self.alloc.cleaner(engine, v, Room { a: free, b: None }),
            None => self.alloc.host(engine, lpn.get(), Room { a: open, b: Some(free) }),
        };
        debug_assert!(open.contains(plane) || free.contains(plane));
        plane
    }

    /// Sets the allocation policy (`ftl.allocation`; `dynamic` until set).
    pub(crate) fn set_allocator(&mut self, alloc: Box<dyn Allocator>) {
        self.alloc = alloc;
    }

    /// Turns background cleaning on (`n` > 0: on an idle device, clean while fewer than `n`
    /// blocks are free) or off (0).
    pub(crate) fn set_background_cleaning(&mut self, n: u32) {
        assert!(
            n == 0 || n > self.gc_free_blocks_min,
            "the background threshold is above the floor"
        );
        self.gc_background_free_blocks = n;
    }

    /// Lazy wear leveling's recency record (see `WearHost::has_sector_mapping`).
    #[inline]
    fn mark_closed(&mut self, block: BlockId) {
        if let Some(s) = self.closed_seq.get_mut(block.index()) {
            *s = self.seq;
        }
    }

    /// Index of the bitmap word holding `ppn`'s bit, and the bit.
    #[inline]
    fn bit(&self, ppn: Ppn) -> (usize, u64) {
        let block = self.flash.block_of(ppn);
        let offset = self.flash.page_in_block(ppn);
        ((block.get() * self.words_per_block + offset / 64) as usize, 1u64 << (offset % 64))
    }

    #[inline]
    fn mark_valid(&mut self, ppn: Ppn) {
        let (w, bit) = self.bit(ppn);
        debug_assert_eq!(self.valid_bits[w] & bit, 0);
        self.valid_bits[w] |= bit;
    }

    #[inline]
    fn invalidate(&mut self, ppn: Ppn, now_ns: u64) {
        let (w, bit) = self.bit(ppn);
        assert_ne!(self.valid_bits[w] & bit, 0, "invalidate of a page that is not valid");
        self.valid_bits[w] &= !bit;
        self.blocks.invalidate(self.flash.block_of(ppn), now_ns);
    }

    #[inline]
    fn set_region_entry(&mut self, lpn: Lpn, old: Option<PageState>, region: u8, now_ns: u64) {
        if !self.entered_ns.is_empty() && old.is_none_or(|o| o.region != region) {
            self.entered_ns[lpn.index()] = now_ns;
        }
    }

    /// Advances the write clock for a host write of `lpn` (`new_page`: never written, or
    /// trimmed) and tells the placement, before it decides (`Placement::tick`).
    #[inline(never)]
    fn tick(&mut self, lpn: Lpn, new_page: bool) {
        self.clock.host_writes += 1;
        self.placement.tick(self.clock);
        self.clock.mapped_pages += u64::from(new_page);
        self.blocks.host_writes = self.clock.host_writes;
        if let Some(t) = self.last_write.get_mut(lpn.index()) {
            *t = self.clock.host_writes as u32;
        }
    }

    /// GC feedback (`Placement::collecting`), before `victim`'s pages are copied.
    fn report_collecting(&mut self, victim: BlockId) {
        if self.write_clock {
            let b = victim.index();
            self.placement.collecting(Collected {
                region: self.blocks.region[b],
                opened_at: self.opened_at[b],
                valid_pages: self.blocks.valid[b],
                pages_per_block: self.pages_per_block,
            });
        }
    }

    /// Counts the mapped logical pages afresh (after recovery rebuilt the table).
    fn recount_mapped(&mut self) {
        if !self.write_clock {
            return;
        }
        self.clock.mapped_pages = self.l2p.iter().filter(|&&p| p != Ppn::NONE).count() as u64;
    }

    /// Cleans victims until the free-block reserve is restored.
    fn clean(&mut self, now_ns: u64) {
        // Each victim frees one block and its copies consume at most that many pages, so the
        // loop ends; the bound turns a logic error into a loud failure instead of a hang.
        let mut rounds = 0u32;
        while self.free_count < self.gc_free_blocks_min {
            rounds += 1;
            assert!(rounds <= 4 * self.geometry.blocks, "cleaner makes no progress");
            self.clean_one(now_ns);
        }
    }

    /// Background cleaning (`ftl.gc_mode = "background"`): one victim, if fewer than the
    /// background threshold of blocks are free. The device calls it when idle.
    fn clean_in_background(&mut self, now_ns: u64) -> bool {
        if self.free_count >= self.gc_background_free_blocks || self.blocks.closed_blocks() == 0 {
            return false;
        }
        self.clean_one(now_ns);
        true
    }

    fn clean_one(&mut self, now_ns: u64) {
        let chosen =
            if self.placement_victims { self.placement.select_victim(&self.blocks) } else { None };
        let selection = match chosen {
            Some(block) => Selection { block, capped: false },
            None => self
                .victim
                .select(&self.blocks, now_ns)
                .expect("cleaner found no closed block: the device is over-full"),
        };
        let victim = selection.block;
        self.counters.gc_victims += 1;
        self.counters.victim_searches_capped += u64::from(selection.capped);
        self.report_collecting(victim);
        self.empty_block(victim, Source::Cleaner, now_ns);
        // Lazy wear leveling may put a cold block's data into a worn victim and hand back the
        // block that data came from, which is then erased instead (Algorithm 1).
        let block = match self.wear.take() {
            None => {
                if self.leveling {
                    self.erased_while_leveling.push(victim);
                }
                victim
            }
            Some(mut w) => {
                self.wear_now_ns = now_ns;
                let b = w.on_victim(self, victim);
                w.erased(b);
                self.wear = Some(w);
                b
            }
        };
        self.flash.erase(block, Source::Cleaner);
        self.return_erased(block);
    }

    /// Takes closed block `victim` out of the victim indexes and copies its valid pages to the
    /// regions the placement picks (`source`: the cleaner, or static wear leveling's eviction);
    /// the block is left with no valid page, not yet erased.
    fn empty_block(&mut self, victim: BlockId, source: Source, now_ns: u64) {
        self.blocks.take_victim(victim);
        let victim_plane = self.flash.plane_of(victim);
        let geometry = self.geometry;
        let first_word = (victim.get() * self.words_per_block) as usize;
        // The victim's LPNs in one step when the media holds them as a slice (the counting
        // media): no call per page below.
        let mut lpns = std::mem::take(&mut self.victim_lpns);
        lpns.clear();
        if let Some(s) = self.flash.block_lpns(victim) {
            lpns.extend_from_slice(s);
        } else {
            self.flash.prefetch_block_oob(victim);
        }
        let lpn_at = |flash: &Flash, lpns: &[Lpn], ppn: Ppn, offset: u32| -> Option<Lpn> {
            match lpns.get(offset as usize) {
                Some(&l) => (l != Lpn::NONE).then_some(l),
                None => flash.lpn(ppn),
            }
        };
        // The copies below update one random translation entry each; ask for all of those
        // cache lines up front so their misses overlap instead of queueing one by one (only
        // where the table is beyond the caches, as for the requests' hints).
        let hints = self.takes_prefetch_hints();
        for word in 0..if hints { self.words_per_block as usize } else { 0 } {
            let mut bits = self.valid_bits[first_word + word];
            while bits != 0 {
                let offset = (word as u32) * 64 + bits.trailing_zeros();
                let ppn = geometry.ppn(victim, offset);
                bits &= bits - 1;
                if let Some(lpn) = lpn_at(&self.flash, &lpns, ppn, offset) {
                    nandlab_prefetch::prefetch(&self.l2p, lpn.index());
                    if self.placement_prefetch {
                        self.placement.prefetch(lpn);
                    }
                }
            }
        }
        for word in 0..self.words_per_block as usize {
            let mut bits = self.valid_bits[first_word + word];
            while bits != 0 {
                let offset = (word as u32) * 64 + bits.trailing_zeros();
                let ppn = geometry.ppn(victim, offset);
                bits &= bits - 1;
                let lpn = lpn_at(&self.flash, &lpns, ppn, offset).expect("valid page is erased");
                // Paired with the write path: a valid page's OOB names the LPN mapped to it.
                // (Debug only: in release this load would be a cache miss per copied page;
                // `check` verifies the same relation for every page.)
                debug_assert_eq!(self.l2p[lpn.index()], ppn, "valid bit without mapping");
                let state = self.page_state(lpn, ppn);
                let region = self.placement.cleaner_copy(lpn, state, now_ns);
                let target = self.next_page(region, lpn, Some(victim_plane), now_ns);
                self.seq += 1;
                let new_oob = Oob { lpn, seq: self.seq, region };
                self.flash.copy(ppn, target, new_oob, source);
                self.l2p[lpn.index()] = target;
                self.mark_valid(target);
                self.set_region_entry(lpn, Some(state), region, now_ns);
                self.invalidate(ppn, now_ns);
                self.counters.gc_valid_pages += 1;
            }
        }
        self.victim_lpns = lpns;
        assert_eq!(self.blocks.valid[victim.index()], 0, "victim {victim} still has valid pages");
    }
}

/// The wear leveler's view: a unit is a physical block's content (see `crate::wear`). A
/// closed block whose pages are all still valid has not been updated since it was written: it
/// is the only kind Algorithm 1 moves.
impl WearHost for PageFtl {
    fn erase_count(&self, b: BlockId) -> u32 {
        self.blocks.erase_count[b.index()]
    }

    fn units(&self) -> u32 {
        self.geometry.blocks
    }

    /// Skipped: blocks not closed, blocks with a superseded page, and blocks closed less than
    /// one logical capacity of page programs ago (fresh data is not yet known to be cold: a
    /// block whose pages all survived the device being rewritten once has a low update
    /// recency).
    fn has_sector_mapping(&mut self, u: u32) -> bool {
        let b = u as usize;
        self.blocks.state[b] != BlockState::Closed
            || self.blocks.valid[b] < self.pages_per_block
            || self.seq - self.closed_seq[b] < self.geometry.logical_pages
    }

    fn pbn(&self, u: u32) -> Option<BlockId> {
        (self.blocks.state[u as usize] == BlockState::Closed && self.blocks.valid[u as usize] > 0)
            .then_some(BlockId::new(u))
    }

    fn erase(&mut self, b: BlockId) {
        debug_assert_eq!(self.blocks.valid[b.index()], 0);
        self.flash.erase(b, Source::WearLeveling);
        self.blocks.erased(b);
        self.endurance.observe(self.blocks.erase_count[b.index()]);
    }

    /// Copies every page of closed block `from` into erased block `to` at the same offsets;
    /// `to` takes `from`'s region and is closed full; `from` leaves the victim indexes (as a
    /// victim being cleaned does) with no valid page.
    fn move_block(&mut self, _u: u32, from: BlockId, to: BlockId) {
        let now_ns = self.wear_now_ns;
        let region = self.blocks.region[from.index()];
        debug_assert_eq!(self.blocks.valid[from.index()], self.pages_per_block);
        self.blocks.take_victim(from);
        self.blocks.open(to, region, now_ns);
        if self.write_clock {
            // The same data, as old as it was.
            self.opened_at[to.index()] = self.opened_at[from.index()];
            if let Some(&t) = self.blocks.closed_at_write.get(from.index()) {
                self.blocks.closed_at_write[to.index()] = t;
            }
        }
        for off in 0..self.pages_per_block {
            let src = self.geometry.ppn(from, off);
            let lpn = self.flash.lpn(src).expect("a valid page is programmed");
            let dst = self.geometry.ppn(to, self.blocks.program(to, now_ns));
            self.seq += 1;
            self.flash.copy(src, dst, Oob { lpn, seq: self.seq, region }, Source::WearLeveling);
            self.l2p[lpn.index()] = dst;
            self.mark_valid(dst);
            self.invalidate(src, now_ns);
        }
        self.blocks.close(to);
        self.mark_closed(to);
    }

    /// A closed block's valid pages go where the placement sends cleaned pages; then it is
    /// erased and freed. Free and open blocks have nothing static to move.
    fn evict(&mut self, b: BlockId) -> bool {
        if self.blocks.state[b.index()] != BlockState::Closed {
            return false;
        }
        let now_ns = self.wear_now_ns;
        self.report_collecting(b);
        self.empty_block(b, Source::WearLeveling, now_ns);
        self.flash.erase(b, Source::WearLeveling);
        self.return_erased(b);
        // Copies may have used the free reserve; restore it before the next eviction.
        self.clean(now_ns);
        true
    }
}

impl Ftl for PageFtl {
    fn name(&self) -> &'static str {
        "page"
    }

    fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    fn write_page(&mut self, lpn: Lpn, now_ns: u64, data: Option<&[u8]>) {
        assert!(u64::from(lpn) < self.geometry.logical_pages);
        if self.free_count < self.gc_free_blocks_min {
            self.clean(now_ns);
        }
        if self.wear.is_some() {
            self.level_wear(now_ns);
        }
        let old_ppn = self.l2p[lpn.index()];
        let old = (old_ppn != Ppn::NONE).then(|| self.page_state(lpn, old_ppn));
        if self.write_clock {
            self.tick(lpn, old.is_none());
        }
        let region = self.placement.host_write(lpn, old, now_ns);
        assert!(u32::from(region) < self.regions);
        if self.ram.is_some() && region == self.ram_index {
            self.write_ram(lpn, old, now_ns, data);
            return;
        }
        assert!(!self.in_ram(old_ppn), "a host write moved a page out of the RAM region");
        let ppn = self.next_page(region, lpn, None, now_ns);
        self.seq += 1;
        self.flash.program(ppn, Oob { lpn, seq: self.seq, region }, Source::Host, data);
        self.l2p[lpn.index()] = ppn;
        self.mark_valid(ppn);
        self.set_region_entry(lpn, old, region, now_ns);
        if old_ppn != Ppn::NONE {
            self.invalidate(old_ppn, now_ns);
        }
    }

    fn read_page(&mut self, lpn: Lpn, _now_ns: u64, data: Option<&mut [u8]>) -> bool {
        let ppn = self.l2p[lpn.index()];
        if ppn == Ppn::NONE {
            return false;
        }
        if let Some(ram) = self.ram.as_mut().filter(|r| r.holds(ppn)) {
            let lost = ram.is_poisoned(ppn);
            ram.read(ppn, data, self.ram_page_ns);
            self.flash.charge_ram(self.ram_page_ns);
            if lost {
                self.flash.media_mut().report_error(crate::error::MediaError::new(
                    std::io::ErrorKind::InvalidData,
                    format!(
                        "LPN {lpn}: its RAM region copy was damaged in NVRAM (lost at start-up)"
                    ),
                ));
            }
            return true;
        }
        let oob = self.flash.read(ppn, Source::Host, data);
        // Paired with the program-time OOB: the translation table never points at a page
        // holding another LPN.
        assert_eq!(oob.lpn, lpn, "translation table points at a page of another LPN");
        true
    }

    fn wants_background_clean(&self) -> bool {
        self.free_count < self.gc_background_free_blocks && self.blocks.closed_blocks() > 0
    }

    fn background_clean(&mut self, now_ns: u64) -> bool {
        self.clean_in_background(now_ns)
    }

    fn trim_page(&mut self, lpn: Lpn, now_ns: u64) {
        let ppn = self.l2p[lpn.index()];
        if ppn != Ppn::NONE {
            self.l2p[lpn.index()] = Ppn::NONE;
            if self.write_clock {
                self.clock.mapped_pages -= 1;
            }
            match self.ram.as_mut().filter(|r| r.holds(ppn)) {
                Some(ram) => ram.remove(ppn),
                None => self.invalidate(ppn, now_ns),
            }
        }
    }

    /// Only tables beyond the caches benefit: the hints cost about 57 instructions a request,
    /// which pay from about 2^20 logical pages (4 MiB of translation table). Measured with
    /// `nandlab bench --only page --blocks N`, builds with the bound at 2^16, 2^20 and 2^22, best
    /// of 3 interleaved: without hints 8,192 blocks (0.42 M logical pages) ran 0.14 s instead of
    /// 0.16 (greedy) and 16,384 blocks (0.84 M) no slower, while 32,768 blocks (1.68 M) ran
    /// 1.76 s instead of 2.25 (CAT); `experiments/speed/README.md`.
    fn takes_prefetch_hints(&self) -> bool {
        self.l2p.len() >= 1 << 20
    }

    #[inline]
    fn prefetch_translation(&self, lpn: Lpn) {
        nandlab_prefetch::prefetch(&self.l2p, lpn.index());
        if self.placement_prefetch {
            self.placement.prefetch(lpn);
        }
    }

    #[inline]
    fn prefetch_mapped(&self, lpn: Lpn) {
        let Some(&ppn) = self.l2p.get(lpn.index()) else { return };
        if ppn == Ppn::NONE || self.in_ram(ppn) {
            return;
        }
        let (w, _) = self.bit(ppn);
        nandlab_prefetch::prefetch(&self.valid_bits, w);
        self.blocks.prefetch(self.flash.block_of(ppn));
    }

    fn is_mapped(&self, lpn: Lpn) -> bool {
        self.l2p[lpn.index()] != Ppn::NONE
    }

    /// A RAM region page reports its pseudo page number (past the flash) and the RAM region's
    /// index.
    fn locate(&self, lpn: Lpn) -> Option<(Ppn, u8)> {
        self.lookup(lpn).map(|ppn| (ppn, self.page_state(lpn, ppn).region))
    }

    fn flush_ram_region(&mut self, now_ns: u64, reason: RamWriteBack) -> u64 {
        let n = self.ram.as_ref().map_or(0, RamRegion::used_pages);
        let erases = |f: &Flash| crate::flash::FlashCounters::total(&f.counters.erases);
        let before = erases(&self.flash);
        self.write_back_oldest(n, reason, now_ns);
        let done = erases(&self.flash) - before;
        if let Some(c) = self.ram.as_mut().map(|r| &mut r.counters) {
            match reason {
                RamWriteBack::Shutdown => c.shutdown_write_back_erases += done,
                RamWriteBack::EndOfRun => c.final_write_back_erases += done,
                RamWriteBack::Threshold => {}
            }
        }
        u64::from(n)
    }

    fn ram_region(&self) -> Option<RamRegionInfo> {
        self.ram.as_ref().map(RamRegion::info)
    }

    fn checkpoint(&mut self, now_ns: u64) -> Result<(), crate::error::MediaError> {
        let blocks: Vec<BlockRecord> = (0..self.geometry.blocks as usize)
            .map(|b| BlockRecord {
                erase_count: self.blocks.erase_count[b],
                region: self.blocks.region[b],
                state: match self.blocks.state[b] {
                    // A retired block is erased; it is retired again at start-up from its
                    // erase count (`set_endurance_cycles`).
                    BlockState::Free | BlockState::Retired => 0,
                    BlockState::Open => 1,
                    BlockState::Closed => 2,
                },
                write_pointer: self.blocks.write_pointer[b],
                valid_pages: self.blocks.valid[b],
            })
            .collect();
        // Oldest first within each plane (blocks are opened in this order per plane).
        let free_order: Vec<BlockId> = self.free.iter().flatten().copied().collect();
        // RAM region pages are not on flash: a mount from this checkpoint does not have them
        // (the region is written back at shutdown, before the last checkpoint).
        let l2p: std::borrow::Cow<'_, [Ppn]> = match &self.ram {
            None => std::borrow::Cow::Borrowed(&self.l2p),
            Some(r) => self.l2p.iter().map(|&p| if r.holds(p) { Ppn::NONE } else { p }).collect(),
        };
        let cp = Checkpoint {
            seq: self.seq,
            time_ns: now_ns,
            blocks: &blocks,
            l2p: &l2p,
            free_order: &free_order,
        };
        self.flash.media_mut().write_checkpoint(&cp)
    }

    fn flash(&self) -> &Flash {
        &self.flash
    }

    fn flash_mut(&mut self) -> &mut Flash {
        &mut self.flash
    }

    fn counters(&self) -> FtlCounters {
        FtlCounters {
            ram: self.ram.as_ref().map(|r| r.counters).unwrap_or_default(),
            ..self.counters
        }
    }

    fn erase_counts(&self) -> &[u32] {
        &self.blocks.erase_count
    }

    fn wear_leveling(&self) -> Option<WearLevelingStats> {
        self.wear.as_ref().map(|w| w.stats())
    }

    fn lifetime(&self) -> LifetimeState {
        self.endurance.state()
    }

    fn table_memory_bytes(&self) -> u64 {
        let blocks = u64::from(self.geometry.blocks);
        // Lookup table: state 1, valid 4, write pointer 4, erase count 4, region 1; indexes: 4
        // links of 4 bytes; modification times when the cleaner reads them.
        let per_block = 1 + 4 + 4 + 4 + 1 + 16;
        (self.l2p.len() * 4
            + self.blocks.last_modified_ns.len() * 8
            + self.entered_ns.len() * 8
            + self.last_write.len() * 4
            + self.opened_at.len() * 8
            + self.blocks.closed_at_write.len() * 8
            + self.valid_bits.len() * 8) as u64
            + blocks * per_block
            + blocks * 4 // free list
            + self.active.len() as u64 * 4
            + self.ram.as_ref().map_or(0, RamRegion::memory_bytes)
    }

    fn check(&self) {
        self.blocks.check();
        let mut valid = vec![0u32; self.geometry.blocks as usize];
        let mut in_ram = 0u32;
        for (lpn, &ppn) in self.l2p.iter().enumerate() {
            if ppn == Ppn::NONE {
                continue;
            }
            if let Some(r) = self.ram.as_ref().filter(|r| r.holds(ppn)) {
                assert_eq!(r.lpn_at(ppn).index(), lpn, "RAM slot holds another LPN");
                in_ram += 1;
                continue;
            }
            let oob = self.flash.oob(ppn).expect("mapped page is erased");
            assert_eq!(oob.lpn.index(), lpn, "mapping is not the inverse of OOB");
            let b = self.geometry.block_of(ppn).index();
            assert_ne!(self.blocks.state[b], BlockState::Free);
            assert!(self.geometry.page_in_block(ppn) < self.blocks.write_pointer[b]);
            valid[b] += 1;
        }
        assert_eq!(valid, self.blocks.valid, "valid counts do not match the mapping");
        if let Some(r) = &self.ram {
            r.check();
            assert_eq!(in_ram, r.used_pages(), "RAM slots in use do not match the mapping");
        }
        let bits: Vec<u32> = (0..self.geometry.blocks as usize)
            .map(|b| {
                let w = b * self.words_per_block as usize;
                self.valid_bits[w..w + self.words_per_block as usize]
                    .iter()
                    .map(|x| x.count_ones())
                    .sum()
            })
            .collect();
        assert_eq!(bits, valid, "valid bitmap does not match the mapping");
        let media = self.flash.media();
        for b in self.geometry.block_ids() {
            let i = b.index();
            assert_eq!(media.programmed_pages(b), self.blocks.write_pointer[i]);
            assert_eq!(media.erase_count(b), self.blocks.erase_count[i]);
        }
        let free_listed: usize = self.free.iter().map(VecDeque::len).sum();
        let free_state = self.blocks.state.iter().filter(|s| **s == BlockState::Free).count();
        assert_eq!(free_listed, free_state, "free list and block states disagree");
        assert_eq!(free_listed, self.free_count as usize, "free blocks counted");
        for (plane, list) in self.free.iter().enumerate() {
            for &b in list {
                assert_eq!(self.flash.plane_of(b) as usize, plane, "free block {b} on its plane");
            }
        }
        for (slot, &b) in self.active.iter().enumerate() {
            if b != BlockId::NONE {
                assert_eq!(self.blocks.state[b.index()], BlockState::Open);
                assert!(!self.blocks.is_full(b));
                let plane = slot % self.planes as usize;
                assert_eq!(self.flash.plane_of(b) as usize, plane, "active block {b} on its plane");
                let region = slot / self.planes as usize;
                assert_eq!(usize::from(self.blocks.region[b.index()]), region);
            }
        }
        for r in 0..self.flash_regions as usize {
            let p = self.planes as usize;
            for (q, &b) in self.active[r * p..(r + 1) * p].iter().enumerate() {
                assert_eq!(
                    b != BlockId::NONE,
                    self.open_planes[r].contains(q as u32),
                    "open planes set"
                );
            }
        }
        for (q, list) in self.free.iter().enumerate() {
            assert_eq!(!list.is_empty(), self.free_planes.contains(q as u32), "free planes set");
        }
    }
}
