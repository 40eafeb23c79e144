//! `cost-based`: migrate a full log block iff W_mig(p) < W_merge (block-recycling paper §4;
//! docs/ALGORITHMS.md §4). With a limit on consecutive migrations per logical block it is
//! `periodic` (`super::periodic`).

use std::sync::Arc;

use super::{CostModel, RecyclingEntry, RecyclingPolicy, ResolvedRecycling};

pub(super) const ENTRY: RecyclingEntry = RecyclingEntry {
    name: "cost-based",
    migrates: true,
    params: &[],
    resolve: |_, _| Ok(Arc::new(CostBasedSpec)),
};

#[derive(Clone, Copy, Debug)]
struct CostBasedSpec;

impl ResolvedRecycling for CostBasedSpec {
    fn build(&self, cost: CostModel, _: u32) -> Box<dyn RecyclingPolicy> {
        Box::new(CostBased { cost, run: None })
    }
}

/// `periodic` with `period`: cost-based, but merge after `period` consecutive migrations of a
/// logical block.
#[must_use]
pub fn periodic(cost: CostModel, logical_blocks: u32, period: u32) -> Box<dyn RecyclingPolicy> {
    Box::new(CostBased {
        cost,
        run: Some(Consecutive { period, count: vec![0; logical_blocks as usize] }),
    })
}

struct Consecutive {
    period: u32,
    count: Vec<u32>,
}

/// `cost-based`, and with `run` set, `periodic`.
struct CostBased {
    cost: CostModel,
    run: Option<Consecutive>,
}

impl RecyclingPolicy for CostBased {
    fn name(&self) -> &'static str {
        if self.run.is_some() {
            "periodic"
        } else {
            ENTRY.name
        }
    }
    fn migrate(&mut self, lbn: u32, valid_pages: u32) -> bool {
        if self.cost.w_mig(f64::from(valid_pages)) >= self.cost.w_merge() {
            return false;
        }
        match &mut self.run {
            None => true,
            Some(run) => {
                let c = &mut run.count[lbn as usize];
                if *c >= run.period {
                    false
                } else {
                    *c += 1;
                    true
                }
            }
        }
    }
    fn merged(&mut self, lbn: u32) {
        if let Some(run) = &mut self.run {
            run.count[lbn as usize] = 0;
        }
    }
    fn memory_bytes(&self) -> u64 {
        self.run.as_ref().map_or(0, |r| r.count.len() as u64)
    }
}
