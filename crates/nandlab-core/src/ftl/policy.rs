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
    /// The page FTL keeps the write clock in the block table for this policy
    /// (`BlockTable::host_writes`, `BlockTable::closed_at_write`).
    fn needs_write_clock(&self) -> bool {
        false
    }
    /// Its choices read the simulated time (`BlockTable::last_modified_ns`, a block's age in
    /// ns): the table keeps modification times only then, and `run.timing = "off"` is refused.
    /// True unless the policy says otherwise, so a new policy that reads ages works as it is;
    /// one that does not says so to save the table's times and to run untimed. A test runs
    /// every registered policy with and without timing and fails on one that says false but
    /// counts differently untimed.
    fn reads_time(&self) -> bool {
        true
    }
}

/// A cleaning policy with its parameters resolved (`ftl.cleaning` and its keys): builds the
/// policy for one device.
pub trait CleaningSpec: fmt::Debug + Send + Sync {
    fn name(&self) -> &'static str;
    /// The policy, its random choices (if any) seeded from `seed`.
    fn build(&self, seed: u64) -> Box<dyn VictimPolicy>;
    /// Whether the policy it builds reads the simulated time (`VictimPolicy::reads_time`).
    fn reads_time(&self) -> bool {
        self.build(0).reads_time()
    }
}

/// Where a mapped page lives now and since when.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PageState {
    pub region: u8,
    /// Simulated time the page entered its region (only tracked when the placement asks).
    pub entered_ns: u64,
    /// The write clock's low 32 bits (`WriteClock::host_writes`) at the page's last host write:
    /// only tracked when the placement asks (`Placement::needs_last_write`); 0 (unknown)
    /// otherwise, and for a page written before a served drive restarted (the clock restarts
    /// at 0). 32 bits keep the state 16 bytes and the table 4 bytes a page; read it through
    /// `WriteClock::since`.
    pub last_write: u32,
}

/// Time measured in host page writes, which the page FTL keeps for placements that ask
/// (`Placement::needs_write_clock`) and reports before each host write (`Placement::tick`).
/// Placement papers (SepBIT, WARCIP, FADaC; docs/ALGORITHMS.md §11) measure lifespans and ages
/// in written blocks, not in seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriteClock {
    /// Host page writes so far, the one being placed included. Starts at 0 when the FTL is
    /// built or recovered.
    pub host_writes: u64,
    /// Logical pages holding data (written and not trimmed) before this write.
    pub mapped_pages: u64,
}

impl WriteClock {
    /// Host writes since `last_write` (`PageState::last_write`), or `None` if unknown (0). Ages
    /// of 2^32 host writes (16 TiB of 4 KiB pages) or more wrap around.
    #[must_use]
    pub fn since(&self, last_write: u32) -> Option<u64> {
        (last_write != 0).then(|| u64::from((self.host_writes as u32).wrapping_sub(last_write)))
    }
}

/// GC feedback: a closed block the cleaner (or a wear leveler's eviction) is about to empty,
/// reported before any of its pages is copied (`Placement::collecting`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Collected {
    pub region: u8,
    /// The write clock when the block was opened (its first page programmed); 0 for a block
    /// opened before a restart.
    pub opened_at: u64,
    /// Valid pages left: the copies to come.
    pub valid_pages: u32,
    pub pages_per_block: u32,
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
    /// The region `cleaner_copy` would pick, recording nothing: recovery asks it for every page
    /// of an interrupted cleaning step to check the copies fit, then copies them through
    /// `cleaner_copy`, which must answer the same. Default: `cleaner_copy` (placements whose
    /// copies change their own bookkeeping override it).
    fn cleaner_copy_peek(&mut self, lpn: Lpn, current: PageState, now_ns: u64) -> u8 {
        self.cleaner_copy(lpn, current, now_ns)
    }
    /// The placement keeps per-page state of its own, indexed by LPN, that misses the cache on
    /// large devices: the FTL then calls `prefetch` for a host write's LPN as early as it asks
    /// for its translation entry, and for a victim's LPNs before it copies them, so the misses
    /// overlap.
    fn wants_prefetch(&self) -> bool {
        false
    }
    /// Asks for the cache lines of `lpn`'s state (a hint: nothing changes).
    fn prefetch(&self, _lpn: Lpn) {}
    /// The FTL keeps a write clock for this placement (mechanism for the placement papers of
    /// docs/ALGORITHMS.md §11): it reports the clock before each host write (`tick`), keeps each
    /// page's last host write (`PageState::last_write`) and each block's opening time, and
    /// reports blocks that fill up (`filled`) and blocks the cleaner collects (`collecting`).
    /// None of this is on flash: after a restart (a served drive killed or stopped) the clock
    /// starts again at 0, every page's last host write is unknown (0) and every block counts as
    /// opened at 0 — it only steers placement, never which data is current, so nothing written
    /// is lost (the kill -9 harness serves sepbit, warcip and fadac).
    fn needs_write_clock(&self) -> bool {
        false
    }
    /// With the write clock, whether the placement reads `PageState::last_write` (the FTL then
    /// keeps 4 bytes per logical page for it).
    fn needs_last_write(&self) -> bool {
        self.needs_write_clock()
    }
    /// Before the placement decides a host write (`host_write`), with the write clock.
    fn tick(&mut self, _clock: WriteClock) {}
    /// A block of `region` was filled (its last page programmed, by a host write or a cleaner
    /// copy) and closed.
    fn filled(&mut self, _region: u8) {}
    /// The cleaner is about to copy `block`'s valid pages (`cleaner_copy`) and erase it.
    fn collecting(&mut self, _block: Collected) {}
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
    /// Its choices read the simulated time (ages in ns): refused with `run.timing = "off"`.
    /// A test runs every registered placement with and without timing and fails on one whose
    /// counts differ without saying so here.
    fn reads_time(&self) -> bool {
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
