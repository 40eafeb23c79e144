//! Allocation (`ftl.allocation`): which plane each page the FTL writes goes to — host writes
//! (with the buffers' write-backs and a RAM region's write-backs) and the cleaner's copies — and,
//! for the block-mapped FTLs, which plane each new block comes from (the
//! virtual-platform report's hardware spreads writes over its gangs, chips and planes).
//!
//! The FTL keeps, per region (log), one open block on every plane and a free list per plane,
//! and it asks the allocator for a plane among those that can take the write (`room`): for a
//! host write, planes whose open block has room or that have a free block; for a cleaner copy,
//! planes whose open block has room (a new block is opened only when none has, so one cleaning
//! step opens at most one block per destination region, the bound `ftl.gc_free_blocks_min`
//! rests on). The FTL's mapping, cleaning and wear-leveling algorithms do not change: only
//! where pages land, and so which dies work in parallel.
//!
//! Adding a policy: one file here with its `ENTRY` and one line in the registry.

use std::sync::Arc;

use crate::engine::{DieLoads, Engine, Hardware};
use crate::error::ConfigError;
use crate::spec::{self, Family, Named, Param, Params, Tables};

/// A resolved allocation policy.
pub trait AllocationSpec: Send + Sync + std::fmt::Debug {
    fn name(&self) -> &'static str;
    fn build(&self, hw: &Hardware) -> Box<dyn Allocator>;
    /// The policy's choices read the sim-engine's state (die loads, i.e. time): refused with
    /// `run.timing = "off"` on hardware with more than one plane.
    fn reads_time(&self) -> bool {
        false
    }
}

/// A set of planes (a bit per plane; the first 64 in one word, the common case).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PlaneSet {
    low: u64,
    high: Vec<u64>,
}

impl PlaneSet {
    /// An empty set over `planes` planes.
    #[must_use]
    pub fn new(planes: u32) -> Self {
        Self { low: 0, high: vec![0; (planes.saturating_sub(64) as usize).div_ceil(64)] }
    }

    #[inline(always)]
    #[must_use]
    pub fn contains(&self, plane: u32) -> bool {
        if plane < 64 {
            self.low & (1 << plane) != 0
        } else {
            self.high[(plane / 64 - 1) as usize] & (1 << (plane % 64)) != 0
        }
    }

    #[inline]
    pub fn insert(&mut self, plane: u32) {
        if plane < 64 {
            self.low |= 1 << plane;
        } else {
            self.high[(plane / 64 - 1) as usize] |= 1 << (plane % 64);
        }
    }

    #[inline]
    pub fn remove(&mut self, plane: u32) {
        if plane < 64 {
            self.low &= !(1 << plane);
        } else {
            self.high[(plane / 64 - 1) as usize] &= !(1 << (plane % 64));
        }
    }

    #[inline]
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.low == 0 && self.high.iter().all(|&w| w == 0)
    }

    /// Whether any of the `count` planes from `first` is in the set.
    #[inline(always)]
    #[must_use]
    pub fn any_in(&self, first: u32, count: u32) -> bool {
        if first + count <= 64 {
            let ones = if count == 64 { u64::MAX } else { (1u64 << count) - 1 };
            self.low & (ones << first) != 0
        } else {
            (first..first + count).any(|p| self.contains(p))
        }
    }

    /// Planes in the set.
    #[must_use]
    pub fn len(&self) -> u32 {
        self.low.count_ones() + self.high.iter().map(|w| w.count_ones()).sum::<u32>()
    }
}

/// The planes that can take a write: those in `a`, or in `b` when given.
#[derive(Clone, Copy, Debug)]
pub struct Room<'a> {
    pub a: &'a PlaneSet,
    pub b: Option<&'a PlaneSet>,
}

impl Room<'_> {
    #[inline(always)]
    #[must_use]
    pub fn contains(&self, plane: u32) -> bool {
        self.a.contains(plane) || self.b.is_some_and(|b| b.contains(plane))
    }

    /// Whether any of the `count` planes from `first` has room.
    #[inline(always)]
    #[must_use]
    pub fn any_in(&self, first: u32, count: u32) -> bool {
        self.a.any_in(first, count) || self.b.is_some_and(|b| b.any_in(first, count))
    }

    /// The planes with room as one word, when the device has at most 64 planes.
    #[inline(always)]
    #[must_use]
    pub fn word(&self) -> Option<u64> {
        if !self.a.high.is_empty() {
            return None;
        }
        Some(self.a.low | self.b.map_or(0, |b| b.low))
    }
}

/// Picks planes. At least one plane has room (the FTL's reserve guarantees it: a call where
/// none has is an FTL bug).
pub trait Allocator: Send {
    fn name(&self) -> &'static str;
    /// The plane for a host page write of `key` (the LPN; for block-mapped FTLs, the logical
    /// block or group a new block is for; `u32::MAX` when none applies).
    fn host(&mut self, engine: &Engine, key: u32, room: Room<'_>) -> u32;
    /// The plane for a copy of a page the cleaner moves out of a block on `victim_plane`.
    fn cleaner(&mut self, engine: &Engine, victim_plane: u32, room: Room<'_>) -> u32;
}

/// One registered policy: its `ftl.allocation` name, the parameters it declares, and how it
/// resolves them into its spec.
#[derive(Clone, Copy, Debug)]
pub struct AllocationEntry {
    pub name: &'static str,
    pub params: &'static [Param],
    pub resolve: fn(&mut Params<'_>) -> Result<Arc<dyn AllocationSpec>, ConfigError>,
}

impl Named for AllocationEntry {
    fn name(&self) -> &'static str {
        self.name
    }
    fn params(&self) -> &'static [Param] {
        self.params
    }
}

// The registry: one line per policy.
crate::spec::registry! {
    AllocationEntry;
    pub dynamic,
    pub round_robin,
    pub static_striping,
}

/// `ftl.allocation`, resolved.
pub fn resolve(name: &str, tables: &mut Tables) -> Result<Arc<dyn AllocationSpec>, ConfigError> {
    (spec::lookup(REGISTRY, name, "ftl.allocation")?.resolve)(&mut tables.params("ftl"))
}

/// The family's declarations (`Tables::settle`).
#[must_use]
pub fn family() -> Family {
    Family::of("ftl.allocation", REGISTRY)
}

/// The registered names.
#[must_use]
pub fn names() -> Vec<&'static str> {
    spec::names(REGISTRY)
}

