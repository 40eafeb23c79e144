//! SepBIT: data placement by inferred block invalidation time (SepBIT paper, §3–§4;
//! docs/ALGORITHMS.md §11.1). Time is the FTL's write clock (`WriteClock`), in host page writes.
//!
//! Classes (class 0 is the shortest-lived; class c lives in region `regions − 1 − c`, so the
//! Top region holds the hottest data as everywhere in nandlab):
//! - host writes: class 0 if the page's previous host write is less than ℓ writes ago, else
//!   class 1 (also a page never written, trimmed, or last written before a restart);
//! - cleaner copies out of a class-0 block: class 2;
//! - other cleaner copies: by age a = now − the page's last host write, class 3 if a < 4ℓ,
//!   class 4 if a < 16ℓ, …, the last class catching the rest.
//!
//! ℓ is the average lifespan (write clock at collection − write clock at opening) of the last
//! 16 class-0 blocks the cleaner collected; infinite until 16 have been. As the reference
//! simulator does, "less than ℓ writes ago" is also bounded by the recent-write window it keeps
//! as a FIFO: the window grows by one per host write and is trimmed to at most min(mapped
//! pages, ℓ) (by at most two entries per write). Only the window's length matters, so nandlab
//! keeps that number instead of the FIFO, and the page's last host write comes from the FTL
//! (`PageState::last_write`).
//!
//! Semantic differences from the reference simulator, pinned by tests below:
//! - a block's lifespan starts when its first page is programmed; the simulator starts it when
//!   the previous segment of the class was sealed (a few writes earlier for class 0);
//! - the window's cap uses the mapped logical pages; the simulator's count also includes the
//!   invalid pages of open segments (it only matters before ℓ is known).

use std::sync::Arc;

use super::{Collected, PageState, Placement, PlacementEntry, PlacementSpec, WriteClock};
use crate::error::ConfigError;
use crate::flash::{Geometry, Lpn};
use crate::ftl::FtlConfig;
use crate::spec::{check, Param, Params};

/// SepBIT's parameters, in its own table `[sepbit]` (left out of configurations that do not
/// choose it):
/// - `sepbit.lifespan_blocks`: how many collected class-0 blocks ℓ averages. Default 16.
/// - `sepbit.age_ratio`: the ratio between the age classes' bounds (4ℓ, 16ℓ, …). Default 4.
pub(super) const ENTRY: PlacementEntry = PlacementEntry {
    name: "sepbit",
    params: &[Param::omitted("sepbit", "lifespan_blocks"), Param::omitted("sepbit", "age_ratio")],
    resolve,
};

#[derive(Clone, Copy, Debug)]
struct SepBitSpec {
    regions: u32,
    lifespan_blocks: u32,
    age_ratio: f64,
}

fn resolve(f: &mut FtlConfig, params: &mut Params<'_>) -> Result<Arc<dyn PlacementSpec>, ConfigError> {
    let regions = *f.regions.get_or_insert(6);
    check(
        (4..=64).contains(&regions),
        "ftl.regions",
        "sepbit needs at least 4 classes (two for host writes, two for the cleaner's)",
    )?;
    let mut t = params.table("sepbit");
    let lifespan_blocks = t.u32("lifespan_blocks", 16)?;
    check(lifespan_blocks >= 1, "sepbit.lifespan_blocks", "must be at least 1")?;
    let age_ratio = t.f64("age_ratio", 4.0)?;
    check(age_ratio > 1.0, "sepbit.age_ratio", "must be greater than 1")?;
    Ok(Arc::new(SepBitSpec { regions, lifespan_blocks, age_ratio }))
}

impl PlacementSpec for SepBitSpec {
    fn name(&self) -> &'static str {
        ENTRY.name
    }
    fn regions(&self) -> u32 {
        self.regions
    }
    /// A class-0 victim's pages all go to class 2; another victim's to the age classes 3….
    fn cleaner_destinations_max(&self) -> u32 {
        self.regions - 3
    }
    /// Each page's last host write, which the FTL keeps for it (`PageState::last_write`).
    fn bytes_per_logical_page(&self) -> u64 {
        4
    }
    fn build(&self, _: &Geometry, _: u32, _: Option<Vec<u32>>) -> Result<Box<dyn Placement>, ConfigError> {
        Ok(Box::new(SepBit::new(self.regions, self.lifespan_blocks, self.age_ratio)))
    }
}

