//! Toy wear leveler (the proof that a leveler with a parameter is one file plus one registry
//! line): lazy wear leveling with a fixed threshold Δ = `wear.fixed_delta` (default 16) and no
//! adaptive tuning — `lazy` with its default Δ, under another name.

use std::sync::Arc;

use super::lazy::LazyWearLeveling;
use super::spec::{ResolvedLeveler, WearEntry};
use super::{WearLeveler, WearSetup};
use crate::spec::{check, Param};

pub(super) const ENTRY: WearEntry = WearEntry {
    name: "fixed-delta",
    params: &[Param::new("wear", "fixed_delta")],
    resolve: |params| {
        let delta = params.f64("fixed_delta", 16.0)?;
        check(delta >= 0.0, "wear.fixed_delta", "must be >= 0")?;
        Ok(Arc::new(FixedDelta { delta }))
    },
};

#[derive(Clone, Copy, Debug)]
struct FixedDelta {
    delta: f64,
}

impl ResolvedLeveler for FixedDelta {
    fn build(&self, setup: WearSetup) -> Box<dyn WearLeveler> {
        Box::new(LazyWearLeveling::with(self.delta, None, setup))
    }
}
