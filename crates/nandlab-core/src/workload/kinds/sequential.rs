//! `workload.kind = "sequential"`: every request starts where the previous one ended, wrapping
//! at the end of the logical space.

use std::sync::Arc;

use super::WorkloadKindEntry;
use crate::workload::{Mix, Shape, SyntheticPlan};

pub(super) const ENTRY: WorkloadKindEntry = WorkloadKindEntry {
    name: "sequential",
    params: &[],
    replayed: false,
    default_passes: (1.0, 2.0),
    resolve: |_, _, _| Ok(Arc::new(SyntheticPlan { mix: Mix::Single(Shape::Sequential) })),
};