pub struct SepBit {
    regions: u32,
    lifespan_blocks: u32,
    age_ratio: f64,
    clock: WriteClock,
    /// ℓ, in host writes (infinite until `lifespan_blocks` class-0 blocks were collected).
    lifespan: f64,
    lifespans_sum: f64,
    lifespans_seen: u32,
    /// Length of the recent-write window.
    window: u64,
    /// Class of the block being collected.
    collecting_class: u32,
}

impl SepBit {
    #[must_use]
    pub fn new(regions: u32, lifespan_blocks: u32, age_ratio: f64) -> Self {
        assert!((4..=64).contains(&regions) && lifespan_blocks >= 1 && age_ratio > 1.0);
        Self {
            regions,
            lifespan_blocks,
            age_ratio,
            clock: WriteClock::default(),
            lifespan: f64::INFINITY,
            lifespans_sum: 0.0,
            lifespans_seen: 0,
            window: 0,
            collecting_class: 1,
        }
    }

    /// ℓ, in host writes (infinite until known).
    #[cfg(test)]
    fn lifespan(&self) -> f64 {
        self.lifespan
    }

    fn region(&self, class: u32) -> u8 {
        (self.regions - 1 - class) as u8
    }

    fn class(&self, region: u8) -> u32 {
        self.regions - 1 - u32::from(region)
    }
}

