//! Data placement: which log (region) a page is written to, on host writes and when the cleaner
//! copies it (docs/ALGORITHMS.md §2.1). Region 0 is the Bottom (coldest); region N−1 the Top. A
//! placement may declare its Top region RAM (`Placement::ram_region`: DEB's EBR, DAC with a RAM
//! region, docs/ALGORITHMS.md §3); the page FTL then holds those pages in `ftl::ram_region`.
//!
//! Adding a placement: one file here (its `ENTRY`: name, keys, how it resolves and builds) and
//! one line in `REGISTRY`.

pub use oracle::{next_write_distances, NEVER};

use std::sync::Arc;

pub use dac::DacConfig;
pub use deb::DebConfig;

use crate::error::ConfigError;
pub use crate::ftl::policy::{PageState, Placement, PlacementSpec};
use crate::ftl::FtlConfig;
use crate::spec::{self, Named, Params};

/// The raw keys a placement may read: `[ftl]` (`ftl.placement`, `ftl.regions` and the
/// placements' own keys) and the placements' own tables (`[deb]`, `[dac]`). Resolution fills
/// the defaults in place, so the resolved config records them.
pub struct PlacementKeys<'a> {
    pub ftl: &'a mut FtlConfig,
    pub deb: &'a mut DebConfig,
    pub dac: &'a mut DacConfig,
}

/// How a placement resolves: from its raw keys and the extra keys of `[ftl]`.
pub type ResolvePlacement =
    fn(&mut PlacementKeys<'_>, &mut Params<'_>) -> Result<Arc<dyn PlacementSpec>, ConfigError>;

/// One registered placement: its `ftl.placement` name, the keys of `[ftl]` it takes beyond the
/// table's typed fields, how it resolves its keys, and the check that its keys are unset when
/// another placement is chosen.
#[derive(Clone, Copy, Debug)]
pub struct PlacementEntry {
    pub name: &'static str,
    pub extra_keys: &'static [&'static str],
    pub resolve: ResolvePlacement,
    pub refuse_keys: fn(&PlacementKeys<'_>) -> Result<(), ConfigError>,
}

impl Named for PlacementEntry {
    fn name(&self) -> &'static str {
        self.name
    }
    fn extra_keys(&self) -> &'static [&'static str] {
        self.extra_keys
    }
}

// The registry: one line per placement.
crate::spec::registry! {
    PlacementEntry;
    none,
    dac,
    oracle,
    pub deb,
    host_gc,
}

/// For `refuse_keys` of a placement without keys of its own.
pub fn no_keys(_: &PlacementKeys<'_>) -> Result<(), ConfigError> {
    Ok(())
}

/// `ftl.placement` and its keys, resolved: the chosen placement fills its defaults, every
/// other placement's keys must be unset, and `ftl.regions` ends in 1..=64.
pub fn resolve(keys: &mut PlacementKeys<'_>) -> Result<Arc<dyn PlacementSpec>, ConfigError> {
    let entry = spec::lookup(REGISTRY, &keys.ftl.placement, "ftl.placement")?;
    for other in REGISTRY.iter().filter(|e| e.name != entry.name) {
        (other.refuse_keys)(keys)?;
    }
    let mut extra = std::mem::take(&mut keys.ftl.extra);
    let result = (entry.resolve)(keys, &mut Params { table: "ftl", keys: &mut extra });
    keys.ftl.extra = extra;
    let placement = result?;
    let regions = placement.regions();
    spec::check((1..=64).contains(&regions), "ftl.regions", "must be between 1 and 64")?;
    Ok(placement)
}

/// An FTL without placements (the hybrid kinds): every placement's keys must be unset.
pub fn refuse_all(keys: &PlacementKeys<'_>) -> Result<(), ConfigError> {
    REGISTRY.iter().try_for_each(|e| (e.refuse_keys)(keys))
}

/// The entry selected by `f` (for the extra keys it claims).
#[must_use]
pub fn entry(f: &FtlConfig) -> Option<&'static PlacementEntry> {
    spec::find(REGISTRY, &f.placement)
}

/// The placement that takes extra key `key`, if any, as "ftl.placement = \"name\"".
#[must_use]
pub fn owner_of(key: &str) -> Option<String> {
    spec::owner_of(REGISTRY, key, "ftl.placement")
}

/// The registered names.
#[must_use]
pub fn names() -> Vec<&'static str> {
    spec::names(REGISTRY)
}

#[cfg(test)]
mod tests;
