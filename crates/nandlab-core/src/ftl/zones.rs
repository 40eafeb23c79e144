//! Mapping-table zones: an FTL whose translation table is only partly resident in RAM.
//!
//! The geometry paper (its Figure 6; docs/PAPERS.md, docs/ALGORITHMS.md §9) finds SSDs that keep
//! the mapping table of one *zone* of logical space in RAM at a time: a request to another zone
//! first loads that zone's table from flash, so two reads A, B take longer once B falls in another
//! zone than A (the zone probe). This module gives every FTL kind that behaviour, demand-loaded as
//! in DFTL:
//!
//! - logical space is cut into zones of `ftl.mapping_zone_bytes` (a whole number of the FTL's
//!   mapping units: pages for `page`, logical blocks for the hybrid kinds);
//! - at most `ftl.mapping_cache_zones` zones are resident, replaced least recently used;
//! - a host page read, write or trim (as the FTL sees it: behind any RAM buffer) of a
//!   non-resident zone first writes back the evicted zone if its table changed (page programs)
//!   and then loads the zone's table (page reads). A table takes
//!   `ceil(units per zone × 4 bytes / page size)` flash pages (a 4-byte entry per mapping unit).
//!
//! Table pages are counted apart (`FlashCounters::mapping_reads` and `mapping_programs`: metrics
//! `mapping_read_pages`, `mapping_program_pages`, `mapping_zone_loads`, `mapping_zone_write_backs`)
//! and their programs are part of write amplification; their time is the flash time `Op::Mapping`.
//! Modelled limits (documented in README.md's configuration table, `ftl.mapping_zone_bytes`): table
//! pages live in a reserved area outside the data blocks, whose space and cleaning are not
//! modelled; the cleaner's, merges' and wear leveling's own mapping updates are not charged (DFTL
//! batches them per victim); the table is a cost model only — the FTL keeps its whole table, so
//! recovery and every counter of the data path are unchanged. Without `ftl.mapping_zone_bytes` the
//! FTL is not wrapped at all.

use super::{Ftl, FtlCounters};
use crate::fastdiv::Divisor;
use crate::flash::{Flash, Geometry, Lpn, NONE};

/// Bytes of one mapping entry in a table page.
pub const ENTRY_BYTES: u64 = 4;

/// Zone cache counters (in `FtlCounters::zones`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ZoneCounters {
    /// Zone tables loaded from flash (misses).
    pub loads: u64,
    /// Changed zone tables written back on eviction.
    pub write_backs: u64,
}

impl std::ops::Sub for ZoneCounters {
    type Output = Self;
    fn sub(self, o: Self) -> Self {
        Self { loads: self.loads - o.loads, write_backs: self.write_backs - o.write_backs }
    }
}

/// The shape of the zones over one FTL (checked by `ftl::spec`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ZoneShape {
    /// Logical pages per zone.
    pub pages_per_zone: u64,
    /// Flash pages one zone's table occupies.
    pub table_pages: u32,
    /// Zones resident at most.
    pub cache_zones: u32,
    /// Zones over the logical space.
    pub zones: u32,
}

