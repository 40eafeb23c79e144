//! The workload kinds (`workload.kind`): what a configuration drives the device with — the
//! page-address workloads (`sequential`, `uniform`, `hotcold`, `phases`; `Synthetic`), the
//! file-system workloads on the FAT volume model (`postmark`, `embedded`: `fat`;
//! `media-player`: `media`), and a trace replay (`trace`, replayed by `nandlab-run`). Adding a
//! kind: one file here (its `ENTRY`: name, parameters, how it resolves into a plan that builds
//! its generator) and one line in `REGISTRY`.

use std::sync::Arc;

use super::spec::WorkloadConfig;
use super::{WorkItem, WorkloadSpec};
use crate::error::ConfigError;
use crate::flash::Geometry;
use crate::spec::{self, Family, Named, Param, Params, Value};

/// One registered workload kind.
#[derive(Clone, Copy, Debug)]
pub struct WorkloadKindEntry {
    pub name: &'static str,
    pub params: &'static [Param],
    /// Replayed from a file by the runner (`nandlab-run`) rather than generated here.
    pub replayed: bool,
    /// The defaults of `workload.warmup_passes` and `workload.passes` for this kind.
    pub default_passes: (f64, f64),
    /// Resolves the kind's parameters (and its checks of the shared `[workload]` keys) on a
    /// device of `g` into its plan.
    pub resolve: ResolvePlan,
}

/// How a workload kind resolves its parameters (and its checks of the shared `[workload]`
/// keys) on a device of the given geometry into its plan.
pub type ResolvePlan =
    fn(&mut WorkloadConfig, &mut Params<'_>, &Geometry) -> Result<Arc<dyn Plan>, ConfigError>;

impl Named for WorkloadKindEntry {
    fn name(&self) -> &'static str {
        self.name
    }
    fn params(&self) -> &'static [Param] {
        self.params
    }
}

/// A workload kind with its parameters resolved: what its generator is built from.
pub trait Plan: std::any::Any + std::fmt::Debug + Send + Sync {
    /// One repetition's generator for `spec` (whose plan this is).
    fn generator(&self, spec: &WorkloadSpec) -> Result<Box<dyn Generator>, ConfigError>;
    /// The plan as `Any`, for a generator that needs its own plan's type back.
    fn as_any(&self) -> &dyn std::any::Any;
}

/// A workload generator: its items, and estimates of how many requests it issues (for
/// progress bars).
pub trait Generator: Iterator<Item = WorkItem> + Send {
    fn estimated_requests(&self) -> u64;
    /// Requests of the measured part alone (after `StartMeasurement`).
    fn estimated_measured_requests(&self) -> u64;
}

// The registry: one line per kind.
crate::spec::registry! {
    WorkloadKindEntry;
    sequential,
    uniform,
    hotcold,
    pub phases,
    pub trace,
    postmark,
    embedded,
    media_player,
}

/// The kind `w` names (an unknown name is an error naming `workload.kind`).
pub fn of(w: &WorkloadConfig) -> Result<&'static WorkloadKindEntry, ConfigError> {
    spec::lookup(REGISTRY, &w.kind, "workload.kind")
}

/// The family's declarations (`Tables::settle`).
#[must_use]
pub fn family() -> Family {
    Family::of("workload.kind", REGISTRY)
}

/// The registered names.
#[must_use]
pub fn names() -> Vec<&'static str> {
    spec::names(REGISTRY)
}

/// `workload.hot_access_fraction` and `workload.hot_data_fraction`, the "x/y" locality of
/// `hotcold` (fraction x of accesses go to fraction y of the data) and the defaults of a
/// `phases` run's hot/cold phases. Every configuration records them (0.9 and 0.1).
pub(super) const HOT_ACCESS: Param =
    Param::shown("workload", "hot_access_fraction", || Value::from(0.9));
pub(super) const HOT_DATA: Param =
    Param::shown("workload", "hot_data_fraction", || Value::from(0.1));

/// `[workload.fs]`: the FAT volume of the file-system kinds (`spec::FsConfig`).
pub(super) const FS: Param = Param::new("workload", "fs");

/// The x/y fractions (`HOT_ACCESS`, `HOT_DATA`), checked and recorded.
pub(super) fn hot_fractions(params: &mut Params<'_>) -> Result<(f64, f64), ConfigError> {
    let x = params.f64("hot_access_fraction", 0.9)?;
    let y = params.f64("hot_data_fraction", 0.1)?;
    spec::fraction(x, "workload.hot_access_fraction", true)?;
    spec::fraction(y, "workload.hot_data_fraction", true)?;
    Ok((x, y))
}
