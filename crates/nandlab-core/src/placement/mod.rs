//! Data placement: which log (region) a page is written to, on host writes and when the
//! cleaner copies it (SPEC §2.1). Region 0 is the Bottom (coldest); region N−1 the Top. A
//! placement may declare its Top region RAM (`Placement::ram_region`: DEB's EBR, DAC with a
//! RAM region, SPEC §3); the page FTL then holds those pages in `ftl::ram_region`.
//!
//! Adding a placement: one file here and one line in `by_name`.

mod dac;
pub mod deb;
mod none;
mod oracle;

pub use oracle::{next_write_distances, NEVER};

use crate::config::Resolved;
use crate::error::ConfigError;
use crate::flash::Lpn;

/// Where a mapped page lives now and since when.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageState {
    pub region: u8,
    /// Simulated time the page entered its region (only tracked when the placement asks).
    pub entered_ns: u64,
}

pub trait Placement: Send {
    fn name(&self) -> &'static str;
    fn regions(&self) -> u32;
    /// The FTL keeps each page's region entry time only for placements that need it.
    fn needs_residence_time(&self) -> bool {
        false
    }
    /// Region for a host write of `lpn`; `current` is `None` for a never-written page.
    fn host_write(&mut self, lpn: Lpn, current: Option<PageState>, now_ns: u64) -> u8;
    /// Region for a valid page the cleaner moves out of a victim block.
    fn cleaner_copy(&mut self, lpn: Lpn, current: PageState, now_ns: u64) -> u8;
    /// Whether the hottest region (`regions() - 1`) is RAM rather than flash (DEB's Extra
    /// Buffer Region, DAC's RAM region): the page FTL keeps its pages in a `RamRegion`, updates
    /// them in place and writes them back when it fills.
    fn ram_region(&self) -> bool {
        false
    }
    /// Flash region for a page the FTL writes back from the RAM region. Default: the next
    /// colder region (DAC's demotion).
    fn ram_write_back(&mut self, _lpn: Lpn, current: PageState, _now_ns: u64) -> u8 {
        current.region - 1
    }
}

/// How many different logs the valid pages of one victim block can be copied into, at most.
/// The cleaner's free-block reserve must exceed it: each of those logs may need a fresh block
/// before the victim is erased.
#[must_use]
pub fn cleaner_destinations_max(placement: &str, regions: u32, time_threshold: bool) -> u32 {
    match placement {
        // DAC demotes a victim's pages into the next colder region; with a threshold, young
        // pages stay in their region instead: two destinations.
        "dac" if time_threshold => 2.min(regions),
        "oracle" => regions,
        _ => 1,
    }
}

/// The registry. `future` is the oracle's knowledge: for the i-th host page write, the number
/// of host page writes until the same LPN is written again (`NEVER` if it is not).
pub fn by_name(
    resolved: &Resolved,
    future: Option<Vec<u32>>,
) -> Result<Box<dyn Placement>, ConfigError> {
    let f = &resolved.config.ftl;
    let regions = resolved.regions;
    Ok(match f.placement.as_str() {
        "none" => Box::new(none::OneLog),
        "dac" => {
            let ram = resolved.ram_region_pages() > 0;
            let threshold_ns = f.time_threshold_s.map(|s| (s * 1e9).round() as u64);
            Box::new(dac::Dac::new(regions + u32::from(ram), threshold_ns, ram))
        }
        "deb" => {
            let bounds = resolved.config.deb.stable_time_intervals_s.as_ref().expect("resolved");
            let ebr = resolved.ram_region_pages() > 0;
            Box::new(deb::Deb::new(bounds, resolved.geometry.logical_pages, ebr))
        }
        "oracle" => {
            let future = future.ok_or_else(|| {
                ConfigError::new(
                    "ftl.placement",
                    "the oracle needs the workload's future: run it through the runner, which \
                     pre-computes next-write distances",
                )
            })?;
            let logical = resolved.geometry.logical_pages as f64;
            let boundaries = f
                .oracle_boundaries_passes
                .as_ref()
                .expect("resolve fills oracle boundaries")
                .iter()
                .map(|p| (p * logical).round() as u64)
                .collect();
            Box::new(oracle::Oracle::new(
                regions,
                boundaries,
                future,
                resolved.geometry.logical_pages,
            ))
        }
        other => {
            return Err(ConfigError::new("ftl.placement", format!("unknown placement {other:?}")))
        }
    })
}

#[cfg(test)]
mod tests;
