//! `workload.kind = "uniform"` (the default): request start pages uniformly at random.

use std::sync::Arc;

use super::WorkloadKindEntry;
use crate::workload::{Mix, Shape, SyntheticPlan};

pub(super) const ENTRY: WorkloadKindEntry = WorkloadKindEntry {
    name: "uniform",
    params: &[],
    replayed: false,
    default_passes: (1.0, 2.0),
    resolve: |_, _, _| Ok(Arc::new(SyntheticPlan { mix: Mix::Single(Shape::Uniform) })),
};
