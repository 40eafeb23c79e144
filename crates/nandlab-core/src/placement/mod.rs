//! Data placement: which log (region) a page is written to, on host writes and when the
//! cleaner copies it (SPEC §2.1). Region 0 is the Bottom (coldest); region N−1 the Top.
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
            Box::new(dac::Dac::new(regions, f.time_threshold_s.map(|s| (s * 1e9).round() as u64)))
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
