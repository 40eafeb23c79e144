//! Toy workload kind (the proof that a workload kind with a parameter is one file plus one
//! registry line): a hot spot taking 90 % of the requests, its size the fraction
//! `workload.hotspot_fraction` of the logical pages (default 0.05) — `hotcold` with x = 0.9 and
//! y = the hot spot's fraction.

use std::sync::Arc;

use super::WorkloadKindEntry;
use crate::spec::{fraction, Param};
use crate::workload::{Mix, Shape, SyntheticPlan};

pub(super) const ENTRY: WorkloadKindEntry = WorkloadKindEntry {
    name: "hotspot",
    params: &[Param::new("workload", "hotspot_fraction")],
    replayed: false,
    default_passes: (1.0, 2.0),
    resolve: |_, params, _| {
        let data = params.f64("hotspot_fraction", 0.05)?;
        fraction(data, "workload.hotspot_fraction", true)?;
        let shape = Shape::HotCold { access: 0.9, data };
        Ok(Arc::new(SyntheticPlan { mix: Mix::Single(shape) }))
    },
};
