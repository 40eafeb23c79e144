//! Recovery of the hybrid FTLs (BAST, SAST, FAST) from what the flash holds: a served
//! drive restarted after a crash (`kill -9`, power loss) or a clean stop rebuilds its RAM tables
//! — block map, log block page maps, log pool, free list — from the pages' OOB records.
//!
//! # What is modelled
//!
//! The flash holds, per programmed page, its OOB `{lpn, seq}` (`seq` = the global program
//! sequence number, strictly increasing) and, per block, the erase count and the write pointer.
//! Nothing records a block's role: a log block becomes a data block by a switch merge without
//! any program, so roles are derived from content. A crash can interrupt any flash operation of
//! a merge, a migration or a wear-leveling move; programs are atomic, an erase may be cut (some
//! of its old records survive, all superseded). At any instant the FTL holds at most one block
//! beyond its steady state (the destination of the copy under way). The view may also come from
//! the store's checkpoint mount, where every page the checkpoint maps has the checkpoint's
//! sequence number (many equal seqs) and the other pages of trusted blocks are garbage.
//!
//! # Algorithm
//!
//! 1. Scan: for each LPN the copy with the highest seq is the newest (valid); every other copy
//!    is stale. Pages whose LPN is garbage or out of range are never mapped.
//! 2. Programmed blocks with no valid page (an interrupted release, superseded content) are
//!    erased and freed (`FtlRecovery::erased_blocks`).
//! 3. Data blocks: a block is *pure* for logical block `x` if its valid pages all belong to `x`
//!    at their in-place offsets. `data[x]` is the oldest pure block of `x` (lowest seq among its
//!    valid pages). Every valid page outside its data block was written after the merge that
//!    made that block, so the oldest pure block is the data block the FTL had; a newer pure
//!    block (the destination of an interrupted merge or move) stays a log that a partial merge
//!    can complete. Ties (checkpoint views) go to the block with more programmed pages, whose
//!    valid pages lie beyond the other's in-place prefix, then to the lower block number.
//! 4. Every other block with valid pages is a log block, adopted oldest first (by its oldest
//!    page) while the association allows: BAST/SAST: its valid pages all of one group, at most
//!    K logs per group; FAST: the oldest block whose pages are all its logical block's pages in
//!    place (garbage allowed: the checkpoint view blanks superseded pages) is the sequential log,
//!    the others are random logs (at most `log_blocks − 1`, FIFO by age). Write pointers are the
//!    programmed pages, allocation order and LRU times come from seqs.
//! 5. A block that cannot be adopted (the crash's extra block, or a damaged layout) is repaired:
//!    each logical block it holds is consolidated — by a partial merge into a pure block that
//!    holds every newest copy below its write pointer (the interrupted merge's destination: no
//!    free block needed), else by a full merge into a free block (`RecoveryError::NoSpace` if
//!    none is left). Log blocks a repair empties are erased, as a merge erases them.
//!    `FtlRecovery::repair_merges` counts these merges; their flash work is also counted as
//!    partial or full merges.
//! 6. Free list = the erased blocks; free blocks already at their rated cycles are retired.
//!
//! A repair never programs a data block (`completes`): checkpoints mark data blocks closed and
//! the store's mount trusts closed blocks without reading them again, so pages added to one after
//! a checkpoint would be invisible to the next mount. Logs that may still be programmed are
//! marked open (read again), and an interrupted merge's destination was free or open then.
//!
//! Limits, documented: a TRIM leaves no trace on flash, so a trimmed page whose old copy was not
//! yet erased comes back (as in the page FTL); two copies of one LPN with equal seqs (possible
//! only in a damaged image) are ordered by physical page; the wear leveler and the recycling
//! policy restart from their initial state (the lazy leveler's average from the erase counts).

use std::collections::VecDeque;

use super::{Association, HybridFtl, HybridSpec, Log};
use crate::error::RecoveryError;
use crate::flash::{BlockId, Flash, Geometry, Lpn, Ppn, Source, NONE};
use crate::ftl::{FtlRecovery, RecycleKind};

