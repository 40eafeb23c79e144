//! Wear leveling and endurance (docs/ALGORITHMS.md §6; lazy wear-leveling paper, §3–§5,
//! docs/PAPERS.md).
//!
//! # What this models
//!
//! A wear leveler sits beside an FTL and sees every erase. Policies (`wear.kind`):
//!
//! - `lazy` (`lazy`): Algorithm 1. When the FTL is about to erase a garbage-collection victim
//!   `v` that has been erased more than `Δ` times above the *average* erase count, the leveler
//!   re-maps a logical block with a low update recency onto `v` (so the worn block receives
//!   cold data and rests) and hands that logical block's old physical block back to the FTL in
//!   place of `v`. "Low update recency" is found by visiting logical blocks in a fixed
//!   full-period permutation (`LbnPermutation`) and taking the first one the FTL holds no log
//!   (sector) mapping for. Only the average erase count is kept. With `wear.adaptive`, `Δ` is
//!   retuned every session from the measured overhead (`adaptive`).
//! - `static` (`static_wl`): Chang et al.'s SW Leveler, the paper's baseline. An erase bitmap
//!   over sets of blocks records which sets were erased since the bitmap was last reset; when
//!   the erases since then divided by the number of erased sets reach `TH`, the leveler forces
//!   the data out of the next set whose bit is clear, so blocks holding static data join
//!   garbage collection.
//!
//! Mechanism apart from policy: an FTL implements `WearHost` (the subroutines Algorithm 1 names
//! with leading underscores, plus `evict` for static leveling) and calls a `WearLeveler` picked
//! once at construction (`WearSpec::build`). Adding a policy is one file (its `ENTRY`) plus one
//! line in `REGISTRY`.
//!
//! # The unit a leveler moves
//!
//! Algorithm 1 moves *logical blocks*. For the hybrid FTLs that is literal: logical block `l`
//! lives in one data block, `has_sector_mapping(l)` means some page of `l` sits in a log
//! block (it is being updated), and a move copies the data block into `v`.
//!
//! The page-mapped FTL has no logical-to-physical block binding, so its unit is the content of
//! one closed physical block (unit `u` = physical block `u`). The counterpart of "has a sector
//! mapping" is "some page of it has been superseded": a block whose pages are all still valid
//! has not been updated since it was written (the page FTL's coldest data), while a block with
//! an invalid page, an open (active) block, a free block or a victim being cleaned is skipped.
//! A move copies all of the block's pages into `v` at the same offsets (so `v` is full and
//! closed, in the same region), remaps their LPNs, and hands the emptied block back.
//!
//! # Endurance
//!
//! `Endurance` retires a block that has reached its rated program/erase cycles instead of
//! returning it to the free pool, as long as enough good blocks remain for the FTL to keep
//! working; the first time retiring would leave too few, the device is *unusable* (it keeps
//! its data readable, and the device refuses further writes). Both moments are recorded so
//! lifetime is reported as host bytes written until then.

pub mod adaptive;
pub mod endurance;
pub mod permutation;
pub mod spec;

pub use endurance::{Endurance, LifetimeState};
pub use spec::{kinds, WearConfig, WearEntry, WearSpec};
#[cfg(test)]
pub use {lazy::LazyWearLeveling, permutation::LbnPermutation, static_wl::StaticWearLeveling};

use crate::flash::BlockId;

/// What an FTL provides a wear leveler. "Unit" is what Algorithm 1 calls a logical block (see
/// the module doc for the page-mapped FTL's meaning).
pub trait WearHost {
    /// Erases so far of physical block `b`.
    fn erase_count(&self, b: BlockId) -> u32;
    /// Units `0..units()` the leveler may visit.
    fn units(&self) -> u32;
    /// Whether unit `u` is being updated (pages outside its data block / superseded pages),
    /// so moving it now would be wasted.
    fn has_sector_mapping(&mut self, u: u32) -> bool;
    /// The physical block holding unit `u`, or `None` if it holds no data (nothing to move).
    fn pbn(&self, u: u32) -> Option<BlockId>;
    /// Erases `b`, which holds no valid page (a wear-leveling erase).
    fn erase(&mut self, b: BlockId);
    /// Copies the valid pages of unit `u` from `from` into the erased block `to` and maps `u`
    /// to `to`; `from` then holds no valid page (the leveler hands it back to the FTL).
    fn move_block(&mut self, u: u32, from: BlockId, to: BlockId);
    /// Static leveling: moves the valid data out of physical block `b` into blocks the FTL
    /// picks, erases `b` and returns it to the free pool. Returns false (doing nothing) when
    /// `b` is free, open, or holds data being updated (it will be erased soon anyway).
    fn evict(&mut self, b: BlockId) -> bool;
}

/// What a wear leveler did, for the metrics.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct WearLevelingStats {
    /// `wear.kind`.
    pub kind: &'static str,
    /// Lazy: worn victims re-mapped with a cold unit (each costs one extra erase and a copy).
    pub remaps: u64,
    /// Static: block sets forced out of the bitmap's clear sets, and blocks actually evicted.
    pub forced_sets: u64,
    pub evicted_blocks: u64,
    /// Static: bitmap resets (every set erased since the last reset).
    pub bitmap_resets: u64,
    /// Lazy: Δ in force at the end.
    pub delta: f64,
    /// Lazy with `wear.adaptive`: Δ at the start of each session (paper Fig. 13).
    pub delta_history: Vec<f64>,
    /// What the leveler did, in words, for a report (its own wording: `run`'s table prints it).
    #[serde(skip)]
    pub summary: String,
}

/// A wear-leveling policy. Erases the leveler asks the host for (`WearHost::erase`, `evict`)
/// are counted by the leveler itself; every other erase the FTL reports through `erased`.
pub trait WearLeveler: Send {
    fn name(&self) -> &'static str;
    /// The FTL is about to erase garbage-collection victim `v` (no valid page left); returns
    /// the block to erase and reuse instead (`v` itself when no leveling is due).
    fn on_victim(&mut self, _host: &mut dyn WearHost, v: BlockId) -> BlockId {
        v
    }
    /// The FTL erased `b` on its own (host or cleaner work).
    fn erased(&mut self, b: BlockId);
    /// Whether `work` has something to do; checked by the FTL between host writes, when its
    /// free-block reserve is whole.
    fn wants_work(&self) -> bool {
        false
    }
    /// Proactive leveling (static): runs until `wants_work` is false.
    fn work(&mut self, _host: &mut dyn WearHost) {}
    fn stats(&self) -> WearLevelingStats;
}

// The registry: one line per leveler (`wear.kind = "none"` is no leveler).
crate::spec::registry! {
    WearEntry;
    pub static_wl,
    pub lazy,
}

/// What a leveler is built for: the units the host exposes (`WearHost::units`), its physical
/// blocks, the erases done before the leveler was attached (for the average) and the run's
/// seed.
#[derive(Clone, Copy, Debug)]
pub struct WearSetup {
    pub units: u32,
    pub physical_blocks: u32,
    pub erases_so_far: u64,
    pub seed: u64,
}
