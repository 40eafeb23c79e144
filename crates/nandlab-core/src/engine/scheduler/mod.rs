//! Scheduling policies of the sim-engine (`ftl.scheduler`): the rank of each operation class
//! (host reads, host writes with their foreground work, background cleaning). Operations of
//! the best rank are timed the moment they are issued, in issue order per die; worse ranks wait
//! in per-die queues and run when their die is free and no better operation waits (see
//! `engine`). Operations of one rank keep issue order on a die.
//!
//! Adding a policy: one file here with its `ENTRY` and one line in the registry.

use std::sync::Arc;

use super::CLASSES;
use crate::error::ConfigError;
use crate::spec::{self, Family, Named, Param, Params, Tables};

/// A resolved scheduling policy.
pub trait SchedulerSpec: Send + Sync + std::fmt::Debug {
    fn name(&self) -> &'static str;
    /// Rank of each class, indexed by `engine::Class` (lower goes first; values < `CLASSES`).
    fn ranks(&self) -> [u8; CLASSES];
}

/// One registered policy: its `ftl.scheduler` name and its spec.
#[derive(Clone, Copy, Debug)]
pub struct SchedulerEntry {
    pub name: &'static str,
    pub params: &'static [Param],
    pub resolve: fn(&mut Params<'_>) -> Result<Arc<dyn SchedulerSpec>, ConfigError>,
}

impl Named for SchedulerEntry {
    fn name(&self) -> &'static str {
        self.name
    }
    fn params(&self) -> &'static [Param] {
        self.params
    }
}

// The registry: one line per policy.
crate::spec::registry! {
    SchedulerEntry;
    pub fifo,
    pub read_priority,
}

/// `ftl.scheduler`, resolved.
pub fn resolve(name: &str, tables: &mut Tables) -> Result<Arc<dyn SchedulerSpec>, ConfigError> {
    (spec::lookup(REGISTRY, name, "ftl.scheduler")?.resolve)(&mut tables.params("ftl"))
}

/// The family's declarations (`Tables::settle`).
#[must_use]
pub fn family() -> Family {
    Family::of("ftl.scheduler", REGISTRY)
}

/// The registered names.
#[must_use]
pub fn names() -> Vec<&'static str> {
    spec::names(REGISTRY)
}
