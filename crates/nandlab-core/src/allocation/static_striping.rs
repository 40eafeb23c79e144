//! `static`: a page's plane is a function of its address — LPN `l` goes to the `l mod planes`-th
//! plane in channel-way-die-plane order (MQSim's static CWDP allocation; for block-mapped
//! FTLs, the logical block or group picks the plane of its blocks) — and the cleaner copies a
//! page into the plane it comes from, so pages stay where their address puts them (and
//! copyback, `timing.copy_page_ns`, applies to every copy). When that plane has no room (its
//! free blocks used up while others have some), the write goes to the least loaded plane with
//! room instead, as `dynamic` would: the global free pool is kept, the mapping bends.

use std::sync::Arc;

use super::{AllocationEntry, AllocationSpec, Allocator, Room, Walk};
use crate::engine::{Engine, Hardware};

pub(super) const ENTRY: AllocationEntry =
    AllocationEntry { name: "static", params: &[], resolve: |_| Ok(Arc::new(StaticSpec)) };

#[derive(Clone, Copy, Debug)]
pub struct StaticSpec;

impl AllocationSpec for StaticSpec {
    fn name(&self) -> &'static str {
        ENTRY.name
    }
    fn build(&self, hw: &Hardware) -> Box<dyn Allocator> {
        Box::new(Static { walk: Walk::new(hw) })
    }
}

pub struct Static {
    /// The order, and the fallback's cursor.
    walk: Walk,
}

impl Allocator for Static {
    fn name(&self) -> &'static str {
        ENTRY.name
    }
    fn host(&mut self, engine: &Engine, key: u32, room: Room<'_>) -> u32 {
        if key != u32::MAX {
            let plane = self.walk.at(key);
            if room.contains(plane) {
                return plane;
            }
        }
        self.walk.least_loaded(engine, room)
    }
    fn cleaner(&mut self, engine: &Engine, victim_plane: u32, room: Room<'_>) -> u32 {
        if room.contains(victim_plane) {
            return victim_plane;
        }
        self.walk.least_loaded(engine, room)
    }
}