/// Rebuilds the tables of the hybrid FTL `spec` describes from `flash`, whose geometry must be
/// `expected` (the configuration's). The FTL is built as `HybridFtl::from_spec` builds it; the
/// caller attaches the wear leveler after recovery, its erase average starting from the
/// recovered erase counts.
pub fn recover_from_spec(
    spec: &HybridSpec,
    expected: &Geometry,
    flash: Flash,
    endurance_cycles: u32,
    spare_blocks: u32,
) -> Result<(HybridFtl, FtlRecovery), RecoveryError> {
    let (g, c) = (flash.geometry(), expected);
    for (key, image, config) in [
        ("device.pages_per_block", u64::from(g.pages_per_block), u64::from(c.pages_per_block)),
        ("device.blocks", u64::from(g.blocks), u64::from(c.blocks)),
        ("device.logical_bytes", g.logical_bytes(), c.logical_bytes()),
    ] {
        if image != config {
            let (image, config) = (image.to_string(), config.to_string());
            return Err(RecoveryError::Mismatch { key, image, config });
        }
    }
    let mut ftl = HybridFtl::from_spec(spec, flash, endurance_cycles, spare_blocks);
    let report = ftl.recover()?;
    Ok((ftl, report))
}

/// What the scan learnt about one block.
#[derive(Clone, Copy)]
struct BlockScan {
    /// Programmed pages (the write pointer).
    programmed: u32,
    /// Oldest and newest seq of its pages that name a logical page (valid or not).
    oldest: u64,
    newest: u64,
}

impl HybridFtl {
    /// Rebuilds the tables from what the flash holds (see the module doc). Call it once, on an
    /// FTL just built over a media that holds data (`new`, `set_endurance`); a wear
    /// leveler is best attached afterwards, with the recovered erase counts. Damage it cannot
    /// repair is an error; what the flash holds never makes it panic.
    pub fn recover(&mut self) -> Result<FtlRecovery, RecoveryError> {
        assert!(
            self.seq == 0 && self.logs_in_use == 0 && self.data.iter().all(|&d| d == BlockId::NONE),
            "recover runs once, on a new FTL"
        );
        // Recovery's own releases erase directly: a leveler must not move data while the
        // tables are half built.
        let wear = self.wear.take();
        let result = self.rebuild();
        self.wear = wear;
        result
    }

    fn rebuild(&mut self) -> Result<FtlRecovery, RecoveryError> {
        let mut report = FtlRecovery::default();
        let (scans, newest) = self.scan()?;
        self.erase_empty_blocks(&scans, &mut report);
        let pure = self.choose_data_blocks(&scans);
        let unadopted = self.adopt_logs(&scans, &pure);
        // Every valid page outside its logical block's data block is a log copy (in an adopted
        // log, or in a block about to be repaired).
        for (lpn, &ppn) in newest.iter().enumerate() {
            let data_block = self.data[lpn / self.ppb as usize];
            if ppn != Ppn::NONE && self.geometry.block_of(ppn) != data_block {
                self.log_ppn[lpn] = ppn;
            }
        }
        for u in unadopted {
            self.repair(u, &mut report)?;
        }
        self.finish_bookkeeping();
        Ok(report)
    }

    /// Step 1: the newest copy of every LPN is marked valid; erase counts, write pointers and
    /// ages are read; `seq` continues after the newest page. Returns the blocks and each LPN's
    /// newest copy (`Ppn::NONE`: none).
    fn scan(&mut self) -> Result<(Vec<BlockScan>, Vec<Ppn>), RecoveryError> {
        let ppb = self.ppb;
        let geometry = self.geometry;
        let logical = geometry.logical_pages;
        let mut newest_seq = vec![0u64; logical as usize];
        let mut newest_ppn = vec![Ppn::NONE; logical as usize];
        let mut scans = Vec::with_capacity(geometry.blocks as usize);
        for block in geometry.block_ids() {
            self.erase_counts[block.index()] = self.flash.erase_count(block);
            let programmed = self.flash.media().programmed_pages(block);
            if programmed > ppb {
                return Err(RecoveryError::Damaged {
                    what: format!("block {block} has {programmed} programmed pages of {ppb}"),
                });
            }
            let mut s = BlockScan { programmed, oldest: u64::MAX, newest: 0 };
            for offset in 0..programmed {
                let ppn = geometry.ppn(block, offset);
                // A skipped page below the write pointer (a merge skips trimmed pages).
                let Some(oob) = self.flash.oob(ppn) else { continue };
                if oob.region != 0 {
                    return Err(RecoveryError::Damaged {
                        what: format!(
                            "page {ppn} (block {block}) belongs to region {}: hybrid FTLs write \
                             region 0 only (an image written by another FTL kind?)",
                            oob.region
                        ),
                    });
                }
                if u64::from(oob.lpn) >= logical {
                    continue; // torn or unknown: occupies its slot, never mapped
                }
                // New programs must be numbered above everything on flash; a seq this large
                // would overflow the counter (a corrupted record).
                if oob.seq >= u64::MAX / 2 {
                    return Err(RecoveryError::Damaged {
                        what: format!("page {ppn} has an implausible sequence number {}", oob.seq),
                    });
                }
                self.seq = self.seq.max(oob.seq);
                s.oldest = s.oldest.min(oob.seq);
                s.newest = s.newest.max(oob.seq);
                let l = oob.lpn.index();
                // Equal seqs (a damaged image) keep the first copy found: deterministic.
                if newest_ppn[l] == Ppn::NONE || oob.seq > newest_seq[l] {
                    newest_ppn[l] = ppn;
                    newest_seq[l] = oob.seq;
                }
            }
            scans.push(s);
        }
        for &ppn in newest_ppn.iter().filter(|&&p| p != Ppn::NONE) {
            self.mark_valid(ppn);
        }
        // Allocation and LRU times are seqs; later ones continue above them.
        self.clock = self.seq;
        Ok((scans, newest_ppn))
    }

