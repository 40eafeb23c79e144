//! Toy placement (the proof that a placement is one file plus one registry line): host
//! writes go to the `ftl.regions` logs in turn (default 2), whatever the page; the cleaner
//! copies a page within its region. It separates nothing by temperature — a baseline that only
//! spreads writes, as striping over parallel units would.

use std::sync::Arc;

use super::{PageState, Placement, PlacementEntry, PlacementSpec};
use crate::error::ConfigError;
use crate::flash::{Geometry, Lpn};

pub(super) const ENTRY: PlacementEntry = PlacementEntry {
    name: "round-robin",
    extra_keys: &[],
    resolve: |keys, _| {
        Ok(Arc::new(RoundRobin { regions: *keys.ftl.regions.get_or_insert(2), next: 0 }))
    },
    refuse_keys: super::no_keys,
};

#[derive(Clone, Copy, Debug)]
struct RoundRobin {
    regions: u32,
    next: u32,
}

impl PlacementSpec for RoundRobin {
    fn name(&self) -> &'static str {
        ENTRY.name
    }
    fn regions(&self) -> u32 {
        self.regions
    }
    fn build(
        &self,
        _: &Geometry,
        _: u32,
        _: Option<Vec<u32>>,
    ) -> Result<Box<dyn Placement>, ConfigError> {
        Ok(Box::new(*self))
    }
}

impl Placement for RoundRobin {
    fn name(&self) -> &'static str {
        ENTRY.name
    }
    fn regions(&self) -> u32 {
        self.regions
    }
    fn host_write(&mut self, _lpn: Lpn, _current: Option<PageState>, _now_ns: u64) -> u8 {
        let region = self.next as u8;
        self.next = (self.next + 1) % self.regions;
        region
    }
    fn cleaner_copy(&mut self, _lpn: Lpn, current: PageState, _now_ns: u64) -> u8 {
        current.region
    }
}
