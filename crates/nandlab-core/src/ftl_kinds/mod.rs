//! The FTL kinds (`ftl.kind`): which translation mechanism a configuration runs — the
//! page-mapped log-structured store of the DAC paper (`page`) or a hybrid log-block FTL (`bast`,
//! `sast`, `fast`; docs/ALGORITHMS.md §4). Adding a kind: one file here (its `ENTRY`: name,
//! parameters, how it resolves into an `FtlSpec`) and one line in `REGISTRY`.

use crate::engine::Hardware;
use crate::error::ConfigError;
use crate::flash::Geometry;
use crate::ftl::{FtlConfig, FtlSpec};
use crate::spec::{self, Family, Named, Param, Tables};

/// One registered FTL kind.
#[derive(Clone, Copy, Debug)]
pub struct FtlKindEntry {
    pub name: &'static str,
    pub params: &'static [Param],
    /// Logical blocks the kind maps as a unit (SAST: a group; BAST, FAST: 1; 0 for a kind that
    /// maps single pages), read before the device is sized: a logical size derived from the
    /// utilization is rounded down to it. `Tables::value` reads the kind's parameters unclaimed.
    pub granule_blocks: fn(&Tables) -> u64,
    /// Resolves the kind with its policies on a device of this geometry and hardware.
    pub resolve:
        fn(&mut FtlConfig, &mut Tables, &Geometry, &Hardware) -> Result<FtlSpec, ConfigError>,
}

impl Named for FtlKindEntry {
    fn name(&self) -> &'static str {
        self.name
    }
    fn params(&self) -> &'static [Param] {
        self.params
    }
}

// The registry: one line per kind.
crate::spec::registry! {
    FtlKindEntry;
    page,
    bast,
    sast,
    fast,
}

/// The kind `f` names (an unknown name is an error naming `ftl.kind`).
pub fn of(f: &FtlConfig) -> Result<&'static FtlKindEntry, ConfigError> {
    spec::lookup(REGISTRY, &f.kind, "ftl.kind")
}

/// The family's declarations (`Tables::settle`).
#[must_use]
pub fn family() -> Family {
    Family::of("ftl.kind", REGISTRY)
}

/// The registered names.
#[must_use]
pub fn names() -> Vec<&'static str> {
    spec::names(REGISTRY)
}

/// `ftl.log_blocks`, a parameter of every hybrid kind: the log pool (FAST: one of them is the
/// sequential log). Default 8.
pub(crate) const LOG_BLOCKS: Param = Param::new("ftl", "log_blocks");
/// `ftl.recycling`, a parameter of every hybrid kind: how a full log block is recycled
/// (`hybrid::recycling`; BAST alone takes a migrating policy). Default `merge-only`.
pub(crate) const RECYCLING: Param = Param::new("ftl", "recycling");