    /// Step 2 and the free list: blocks never programmed since their erase are free (retired
    /// if already worn out); programmed blocks without a valid page are erased and freed.
    fn erase_empty_blocks(&mut self, scans: &[BlockScan], report: &mut FtlRecovery) {
        self.free.iter_mut().for_each(VecDeque::clear);
        self.free_count = 0;
        self.free_planes = crate::allocation::PlaneSet::new(self.free.len() as u32);
        let mut emptied = Vec::new();
        for (block, s) in self.geometry.block_ids().zip(scans) {
            let b = block.index();
            if s.programmed == 0 {
                let count = self.erase_counts[b];
                if !self.endurance.after_erase(block, count, true) {
                    self.push_free(block, false);
                }
            } else if self.block_valid[b] == 0 {
                emptied.push(block);
            }
        }
        for block in emptied {
            self.flash.erase(block, Source::Cleaner);
            self.return_erased(block);
            report.erased_blocks += 1;
        }
    }

    /// Step 3: `data[x]` = the oldest block pure for `x`. Returns each block's pure logical
    /// block (`NONE`: none, or no valid page).
    fn choose_data_blocks(&mut self, scans: &[BlockScan]) -> Vec<u32> {
        let mut pure = vec![NONE; scans.len()];
        // Per logical block: (oldest valid seq, more pages first, block number) of the best.
        let mut best: Vec<Option<(u64, std::cmp::Reverse<u32>, BlockId)>> =
            vec![None; self.logical_blocks as usize];
        for (block, s) in self.geometry.block_ids().zip(scans) {
            let b = block.index();
            if self.block_valid[b] == 0 {
                continue;
            }
            let mut lbn = NONE;
            let mut oldest_valid = u64::MAX;
            let is_pure = (0..s.programmed).all(|offset| {
                let ppn = self.geometry.ppn(block, offset);
                if !self.is_valid(ppn) {
                    return true;
                }
                let oob = self.flash.oob(ppn).expect("a valid page is programmed");
                oldest_valid = oldest_valid.min(oob.seq);
                let x = self.lbn(oob.lpn);
                if lbn == NONE {
                    lbn = x;
                }
                self.offset(oob.lpn) == offset && lbn == x
            });
            if !is_pure {
                continue;
            }
            pure[b] = lbn;
            let key = (oldest_valid, std::cmp::Reverse(s.programmed), block);
            let slot = &mut best[lbn as usize];
            if slot.is_none_or(|k| key < k) {
                *slot = Some(key);
            }
        }
        for (lbn, key) in best.iter().enumerate() {
            if let Some((_, _, block)) = key {
                self.data[lbn] = *block;
            }
        }
        pure
    }

