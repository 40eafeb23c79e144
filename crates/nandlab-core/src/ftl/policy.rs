//! The page FTL's policy seams (docs/ALGORITHMS.md §2.1–2.2): what a victim-selection policy and a
//! placement must answer, and the typed specs a configuration resolves them to. The traits live
//! beside the mechanism that calls them; the policies themselves (`gc`, `placement`) depend on
//! these shared types, never the other way round.

use std::fmt;

use crate::error::ConfigError;
use crate::flash::{BlockId, Geometry, Lpn};
use crate::ftl::block_table::BlockTable;

/// Outcome of one victim search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Selection {
    pub block: BlockId,
    /// The search hit `ftl.victim_scan_limit` and returned the best block seen so far.
    pub capped: bool,
}

pub trait VictimPolicy: Send {
    fn name(&self) -> &'static str;
    /// Picks a closed block to clean, or `None` when there is no closed block.
    fn select(&mut self, table: &BlockTable, now_ns: u64) -> Option<Selection>;
}

/// A cleaning policy with its parameters resolved (`ftl.cleaning` and its keys): builds the
/// policy for one device.
pub trait CleaningSpec: fmt::Debug + Send + Sync {
    fn name(&self) -> &'static str;
    /// The policy, its random choices (if any) seeded from `seed`.
    fn build(&self, seed: u64) -> Box<dyn VictimPolicy>;
}

/// Where a mapped page lives now and since when.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageState {
    pub region: u8,
    /// Simulated time the page entered its region (only tracked when the placement asks).
    pub entered_ns: u64,
}

pub trait Placement: Send {
    fn name(&self) -> &'static str;
    fn regions(&self) -> u32;
    /// The FTL keeps each page's region entry time only for placements that need it.
    fn needs_residence_time(&self) -> bool {
        false
    }
    /// Region for a host write of `lpn`; `current` is `None` for a never-written page.
    fn host_write(&mut self, lpn: Lpn, current: Option<PageState>, now_ns: u64) -> u8;
    /// Region for a valid page the cleaner moves out of a victim block.
    fn cleaner_copy(&mut self, lpn: Lpn, current: PageState, now_ns: u64) -> u8;
    /// Whether the hottest region (`regions() - 1`) is RAM rather than flash (DEB's Extra
    /// Buffer Region, DAC's RAM region): the page FTL keeps its pages in a `RamRegion`, updates
    /// them in place and writes them back when it fills.
    fn ram_region(&self) -> bool {
        false
    }
    /// Flash region for a page the FTL writes back from the RAM region. Default: the next
    /// colder region (DAC's demotion).
    fn ram_write_back(&mut self, _lpn: Lpn, current: PageState, _now_ns: u64) -> u8 {
        current.region - 1
    }
    /// Whether the placement picks the cleaner's victims itself (MiDAS's per-group FIFO and
    /// greedy): the page FTL then asks `select_victim` before its cleaning policy and reports
    /// every block it closes (`block_closed`). Off by default: nothing else changes.
    fn selects_victims(&self) -> bool {
        false
    }
    /// The closed block to clean next, or `None` to leave it to the cleaning policy. Only
    /// called when `selects_victims`.
    fn select_victim(&mut self, _table: &BlockTable) -> Option<BlockId> {
        None
    }
    /// A block of `region` was filled and closed. Only called when `selects_victims`.
    fn block_closed(&mut self, _block: BlockId, _region: u8) {}
}

/// A placement with its parameters resolved (`ftl.placement` and its keys): what the page FTL
/// and the device's assembly need to know about it before it runs, and how it builds itself.
pub trait PlacementSpec: fmt::Debug + Send + Sync {
    fn name(&self) -> &'static str;
    /// Flash regions (logs); a RAM region is extra.
    fn regions(&self) -> u32;
    /// How many different logs the valid pages of one victim block can be copied into, at
    /// most. The cleaner's free-block reserve must exceed it: each of those logs may need a
    /// fresh block before the victim is erased.
    fn cleaner_destinations_max(&self) -> u32 {
        1
    }
    /// Bytes of the RAM region above the flash regions (DEB's EBR, DAC's RAM region); 0: none.
    fn ram_region_bytes(&self) -> u64 {
        0
    }
    /// The key that sizes the RAM region, for error messages.
    fn ram_region_key(&self) -> &'static str {
        ""
    }
    /// The RAM region's write-back threshold, a fraction of it (rule 5).
    fn ram_write_back_threshold(&self) -> f64 {
        1.0
    }
    /// Erased blocks move between regions by wear (DEB's wear-aware allocation).
    fn wear_aware_allocation(&self) -> bool {
        false
    }
    /// The placement needs the workload's future (next-write distances of every host page
    /// write): the runner pre-computes them, and no buffer may reorder the writes it foresees.
    fn needs_future(&self) -> bool {
        false
    }
    /// Bytes the placement keeps per logical page (for the memory estimate).
    fn bytes_per_logical_page(&self) -> u64 {
        0
    }
    /// The placement for a device of `geometry`; `ram_region_pages` > 0 when the page FTL
    /// keeps a RAM region; `future` as `needs_future` describes.
    fn build(
        &self,
        geometry: &Geometry,
        ram_region_pages: u32,
        future: Option<Vec<u32>>,
    ) -> Result<Box<dyn Placement>, ConfigError>;
}