impl Placement for SepBit {
    fn name(&self) -> &'static str {
        "sepbit"
    }
    fn regions(&self) -> u32 {
        self.regions
    }
    fn needs_write_clock(&self) -> bool {
        true
    }
    fn tick(&mut self, clock: WriteClock) {
        self.clock = clock;
    }
    fn collecting(&mut self, block: Collected) {
        let class = self.class(block.region);
        self.collecting_class = class;
        if class == 0 {
            self.lifespans_sum += self.clock.host_writes.saturating_sub(block.opened_at) as f64;
            self.lifespans_seen += 1;
            if self.lifespans_seen == self.lifespan_blocks {
                self.lifespan = self.lifespans_sum / f64::from(self.lifespan_blocks);
                self.lifespans_sum = 0.0;
                self.lifespans_seen = 0;
            }
        }
    }

    fn host_write(&mut self, _lpn: Lpn, current: Option<PageState>, _now_ns: u64) -> u8 {
        let bound = self.lifespan.min(self.window as f64);
        let short = current
            .and_then(|p| self.clock.since(p.last_write))
            .is_some_and(|ago| (ago as f64) < bound);
        // The window takes this write, then is trimmed.
        self.window += 1;
        if self.window as f64 > self.lifespan.min(self.clock.mapped_pages as f64) {
            self.window -= 1;
            if self.window as f64 > self.lifespan {
                self.window -= 1;
            }
        }
        self.region(u32::from(!short))
    }

    fn cleaner_copy(&mut self, _lpn: Lpn, current: PageState, _now_ns: u64) -> u8 {
        if self.collecting_class == 0 {
            return self.region(2);
        }
        // A page last written before a restart: as old as the clock.
        let age = self.clock.since(current.last_write).unwrap_or(self.clock.host_writes) as f64;
        let mut class = 3;
        let mut bound = self.lifespan * self.age_ratio;
        while age >= bound && class < self.regions - 1 {
            bound *= self.age_ratio;
            class += 1;
        }
        self.region(class)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clock(host_writes: u64, mapped_pages: u64) -> WriteClock {
        WriteClock { host_writes, mapped_pages }
    }
    fn page(region: u8, last_write: u32) -> Option<PageState> {
        Some(PageState { region, entered_ns: 0, last_write })
    }
    fn collect(s: &mut SepBit, region: u8, opened_at: u64) {
        s.collecting(Collected { region, opened_at, valid_pages: 1, pages_per_block: 4 });
    }

    /// Six classes: class c is region 5 − c.
    #[test]
    fn host_writes_split_by_the_window_until_the_lifespan_is_known() {
        let mut s = SepBit::new(6, 2, 4.0);
        // Writes 1..=3 of LPNs 0, 1, 2: all new → class 1 (region 4). The window follows the
        // mapped pages before each write: 0 → 1 → 1 … trimmed to min(mapped, ℓ).
        for (i, lpn) in [0u32, 1, 2].into_iter().enumerate() {
            let i = i as u64;
            s.tick(clock(i + 1, i));
            assert_eq!(s.host_write(Lpn::new(lpn), None, 0), 4);
            assert_eq!(s.window, i, "the window is capped by the mapped pages");
        }
        // Write 4 rewrites LPN 2 (last written at 3): 1 write ago < min(∞, window 2) → class 0.
        s.tick(clock(4, 3));
        assert_eq!(s.host_write(Lpn::new(2), page(4, 3), 0), 5);
        // Write 5 rewrites LPN 0 (at 1): 4 ago, window 3 → class 1.
        s.tick(clock(5, 3));
        assert_eq!(s.host_write(Lpn::new(0), page(4, 1), 0), 4);
        // A page last written before a restart (0) is class 1 whatever the window.
        s.tick(clock(6, 3));
        assert_eq!(s.host_write(Lpn::new(1), page(4, 0), 0), 4);
    }

    #[test]
    fn lifespan_from_collected_class0_blocks_and_the_cleaners_classes() {
        let mut s = SepBit::new(6, 2, 4.0);
        s.tick(clock(100, 50));
        collect(&mut s, 5, 60); // class 0: lifespan 40
        assert!(s.lifespan().is_infinite(), "one of two");
        assert_eq!(s.cleaner_copy(Lpn::new(0), page(5, 1).unwrap(), 0), 3, "class 0 → class 2");
        collect(&mut s, 4, 0); // class 1: not counted
        // Before ℓ is known every age is below ∞: class 3 (region 2).
        assert_eq!(s.cleaner_copy(Lpn::new(0), page(4, 1).unwrap(), 0), 2);
        s.tick(clock(200, 50));
        collect(&mut s, 5, 180); // lifespan 20 → ℓ = (40 + 20) / 2 = 30
        assert_eq!(s.lifespan(), 30.0);
        s.tick(clock(1000, 50));
        collect(&mut s, 3, 0); // class 2 victim → age classes: bounds 120, 480, 1920
        let age = |s: &mut SepBit, a: u32| s.cleaner_copy(Lpn::new(0), page(3, 1000 - a).unwrap(), 0);
        assert_eq!(age(&mut s, 119), 2, "class 3");
        assert_eq!(age(&mut s, 120), 1, "class 4");
        assert_eq!(age(&mut s, 479), 1);
        assert_eq!(age(&mut s, 480), 0, "class 5");
        // Host writes now: the window is trimmed towards ℓ = 30 by at most two a write.
        s.window = 33;
        s.tick(clock(1001, 50));
        assert_eq!(s.host_write(Lpn::new(9), page(4, 990), 0), 5, "11 ago < min(30, 33)");
        assert_eq!(s.window, 32);
        s.tick(clock(1002, 50));
        assert_eq!(s.host_write(Lpn::new(9), page(5, 971), 0), 4, "31 ago ≥ 30");
        assert_eq!(s.window, 31);
        s.tick(clock(5000, 50));
        let old = s.cleaner_copy(Lpn::new(0), page(3, 1).unwrap(), 0);
        assert_eq!(old, 0, "age 4999 ≥ 1920: the last class catches the rest");
    }

    /// Semantic difference pinned: the lifespan of a class-0 block runs from its first page's
    /// write clock (`Collected::opened_at`), not from when the previous class-0 block was sealed.
    #[test]
    fn lifespan_runs_from_the_blocks_first_write() {
        let mut s = SepBit::new(6, 1, 4.0);
        s.tick(clock(1000, 10));
        collect(&mut s, 5, 900);
        assert_eq!(s.lifespan(), 100.0);
    }
}
