//! Toy placement (the proof that a placement with a list parameter is one file plus one
//! registry line): host writes go to the `ftl.regions` logs in turn (default 2), region i taking
//! `ftl.round_robin_weights[i]` consecutive writes (default one each), whatever the page; the
//! cleaner copies a page within its region. It separates nothing by temperature — a baseline
//! that only spreads writes, as striping over parallel units would.

use std::sync::Arc;

use super::{PageState, Placement, PlacementEntry, PlacementSpec};
use crate::error::ConfigError;
use crate::flash::{Geometry, Lpn};
use crate::spec::{check, Param};

pub(super) const ENTRY: PlacementEntry = PlacementEntry {
    name: "round-robin",
    params: &[Param::new("ftl", "round_robin_weights")],
    resolve: |ftl, params| {
        let regions = *ftl.regions.get_or_insert(2);
        let weights: Vec<u32> = params.or("round_robin_weights", vec![1; regions as usize])?;
        check(
            weights.len() == regions as usize && weights.iter().all(|&w| w >= 1),
            "ftl.round_robin_weights",
            format!("needs {regions} positive integers, one per region"),
        )?;
        Ok(Arc::new(RoundRobin { weights, region: 0, left: 0 }))
    },
};

#[derive(Clone, Debug)]
struct RoundRobin {
    weights: Vec<u32>,
    /// The region taking writes now, and how many more it takes.
    region: u32,
    left: u32,
}

impl PlacementSpec for RoundRobin {
    fn name(&self) -> &'static str {
        ENTRY.name
    }
    fn regions(&self) -> u32 {
        self.weights.len() as u32
    }
    fn build(
        &self,
        _: &Geometry,
        _: u32,
        _: Option<Vec<u32>>,
    ) -> Result<Box<dyn Placement>, ConfigError> {
        Ok(Box::new(RoundRobin { region: 0, left: self.weights[0], ..self.clone() }))
    }
}

impl Placement for RoundRobin {
    fn name(&self) -> &'static str {
        ENTRY.name
    }
    fn regions(&self) -> u32 {
        self.weights.len() as u32
    }
    fn host_write(&mut self, _lpn: Lpn, _current: Option<PageState>, _now_ns: u64) -> u8 {
        if self.left == 0 {
            self.region = (self.region + 1) % self.weights.len() as u32;
            self.left = self.weights[self.region as usize];
        }
        self.left -= 1;
        self.region as u8
    }
    fn cleaner_copy(&mut self, _lpn: Lpn, current: PageState, _now_ns: u64) -> u8 {
        current.region
    }
}
