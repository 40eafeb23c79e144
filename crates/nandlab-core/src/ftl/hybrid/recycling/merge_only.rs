//! `merge-only`: every full log block is merged (the default of every hybrid kind; the
//! block-recycling paper's baseline).

use std::sync::Arc;

use super::{CostModel, RecyclingEntry, RecyclingPolicy, ResolvedRecycling};

pub(super) const ENTRY: RecyclingEntry = RecyclingEntry {
    name: "merge-only",
    migrates: false,
    params: &[],
    resolve: |_, _| Ok(Arc::new(MergeOnlySpec)),
};

#[derive(Clone, Copy, Debug)]
struct MergeOnlySpec;

impl ResolvedRecycling for MergeOnlySpec {
    fn build(&self, _: CostModel, _: u32) -> Box<dyn RecyclingPolicy> {
        Box::new(MergeOnly)
    }
}

struct MergeOnly;

impl RecyclingPolicy for MergeOnly {
    fn name(&self) -> &'static str {
        ENTRY.name
    }
    fn migrate(&mut self, _lbn: u32, _valid_pages: u32) -> bool {
        false
    }
    fn merged(&mut self, _lbn: u32) {}
}