/// The planes in channel-way-die-plane order with their dies, and a cursor into them: the
/// walk every policy shares.
#[derive(Clone, Debug)]
struct Walk {
    /// `(plane, die)` in CWDP order.
    order: Vec<(u32, u32)>,
    cursor: usize,
    /// The dies in CWDP order (gang, then chip, then die) and `least_loaded`'s cursor in it.
    dies: Vec<u32>,
    die_cursor: usize,
    /// Per die: the plane (from 0 within the die) `least_loaded` tries first next time.
    next_plane: Vec<u32>,
    planes_per_die: u32,
}

impl Walk {
    fn new(hw: &Hardware) -> Self {
        let order: Vec<(u32, u32)> =
            hw.cwdp_order().into_iter().map(|p| (p, hw.die_of_plane(p))).collect();
        // Plane 0 of every die comes first in CWDP order, in die CWDP order.
        let dies = order[..hw.dies() as usize].iter().map(|&(_, d)| d).collect();
        Self {
            order,
            cursor: 0,
            dies,
            die_cursor: 0,
            next_plane: vec![0; hw.dies() as usize],
            planes_per_die: hw.planes_per_die,
        }
    }

    /// The plane at position `key mod planes` of the order.
    fn at(&self, key: u32) -> u32 {
        self.order[key as usize % self.order.len()].0
    }

    /// Positions from the cursor round to just before it.
    #[inline]
    fn positions(&self) -> impl Iterator<Item = usize> {
        (self.cursor..self.order.len()).chain(0..self.cursor)
    }

    #[inline]
    fn picked(&mut self, k: usize) -> u32 {
        self.cursor = if k + 1 == self.order.len() { 0 } else { k + 1 };
        self.order[k].0
    }

    /// The least loaded die with a plane with room (`Engine::die_load_ns`), scanning the dies
    /// in CWDP order from a cursor that then moves past the pick, and that die's next plane
    /// with room: equally loaded dies (an idle device) are taken in turn, spreading over the
    /// buses first, and a die's planes in turn — on an idle device, exactly the CWDP order of
    /// planes. A die with nothing to do (load = the engine's clock, the least possible) ends
    /// the scan at once.
    #[inline]
    fn least_loaded(&mut self, engine: &Engine, room: Room<'_>) -> u32 {
        let ppd = self.planes_per_die;
        let n = self.dies.len();
        let loads = engine.die_loads();
        // Planes that fit one word (the usual case): the room of a die is a bit-field test.
        let best_k = if let Some(mask) = room.word() {
            let ones = if ppd >= 64 { u64::MAX } else { (1u64 << ppd) - 1 };
            self.scan_dies(&loads, |die| (mask >> (die * ppd)) & ones != 0)
        } else {
            self.scan_dies(&loads, |die| room.any_in(die * ppd, ppd))
        };
        assert!(best_k < n, "no plane can take the write: the FTL's reserve is broken");
        self.die_cursor = if best_k + 1 == n { 0 } else { best_k + 1 };
        let die = self.dies[best_k];
        let first = die * ppd;
        let mut p = self.next_plane[die as usize];
        while !room.contains(first + p) {
            p = if p + 1 == ppd { 0 } else { p + 1 };
        }
        self.next_plane[die as usize] = if p + 1 == ppd { 0 } else { p + 1 };
        first + p
    }

    /// `least_loaded`'s scan: the position of the least loaded die for which `has_room`
    /// holds, from the die cursor round (`usize::MAX` if none); a die at the engine's clock ends
    /// it. Generic over the room test so that each form compiles to its own tight loop.
    #[inline(always)]
    fn scan_dies(&self, loads: &DieLoads<'_>, has_room: impl Fn(u32) -> bool) -> usize {
        let dies = &self.dies[..];
        let n = dies.len();
        let (mut best_load, mut best_k) = (u64::MAX, usize::MAX);
        let idle = loads.idle_ns();
        // A wrapping index rather than a chain of two ranges: this runs for every page written.
        let mut k = self.die_cursor;
        for _ in 0..n {
            let die = dies[k];
            if has_room(die) {
                let load = loads.load_ns(die);
                if load < best_load {
                    (best_load, best_k) = (load, k);
                    if load <= idle {
                        break;
                    }
                }
            }
            k += 1;
            if k == n {
                k = 0;
            }
        }
        best_k
    }

    /// The next plane with room from the cursor.
    #[inline]
    fn next_in_turn(&mut self, room: Room<'_>) -> u32 {
        let k = self
            .positions()
            .find(|&k| room.contains(self.order[k].0))
            .expect("no plane can take the write: the FTL's reserve is broken");
        self.picked(k)
    }
}

#[cfg(test)]
mod tests;
