//! Flash translation layers behind one trait. The device (request level) splits host requests
//! into pages and calls an `Ftl`; the FTL owns the `Flash` it programs. Kinds: the page-mapped
//! log-structured store (`page`, DAC paper) and the hybrid log-block FTLs (`hybrid`: BAST,
//! SAST, FAST; block-recycling and lazy wear-leveling papers). The papers: docs/PAPERS.md.

pub mod block_table;
pub mod hybrid;
mod page;
pub mod policy;
pub mod ram_region;
pub mod spec;
pub mod zones;

pub use hybrid::HybridFtl;
pub use page::PageFtl;
pub use spec::{FtlConfig, FtlSpec, PageSpec};

use crate::flash::Geometry;
use crate::flash::{Flash, Lpn};

/// Counters an FTL keeps about its own work (flash operation counts live in `Flash`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FtlCounters {
    /// Victim blocks cleaned.
    pub gc_victims: u64,
    /// Victim searches that hit the scan limit (approximate choices).
    pub victim_searches_capped: u64,
    /// Valid pages found in victims (= pages copied by the cleaner).
    pub gc_valid_pages: u64,
    /// Block recycling of the hybrid FTLs, by kind (index = `RecycleKind`); zero for `page`.
    pub recycles: [RecycleStats; RECYCLE_KINDS],
    /// The page FTL's RAM region (DEB's EBR, DAC's RAM region); zero without one.
    pub ram: ram_region::RamRegionCounters,
    /// Mapping-table zone loads and write-backs (`zones`); zero when the table is resident.
    pub zones: zones::ZoneCounters,
}

/// What an FTL's recovery (rebuilding its tables from flash after a restart) found and did
/// beyond reading: work a crash interrupted and was completed, and damage that was repaired.
/// All zero after a clean shutdown.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct FtlRecovery {
    /// Programmed blocks with no valid page (a release or erase interrupted): erased.
    pub erased_blocks: u32,
    /// Partly programmed blocks that could not stay open (more than one per region, or a block
    /// the FTL cannot append to): their unprogrammed pages were filled with garbage pages so
    /// the block can be cleaned like any closed block.
    pub sealed_blocks: u32,
    /// Pages programmed to seal those blocks.
    pub sealing_pages: u32,
    /// Page FTL: a cleaning step a crash interrupted (its victim partly copied, no block left
    /// free) was finished: the victim's remaining valid pages copied, the victim erased.
    pub cleanings_completed: u32,
    /// Merges run to restore the hybrid FTLs' invariants (a merge or migration a crash
    /// interrupted, more log blocks than the pool allows, a group over its log limit).
    pub repair_merges: u32,
    /// Pages found in the RAM region's NVRAM that were newer than their flash copy (restored).
    pub nvram_pages_restored: u32,
    /// NVRAM pages dropped because the battery is modelled as failed
    /// (`serve.ram_region_battery = "failed"`): data loss by request.
    pub nvram_pages_lost: u32,
}

/// How a hybrid FTL reclaimed log space (docs/ALGORITHMS.md §4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecycleKind {
    /// The log block held its data block's pages in place and complete: it becomes the data
    /// block; the old data block is erased.
    SwitchMerge = 0,
    /// The log block held an in-place prefix: the rest is copied in, then switch.
    PartialMerge = 1,
    /// The newest copy of every page is copied into a fresh block; data and log blocks erased.
    FullMerge = 2,
    /// The block-recycling paper: the log block's valid pages are copied into a fresh log block;
    /// the old one is erased; the data block is untouched.
    Migration = 3,
    /// A log block with no valid page left is erased without copying.
    Discard = 4,
}

pub const RECYCLE_KINDS: usize = 5;

/// What one kind of recycling cost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct RecycleStats {
    pub count: u64,
    pub copied_pages: u64,
    pub erases: u64,
    /// Flash time spent in these operations.
    pub busy_ns: u64,
}

impl std::ops::Sub for RecycleStats {
    type Output = Self;
    fn sub(self, o: Self) -> Self {
        Self {
            count: self.count - o.count,
            copied_pages: self.copied_pages - o.copied_pages,
            erases: self.erases - o.erases,
            busy_ns: self.busy_ns - o.busy_ns,
        }
    }
}

pub trait Ftl: Send {
    fn name(&self) -> &'static str;
    fn geometry(&self) -> &Geometry;
    /// Writes one whole logical page.
    fn write_page(&mut self, lpn: Lpn, now_ns: u64, data: Option<&[u8]>);
    /// Reads one logical page; returns false (and reads nothing from flash) if it is unmapped.
    fn read_page(&mut self, lpn: Lpn, now_ns: u64, data: Option<&mut [u8]>) -> bool;
    /// Discards one logical page.
    fn trim_page(&mut self, lpn: Lpn, now_ns: u64);
    fn is_mapped(&self, lpn: Lpn) -> bool;
    /// Where a logical page lives: its physical page and region (for inspection and tests).
    fn locate(&self, lpn: Lpn) -> Option<(crate::flash::Ppn, u8)>;
    fn flash(&self) -> &Flash;
    fn flash_mut(&mut self) -> &mut Flash;
    fn counters(&self) -> FtlCounters;
    /// Erase count of every block (index = block).
    fn erase_counts(&self) -> &[u32];
    /// What the wear leveler did (`None` without one).
    fn wear_leveling(&self) -> Option<crate::wear::WearLevelingStats> {
        None
    }
    /// Worn-out and retired blocks (all clear with unlimited endurance).
    fn lifetime(&self) -> crate::wear::LifetimeState {
        crate::wear::LifetimeState::default()
    }
    /// Bytes of RAM used by the FTL's tables (translation, region, lookup tables, indexes).
    fn table_memory_bytes(&self) -> u64;
    /// Whether the two `prefetch_*` hints do anything (callers skip loops of no-op calls).
    fn takes_prefetch_hints(&self) -> bool {
        false
    }
    /// Cache hint, first stage: a write or read of `lpn` is coming soon (a few requests ahead).
    fn prefetch_translation(&self, _lpn: Lpn) {}
    /// Cache hint, second stage (closer): touch what the access will need after translation.
    fn prefetch_mapped(&self, _lpn: Lpn) {}
    /// Makes all acknowledged writes durable on the media.
    fn sync(&mut self) -> Result<(), crate::error::MediaError> {
        self.flash_mut().media_mut().sync()
    }
    /// Whether background cleaning (`ftl.gc_mode = "background"`) has work: fewer free blocks
    /// than its threshold. Always false for FTLs without it.
    fn wants_background_clean(&self) -> bool {
        false
    }
    /// One step of background cleaning (one victim) if it has work; returns whether it did
    /// any. The device calls it when no host request is in flight.
    fn background_clean(&mut self, _now_ns: u64) -> bool {
        false
    }
    /// Writes every page of the RAM region (if any) back to flash; returns how many.
    fn flush_ram_region(&mut self, _now_ns: u64, _reason: ram_region::RamWriteBack) -> u64 {
        0
    }
    /// The RAM region's size and fill, `None` without one.
    fn ram_region(&self) -> Option<ram_region::RamRegionInfo> {
        None
    }
    /// Writes a checkpoint of the tables to the media (see `flash::Checkpoint`).
    fn checkpoint(&mut self, _now_ns: u64) -> Result<(), crate::error::MediaError> {
        Err(crate::error::MediaError::new(
            std::io::ErrorKind::Unsupported,
            "this FTL does not write checkpoints",
        ))
    }
    /// Full invariant check (O(pages)); panics on a violation.
    fn check(&self);
}