impl ZoneShape {
    /// The shape for zones of `zone_bytes` over `geometry`, mapping units of `unit_pages` pages
    /// (1 for the page FTL, a block's pages for the hybrid kinds).
    #[must_use]
    pub fn new(geometry: &Geometry, zone_bytes: u64, unit_pages: u64, cache_zones: u32) -> Self {
        let pages_per_zone = zone_bytes / geometry.page_size_bytes;
        let units = pages_per_zone.div_ceil(unit_pages);
        let table_pages = (units * ENTRY_BYTES).div_ceil(geometry.page_size_bytes).max(1);
        let zones = geometry.logical_pages.div_ceil(pages_per_zone);
        Self {
            pages_per_zone,
            table_pages: u32::try_from(table_pages).unwrap_or(u32::MAX),
            cache_zones,
            zones: u32::try_from(zones).unwrap_or(u32::MAX),
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Slot {
    zone: u32,
    dirty: bool,
    /// Last use, for least-recently-used replacement.
    used: u64,
}

/// Which zones are resident.
#[derive(Clone, Debug)]
pub struct ZoneCache {
    shape: ZoneShape,
    per_zone: Divisor,
    /// Zone → slot (`NONE`: not resident).
    slot_of: Vec<u32>,
    slots: Vec<Slot>,
    clock: u64,
    /// The zone of the last access (its slot is `last_slot`): the common case costs a compare.
    last_zone: u32,
    last_slot: u32,
    counters: ZoneCounters,
}

impl ZoneCache {
    #[must_use]
    pub fn new(shape: ZoneShape) -> Self {
        assert!(shape.pages_per_zone > 0 && shape.cache_zones > 0, "zone shape {shape:?}");
        Self {
            shape,
            per_zone: Divisor::new(shape.pages_per_zone),
            slot_of: vec![NONE; shape.zones as usize],
            slots: Vec::with_capacity(shape.cache_zones.min(shape.zones) as usize),
            clock: 0,
            last_zone: NONE,
            last_slot: NONE,
            counters: ZoneCounters::default(),
        }
    }

    #[must_use]
    pub fn counters(&self) -> ZoneCounters {
        self.counters
    }

    /// Makes the zone of `lpn` resident (loading its table, writing back the one it evicts),
    /// marks it changed when `dirty`. Table page operations go to `flash`; the request's
    /// following operations wait for the load.
    #[inline]
    pub fn touch(&mut self, flash: &mut Flash, lpn: Lpn, dirty: bool) {
        let zone = self.per_zone.quotient(u64::from(lpn)) as u32;
        self.clock += 1;
        let slot = if zone == self.last_zone { self.last_slot } else { self.find(flash, zone) };
        let s = &mut self.slots[slot as usize];
        s.used = self.clock;
        s.dirty |= dirty;
    }

    #[inline(never)]
    fn find(&mut self, flash: &mut Flash, zone: u32) -> u32 {
        let mut slot = self.slot_of[zone as usize];
        if slot == NONE {
            slot = self.load(flash, zone);
        }
        self.last_zone = zone;
        self.last_slot = slot;
        slot
    }

    fn load(&mut self, flash: &mut Flash, zone: u32) -> u32 {
        let pages = self.shape.table_pages;
        // Table pages of zone z start on plane z × pages (spread, so that a parallel device
        // loads a table on several planes at once).
        let first_plane = |z: u32| z.wrapping_mul(pages);
        let slot = if (self.slots.len() as u32) < self.shape.cache_zones {
            self.slots.push(Slot { zone, dirty: false, used: 0 });
            self.slots.len() as u32 - 1
        } else {
            let (i, victim) = self
                .slots
                .iter()
                .enumerate()
                .min_by_key(|(_, s)| s.used)
                .map(|(i, s)| (i as u32, *s))
                .expect("a full cache has slots");
            if victim.dirty {
                flash.mapping_pages(true, pages, first_plane(victim.zone));
                self.counters.write_backs += 1;
            }
            self.slot_of[victim.zone as usize] = NONE;
            self.slots[i as usize] = Slot { zone, dirty: false, used: 0 };
            i
        };
        self.slot_of[zone as usize] = slot;
        let loaded = flash.mapping_pages(false, pages, first_plane(zone));
        flash.engine_mut().set_after(loaded);
        self.counters.loads += 1;
        slot
    }

    /// Full check of the slot index.
    pub fn check(&self) {
        assert!(self.slots.len() <= self.shape.cache_zones as usize);
        for (i, s) in self.slots.iter().enumerate() {
            assert_eq!(self.slot_of[s.zone as usize], i as u32, "zone slot index");
        }
        let resident = self.slot_of.iter().filter(|&&s| s != NONE).count();
        assert_eq!(resident, self.slots.len(), "resident zones");
    }
}

/// An FTL behind a partly resident mapping table (see the module doc).
pub struct ZonedFtl {
    inner: Box<dyn Ftl>,
    cache: ZoneCache,
}

impl ZonedFtl {
    #[must_use]
    pub fn new(inner: Box<dyn Ftl>, shape: ZoneShape) -> Self {
        Self { inner, cache: ZoneCache::new(shape) }
    }
}

impl Ftl for ZonedFtl {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn geometry(&self) -> &Geometry {
        self.inner.geometry()
    }
    fn write_page(&mut self, lpn: Lpn, now_ns: u64, data: Option<&[u8]>) {
        self.cache.touch(self.inner.flash_mut(), lpn, true);
        self.inner.write_page(lpn, now_ns, data);
    }
    fn read_page(&mut self, lpn: Lpn, now_ns: u64, data: Option<&mut [u8]>) -> bool {
        self.cache.touch(self.inner.flash_mut(), lpn, false);
        self.inner.read_page(lpn, now_ns, data)
    }
    fn trim_page(&mut self, lpn: Lpn, now_ns: u64) {
        // Discarding an unmapped page changes nothing in the table.
        let mapped = self.inner.is_mapped(lpn);
        self.cache.touch(self.inner.flash_mut(), lpn, mapped);
        self.inner.trim_page(lpn, now_ns);
    }
    fn is_mapped(&self, lpn: Lpn) -> bool {
        self.inner.is_mapped(lpn)
    }
    fn locate(&self, lpn: Lpn) -> Option<(crate::flash::Ppn, u8)> {
        self.inner.locate(lpn)
    }
    fn flash(&self) -> &Flash {
        self.inner.flash()
    }
    fn flash_mut(&mut self) -> &mut Flash {
        self.inner.flash_mut()
    }
    fn counters(&self) -> FtlCounters {
        FtlCounters { zones: self.cache.counters(), ..self.inner.counters() }
    }
    fn erase_counts(&self) -> &[u32] {
        self.inner.erase_counts()
    }
    fn wear_leveling(&self) -> Option<crate::wear::WearLevelingStats> {
        self.inner.wear_leveling()
    }
    fn lifetime(&self) -> crate::wear::LifetimeState {
        self.inner.lifetime()
    }
    fn table_memory_bytes(&self) -> u64 {
        // The model charges table pages, not RAM: the FTL still keeps its whole table.
        self.inner.table_memory_bytes()
    }
    fn takes_prefetch_hints(&self) -> bool {
        self.inner.takes_prefetch_hints()
    }
    fn prefetch_translation(&self, lpn: Lpn) {
        self.inner.prefetch_translation(lpn);
    }
    fn prefetch_mapped(&self, lpn: Lpn) {
        self.inner.prefetch_mapped(lpn);
    }
    fn sync(&mut self) -> Result<(), crate::error::MediaError> {
        self.inner.sync()
    }
    fn wants_background_clean(&self) -> bool {
        self.inner.wants_background_clean()
    }
    fn background_clean(&mut self, now_ns: u64) -> bool {
        self.inner.background_clean(now_ns)
    }
    fn flush_ram_region(&mut self, now_ns: u64, reason: super::ram_region::RamWriteBack) -> u64 {
        self.inner.flush_ram_region(now_ns, reason)
    }
    fn ram_region(&self) -> Option<super::ram_region::RamRegionInfo> {
        self.inner.ram_region()
    }
    fn checkpoint(&mut self, now_ns: u64) -> Result<(), crate::error::MediaError> {
        self.inner.checkpoint(now_ns)
    }
    fn check(&self) {
        self.inner.check();
        self.cache.check();
    }
}