    /// Step 4: adopts the other blocks with valid pages into log slots, oldest first, as far as
    /// the association allows. Returns the blocks left over (to repair), oldest first.
    fn adopt_logs(&mut self, scans: &[BlockScan], pure: &[u32]) -> Vec<BlockId> {
        let is_data = {
            let mut d = vec![false; scans.len()];
            for &b in self.data.iter().filter(|&&b| b != BlockId::NONE) {
                d[b.index()] = true;
            }
            d
        };
        let mut candidates: Vec<(u64, BlockId)> = self
            .geometry
            .block_ids()
            .filter(|&b| self.block_valid[b.index()] > 0 && !is_data[b.index()])
            .map(|b| (scans[b.index()].oldest, b))
            .collect();
        candidates.sort_unstable();
        let mut unadopted = Vec::new();
        for (_, block) in candidates {
            let s = scans[block.index()];
            let owner = match self.association {
                Association::Set { data_blocks, log_blocks } => {
                    let group = self.group_of_valid_pages(block, s.programmed, data_blocks, pure);
                    group.filter(|&g| {
                        self.group_logs[g as usize] < log_blocks
                            && self.logs_in_use < self.log_blocks_max
                    })
                }
                Association::Full => {
                    let lbn = self.sequential_owner(block, s.programmed);
                    if lbn.is_some() && self.sequential == NONE {
                        lbn
                    } else if (self.random.len() as u32) < self.log_blocks_max - 1 {
                        Some(NONE)
                    } else {
                        None
                    }
                }
            };
            let Some(owner) = owner else {
                unadopted.push(block);
                continue;
            };
            let slot = self.logs.iter().position(Option::is_none).expect("pool checked") as u32;
            self.logs[slot as usize] = Some(Log {
                block,
                owner,
                write_pointer: s.programmed,
                allocated: s.oldest,
                last_write: s.newest,
            });
            self.logs_in_use += 1;
            match self.association {
                Association::Set { .. } => self.group_logs[owner as usize] += 1,
                Association::Full if owner != NONE => self.sequential = slot,
                Association::Full => self.random.push_back(slot),
            }
        }
        unadopted
    }

    /// The group all of `block`'s valid pages belong to (`None`: several).
    fn group_of_valid_pages(
        &self,
        block: BlockId,
        programmed: u32,
        group_size: u32,
        pure: &[u32],
    ) -> Option<u32> {
        if pure[block.index()] != NONE {
            return Some(pure[block.index()] / group_size);
        }
        let mut group = None;
        for ppn in self.geometry.pages_of(block).take(programmed as usize) {
            if self.is_valid(ppn) {
                let g =
                    self.lbn(self.flash.lpn(ppn).expect("a valid page is programmed")) / group_size;
                if *group.get_or_insert(g) != g {
                    return None;
                }
            }
        }
        group
    }

    /// FAST: the logical block whose sequential log `block` can be: every programmed page is
    /// that logical block's page at its own offset, or garbage (a checkpoint view blanks
    /// superseded pages; a merge skips trimmed ones).
    fn sequential_owner(&self, block: BlockId, programmed: u32) -> Option<u32> {
        let mut lbn = None;
        for offset in 0..programmed {
            let Some(oob) = self.flash.oob(self.geometry.ppn(block, offset)) else { continue };
            if u64::from(oob.lpn) >= self.geometry.logical_pages {
                continue;
            }
            let x = self.lbn(oob.lpn);
            if self.offset(oob.lpn) != offset || *lbn.get_or_insert(x) != x {
                return None;
            }
        }
        lbn
    }

    /// Step 5 for one block that could not be adopted: consolidates each logical block it holds
    /// until it holds no valid page (then it is erased) or becomes a data block itself.
    fn repair(&mut self, u: BlockId, report: &mut FtlRecovery) -> Result<(), RecoveryError> {
        loop {
            let programmed = self.flash.media().programmed_pages(u);
            let mut pages = self.geometry.pages_of(u).take(programmed as usize);
            let Some(ppn) = pages.find(|&p| self.is_valid(p)) else {
                break;
            };
            let lbn = self.lbn(self.flash.lpn(ppn).expect("a valid page is programmed"));
            if self.data[lbn as usize] == u {
                // A partial merge completed into it (this repair's or an earlier one's): it is
                // that logical block's data block now, holding nothing else.
                return Ok(());
            }
            self.consolidate(lbn, u)?;
            report.repair_merges += 1;
        }
        self.release(u);
        Ok(())
    }

