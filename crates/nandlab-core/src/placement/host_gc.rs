//! Two logs by origin, not by temperature: host writes go to region 1, the cleaner's copies to
//! region 0 (the separate GC write stream of many SSD FTLs, e.g. MQSim's). Pages a cleaner
//! moves have survived at least one cleaning — older than fresh host writes — so they settle
//! in the colder log; host writes fill blocks of their own, so a host request that covers whole
//! blocks invalidates whole blocks (what the geometry paper's block-size probe looks for,
//! `nandlab probe`).

use std::sync::Arc;

use super::{PageState, Placement, PlacementEntry, PlacementSpec};
use crate::error::ConfigError;
use crate::flash::{Geometry, Lpn};
use crate::spec::check;

pub(super) const ENTRY: PlacementEntry = PlacementEntry {
    name: "host-gc",
    params: &[],
    resolve: |ftl, _| {
        let regions = *ftl.regions.get_or_insert(2);
        check(
            regions == 2,
            "ftl.regions",
            "placement \"host-gc\" is two logs (host writes, cleaner copies)",
        )?;
        Ok(Arc::new(HostGc))
    },
};

#[derive(Clone, Copy, Debug)]
pub struct HostGc;

impl PlacementSpec for HostGc {
    fn name(&self) -> &'static str {
        ENTRY.name
    }
    fn regions(&self) -> u32 {
        2
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

impl Placement for HostGc {
    fn name(&self) -> &'static str {
        ENTRY.name
    }
    fn regions(&self) -> u32 {
        2
    }
    fn host_write(&mut self, _lpn: Lpn, _current: Option<PageState>, _now_ns: u64) -> u8 {
        1
    }
    fn cleaner_copy(&mut self, _lpn: Lpn, _current: PageState, _now_ns: u64) -> u8 {
        0
    }
}
