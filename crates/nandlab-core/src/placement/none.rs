//! One log: every page goes to region 0 (no clustering; DAC with N = 1).

use std::sync::Arc;

use super::{PageState, Placement, PlacementEntry, PlacementSpec};
use crate::error::ConfigError;
use crate::flash::{Geometry, Lpn};
use crate::spec::check;

pub(super) const ENTRY: PlacementEntry = PlacementEntry {
    name: "none",
    params: &[],
    resolve: |ftl, _| {
        let regions = *ftl.regions.get_or_insert(1);
        check(
            regions == 1,
            "ftl.regions",
            "placement \"none\" is one log: use ftl.placement = \"dac\" or \"oracle\" for more",
        )?;
        Ok(Arc::new(OneLog))
    },
};

#[derive(Clone, Copy, Debug)]
pub struct OneLog;

impl PlacementSpec for OneLog {
    fn name(&self) -> &'static str {
        ENTRY.name
    }
    fn regions(&self) -> u32 {
        1
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

impl Placement for OneLog {
    fn name(&self) -> &'static str {
        "none"
    }
    fn regions(&self) -> u32 {
        1
    }
    fn host_write(&mut self, _lpn: Lpn, _current: Option<PageState>, _now_ns: u64) -> u8 {
        0
    }
    fn cleaner_copy(&mut self, _lpn: Lpn, _current: PageState, _now_ns: u64) -> u8 {
        0
    }
}