    /// Makes `lbn`'s data block hold the newest copy of each of its pages, leaving none in any
    /// other block: a partial merge into a block that can complete it (`u` preferred), else a
    /// full merge into a free block. Old data block and emptied logs are erased.
    fn consolidate(&mut self, lbn: u32, u: BlockId) -> Result<(), RecoveryError> {
        let start = self.mark();
        let ppb = self.ppb;
        let first = lbn * ppb;
        let end = (u64::from(first + ppb)).min(self.geometry.logical_pages) as u32;
        let old_data = self.data[lbn as usize];
        let mut holders = vec![u];
        for lpn in (first..end).map(Lpn::new) {
            let l = self.log_ppn[lpn.index()];
            if l != Ppn::NONE && !holders.contains(&self.geometry.block_of(l)) {
                holders.push(self.geometry.block_of(l));
            }
        }
        let target = holders.iter().copied().find(|&t| self.completes(t, lbn));
        let (kind, new_data) = match target {
            Some(t) => {
                // Its in-place prefix becomes data; the rest is copied in after it.
                let programmed = self.flash.media().programmed_pages(t);
                for offset in 0..programmed.min(end - first) {
                    let lpn = self.lpn(lbn, offset);
                    if self.log_ppn[lpn.index()] == self.geometry.ppn(t, offset) {
                        self.log_ppn[lpn.index()] = Ppn::NONE;
                    }
                }
                if let Some(slot) = self.slot_of(t) {
                    self.forget_log(slot);
                }
                self.gather(lbn, t, programmed);
                (RecycleKind::PartialMerge, t)
            }
            None => {
                if self.free_count == 0 {
                    return Err(RecoveryError::NoSpace {
                        what: format!(
                            "a full merge of logical block {lbn} is needed to place block {u}, \
                             which the log pool cannot hold"
                        ),
                    });
                }
                let block = self.take_free(lbn);
                self.gather(lbn, block, 0);
                (RecycleKind::FullMerge, block)
            }
        };
        debug_assert!(self.block_valid[new_data.index()] > 0, "u held a page of {lbn}");
        self.data[lbn as usize] = new_data;
        if old_data != BlockId::NONE {
            self.release(old_data);
        }
        // Logs this emptied are erased, as a merge erases them; `u` is its caller's.
        for &h in &holders[1..] {
            if h != new_data && self.block_valid[h.index()] == 0 {
                if let Some(slot) = self.slot_of(h) {
                    self.forget_log(slot);
                    self.release(h);
                }
            }
        }
        self.recycling.merged(lbn);
        self.account(kind, start, 1);
        Ok(())
    }

    /// Can a partial merge into `t` consolidate `lbn`? `t` must hold only `lbn`'s pages in place
    /// and every newest copy of `lbn` below its write pointer, so that copying the newest copies
    /// of the pages above it completes the logical block. Never a data block (see module doc).
    fn completes(&self, t: BlockId, lbn: u32) -> bool {
        // Candidates hold a log copy of `lbn` (or are the block being repaired), so none is a
        // data block; checked anyway, it is cheap.
        if self.data[lbn as usize] == t {
            return false;
        }
        let programmed = self.flash.media().programmed_pages(t);
        let pure = (0..programmed).all(|offset| {
            let ppn = self.geometry.ppn(t, offset);
            !self.is_valid(ppn) || self.flash.lpn(ppn) == Some(self.lpn(lbn, offset))
        });
        pure && (0..programmed).all(|offset| {
            let lpn = self.lpn(lbn, offset);
            u64::from(lpn) >= self.geometry.logical_pages
                || self.newest(lpn).is_none_or(|p| p == self.geometry.ppn(t, offset))
        })
    }

    fn slot_of(&self, block: BlockId) -> Option<u32> {
        self.logs.iter().position(|l| l.is_some_and(|l| l.block == block)).map(|s| s as u32)
    }

    /// Takes a log out of the pool and its association's bookkeeping.
    fn forget_log(&mut self, slot: u32) {
        let owner = self.log(slot).owner;
        self.drop_slot(slot);
        match self.association {
            Association::Set { .. } => self.group_logs[owner as usize] -= 1,
            Association::Full if self.sequential == slot => self.sequential = NONE,
            Association::Full => self.random.retain(|&s| s != slot),
        }
    }

    /// Each group's active log is its newest.
    fn finish_bookkeeping(&mut self) {
        if let Association::Set { .. } = self.association {
            self.group_active.fill(NONE);
            let mut newest = vec![0u64; self.group_active.len()];
            for (slot, log) in self.logs.iter().enumerate() {
                let Some(log) = log else { continue };
                let g = log.owner as usize;
                if self.group_active[g] == NONE || log.allocated >= newest[g] {
                    self.group_active[g] = slot as u32;
                    newest[g] = log.allocated;
                }
            }
        }
    }
}
