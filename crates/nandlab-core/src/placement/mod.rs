//! Data placement: which log (region) a page is written to, on host writes and when the cleaner
//! copies it (docs/ALGORITHMS.md §2.1). Region 0 is the Bottom (coldest); region N−1 the Top. A
//! placement may declare its Top region RAM (`Placement::ram_region`: DEB's EBR, DAC with a RAM
//! region, docs/ALGORITHMS.md §3); the page FTL then holds those pages in `ftl::ram_region`.
//!
//! Adding a placement: one file here (its `ENTRY`: name, keys, how it resolves and builds) and
//! one line in `REGISTRY`.

pub use oracle::next_write_distances;

use std::sync::Arc;

use crate::error::ConfigError;
pub use crate::ftl::policy::{Collected, PageState, Placement, PlacementSpec, WriteClock};
use crate::ftl::FtlConfig;
use crate::spec::{self, Family, Named, Param, Params, Tables};

/// How a placement resolves: from the typed `[ftl]` table (`ftl.regions`, whose default is the
/// placement's) and its own parameters.
pub type ResolvePlacement =
    fn(&mut FtlConfig, &mut Params<'_>) -> Result<Arc<dyn PlacementSpec>, ConfigError>;

/// One registered placement: its `ftl.placement` name, the parameters it declares (in `[ftl]`
/// or in a table of its own, e.g. `[dac]`), and how it resolves them.
#[derive(Clone, Copy, Debug)]
pub struct PlacementEntry {
    pub name: &'static str,
    pub params: &'static [Param],
    pub resolve: ResolvePlacement,
}

impl Named for PlacementEntry {
    fn name(&self) -> &'static str {
        self.name
    }
    fn params(&self) -> &'static [Param] {
        self.params
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
    lifetime,
    sepbit,
    warcip,
    fadac,
    pub midas,
}

/// `ftl.placement` and its parameters, resolved; `ftl.regions` ends in 1..=64.
pub fn resolve(
    f: &mut FtlConfig,
    tables: &mut Tables,
) -> Result<Arc<dyn PlacementSpec>, ConfigError> {
    let entry = spec::lookup(REGISTRY, &f.placement, "ftl.placement")?;
    let placement = (entry.resolve)(f, &mut tables.params("ftl"))?;
    let regions = placement.regions();
    spec::check((1..=64).contains(&regions), "ftl.regions", "must be between 1 and 64")?;
    Ok(placement)
}

/// Checks a list of band boundaries (`regions − 1` values, in logical passes) as placements that
/// band pages by a distance read them (`oracle`, `lifetime`).
pub(super) fn check_bands(key: &str, bands: &[f64], regions: u32) -> Result<(), ConfigError> {
    spec::check(
        bands.len() == regions as usize - 1,
        key,
        format!("needs regions - 1 = {} values", regions - 1),
    )?;
    spec::check(
        bands.windows(2).all(|w| w[0] < w[1]) && bands.iter().all(|v| v.is_finite() && *v > 0.0),
        key,
        "values must be positive and strictly increasing",
    )
}

/// The region of the band holding `value` among ascending `boundaries` (one region more than
/// boundaries): the shortest distances go to the Top, beyond the last boundary to the Bottom.
pub(super) fn band_region<T: PartialOrd>(boundaries: &[T], value: &T) -> u8 {
    let class = boundaries.iter().take_while(|b| *b <= value).count();
    (boundaries.len() - class) as u8
}

/// The family's declarations (`Tables::settle`).
#[must_use]
pub fn family() -> Family {
    Family::of("ftl.placement", REGISTRY)
}

/// The registered names.
#[must_use]
pub fn names() -> Vec<&'static str> {
    spec::names(REGISTRY)
}

#[cfg(test)]
mod tests;
