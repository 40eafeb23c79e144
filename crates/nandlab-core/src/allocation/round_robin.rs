//! `round-robin`: writes — host and cleaner alike — take the planes in turn, in
//! channel-way-die-plane order (MQSim's CWDP order), whatever their load; a plane without room
//! is skipped. A fixed striping: consecutive pages of a stream land on different buses first.

use std::sync::Arc;

use super::{AllocationEntry, AllocationSpec, Allocator, Room, Walk};
use crate::engine::{Engine, Hardware};

pub(super) const ENTRY: AllocationEntry =
    AllocationEntry { name: "round-robin", params: &[], resolve: |_| Ok(Arc::new(RoundRobinSpec)) };

#[derive(Clone, Copy, Debug)]
pub struct RoundRobinSpec;

impl AllocationSpec for RoundRobinSpec {
    fn name(&self) -> &'static str {
        ENTRY.name
    }
    fn build(&self, hw: &Hardware) -> Box<dyn Allocator> {
        Box::new(RoundRobin { walk: Walk::new(hw) })
    }
}

pub struct RoundRobin {
    walk: Walk,
}

impl Allocator for RoundRobin {
    fn name(&self) -> &'static str {
        ENTRY.name
    }
    fn host(&mut self, _engine: &Engine, _key: u32, room: Room<'_>) -> u32 {
        self.walk.next_in_turn(room)
    }
    fn cleaner(&mut self, _engine: &Engine, _victim_plane: u32, room: Room<'_>) -> u32 {
        self.walk.next_in_turn(room)
    }
}
