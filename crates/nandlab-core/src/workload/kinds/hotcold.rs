//! `workload.kind = "hotcold"`: "x/y" locality (docs/ALGORITHMS.md §10) — fraction x of the
//! requests (`workload.hot_access_fraction`) go to the first fraction y of the logical pages
//! (`workload.hot_data_fraction`), the rest uniformly to the others.

use std::sync::Arc;

use super::{hot_fractions, WorkloadKindEntry, HOT_ACCESS, HOT_DATA};
use crate::workload::{Mix, Shape, SyntheticPlan};

pub(super) const ENTRY: WorkloadKindEntry = WorkloadKindEntry {
    name: "hotcold",
    params: &[HOT_ACCESS, HOT_DATA],
    replayed: false,
    default_passes: (1.0, 2.0),
    resolve: |_, params, _| {
        let (access, data) = hot_fractions(params)?;
        Ok(Arc::new(SyntheticPlan { mix: Mix::Single(Shape::HotCold { access, data }) }))
    },
};
