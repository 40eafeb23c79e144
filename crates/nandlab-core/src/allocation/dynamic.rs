//! `dynamic` (the default): every write — host and cleaner alike — goes to the plane whose die
//! will be free soonest (its timed work and queued backlog, `Engine::die_load_ns`); ties, as
//! on an idle device, go round in channel-way-die-plane order. Under load, writes flow to the
//! dies that keep up, which is what a controller with per-die queues does.

use std::sync::Arc;

use super::{AllocationEntry, AllocationSpec, Allocator, Room, Walk};
use crate::engine::{Engine, Hardware};

pub(super) const ENTRY: AllocationEntry =
    AllocationEntry { name: "dynamic", params: &[], resolve: |_| Ok(Arc::new(DynamicSpec)) };

#[derive(Clone, Copy, Debug)]
pub struct DynamicSpec;

impl AllocationSpec for DynamicSpec {
    fn name(&self) -> &'static str {
        ENTRY.name
    }
    fn build(&self, hw: &Hardware) -> Box<dyn Allocator> {
        Box::new(Dynamic { walk: Walk::new(hw) })
    }
    /// It picks the least busy plane.
    fn reads_time(&self) -> bool {
        true
    }
}

pub struct Dynamic {
    walk: Walk,
}

impl Allocator for Dynamic {
    fn name(&self) -> &'static str {
        ENTRY.name
    }
    fn host(&mut self, engine: &Engine, _key: u32, room: Room<'_>) -> u32 {
        self.walk.least_loaded(engine, room)
    }
    fn cleaner(&mut self, engine: &Engine, _victim_plane: u32, room: Room<'_>) -> u32 {
        self.walk.least_loaded(engine, room)
    }
}
