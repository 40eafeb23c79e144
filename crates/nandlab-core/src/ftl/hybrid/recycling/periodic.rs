//! `periodic`: cost-based recycling that merges after `ftl.migration_period` consecutive
//! migrations of a logical block (block-recycling paper §5: N_p / 2, the default).

use std::sync::Arc;

use super::cost_based::periodic;
use super::{CostModel, RecyclingEntry, RecyclingPolicy, ResolvedRecycling};
use crate::spec::{check, Param};

pub(super) const ENTRY: RecyclingEntry = RecyclingEntry {
    name: "periodic",
    migrates: true,
    params: &[Param::new("ftl", "migration_period")],
    resolve: |params, pages_per_block| {
        let period = params.u32("migration_period", pages_per_block / 2)?;
        check(period >= 1, "ftl.migration_period", "must be at least 1")?;
        Ok(Arc::new(PeriodicSpec { period }))
    },
};

#[derive(Clone, Copy, Debug)]
struct PeriodicSpec {
    period: u32,
}

impl ResolvedRecycling for PeriodicSpec {
    fn build(&self, cost: CostModel, logical_blocks: u32) -> Box<dyn RecyclingPolicy> {
        periodic(cost, logical_blocks, self.period)
    }
}
