//! DAC dynamic data clustering (DAC paper, docs/ALGORITHMS.md §2.1).
//!
//! New data enters the Bottom region (0). A host update promotes the page one region hotter; the
//! cleaner demotes every valid page of a victim one region colder. With a time threshold T, a
//! promotion happens only if the page has been in its region for less than T (it was updated
//! while still young: hot), otherwise it is rewritten in the same region; a demotion only if it
//! has been there longer than T, otherwise it stays. Exactly T counts as neither (the paper says
//! "smaller than" and "exceeds").
//!
//! With a RAM region (`dac.ram_region_bytes`, the LFSS thesis's "DAC with 4 MB"), the RAM is one
//! more region on top of the flash regions: promotions from the hottest flash region reach it,
//! updates there stay there, and its written-back pages are demoted to the hottest flash region
//! (the default `Placement::ram_write_back`).

use std::sync::Arc;

use super::{PageState, Placement, PlacementEntry, PlacementSpec};
use crate::error::ConfigError;
use crate::flash::{Geometry, Lpn};
use crate::ftl::FtlConfig;
use crate::spec::{check, Param, Params};

/// DAC's parameters: the time threshold in `[ftl]`, and its RAM region (the LFSS thesis's "DAC
/// with 4 MB" baseline) in its own table `[dac]`:
/// - `ftl.time_threshold_s`: promotion/demotion threshold T in seconds; unset = none.
/// - `dac.ram_region_bytes`: RAM as one more region above DAC's `ftl.regions` flash regions.
///   Default 0 (none).
/// - `dac.ram_write_back_threshold`: when the RAM region's used space would pass this fraction
///   of it, its oldest pages are demoted to the hottest flash region until it is below half of
///   it. Default 1.0; only with a RAM region.
pub(super) const ENTRY: PlacementEntry = PlacementEntry {
    name: "dac",
    params: &[
        Param::new("ftl", "time_threshold_s"),
        Param::new("dac", "ram_region_bytes"),
        Param::new("dac", "ram_write_back_threshold"),
    ],
    resolve,
};

/// DAC's regions (default 4), time threshold and RAM region, resolved.
#[derive(Clone, Copy, Debug)]
struct DacSpec {
    regions: u32,
    threshold_ns: Option<u64>,
    ram_region_bytes: u64,
    ram_write_back_threshold: f64,
}

fn resolve(f: &mut FtlConfig, params: &mut Params<'_>) -> Result<Arc<dyn PlacementSpec>, ConfigError> {
    let regions = *f.regions.get_or_insert(4);
    check((1..=64).contains(&regions), "ftl.regions", "must be between 1 and 64")?;
    let time_threshold_s: Option<f64> = params.get("time_threshold_s")?;
    if let Some(t) = time_threshold_s {
        check(t.is_finite() && t >= 0.0, "ftl.time_threshold_s", "must be >= 0")?;
        params.set("time_threshold_s", &t);
    }
    let mut dac = params.table("dac");
    let ram_region_bytes = dac.or("ram_region_bytes", 0u64)?;
    let mut ram_write_back_threshold = 1.0;
    if ram_region_bytes > 0 {
        let t = dac.f64("ram_write_back_threshold", 1.0)?;
        check(
            t > 0.0 && t <= 1.0,
            "dac.ram_write_back_threshold",
            "must be in (0, 1] (a fraction of the RAM region)",
        )?;
        ram_write_back_threshold = t;
    } else {
        check(
            dac.get::<f64>("ram_write_back_threshold")?.is_none(),
            "dac.ram_write_back_threshold",
            "there is no RAM region: set dac.ram_region_bytes too",
        )?;
    }
    Ok(Arc::new(DacSpec {
        regions,
        threshold_ns: time_threshold_s.map(|s| (s * 1e9).round() as u64),
        ram_region_bytes,
        ram_write_back_threshold,
    }))
}

impl PlacementSpec for DacSpec {
    fn name(&self) -> &'static str {
        ENTRY.name
    }
    fn regions(&self) -> u32 {
        self.regions
    }
    /// DAC demotes a victim's pages into the next colder region; with a threshold, young pages
    /// stay in their region instead: two destinations.
    /// The time threshold compares ages in simulated time.
    fn reads_time(&self) -> bool {
        self.threshold_ns.is_some()
    }
    fn cleaner_destinations_max(&self) -> u32 {
        if self.threshold_ns.is_some() {
            2.min(self.regions)
        } else {
            1
        }
    }
    fn ram_region_bytes(&self) -> u64 {
        self.ram_region_bytes
    }
    fn ram_region_key(&self) -> &'static str {
        "dac.ram_region_bytes"
    }
    fn ram_write_back_threshold(&self) -> f64 {
        self.ram_write_back_threshold
    }
    /// Each page's region entry time, with a threshold.
    fn bytes_per_logical_page(&self) -> u64 {
        if self.threshold_ns.is_some() {
            8
        } else {
            0
        }
    }
    fn build(
        &self,
        _: &Geometry,
        ram_region_pages: u32,
        _: Option<Vec<u32>>,
    ) -> Result<Box<dyn Placement>, ConfigError> {
        let ram = ram_region_pages > 0;
        Ok(Box::new(Dac::new(self.regions + u32::from(ram), self.threshold_ns, ram)))
    }
}

pub struct Dac {
    regions: u32,
    threshold_ns: Option<u64>,
    /// The top region is RAM.
    ram: bool,
}

impl Dac {
    #[must_use]
    pub fn new(regions: u32, threshold_ns: Option<u64>, ram: bool) -> Self {
        assert!((1..=255).contains(&regions));
        assert!(!ram || regions >= 2, "a RAM region sits above at least one flash region");
        Self { regions, threshold_ns, ram }
    }

    fn top(&self) -> u8 {
        (self.regions - 1) as u8
    }
}

impl Placement for Dac {
    fn name(&self) -> &'static str {
        "dac"
    }

    fn regions(&self) -> u32 {
        self.regions
    }

    fn needs_residence_time(&self) -> bool {
        self.threshold_ns.is_some()
    }

    fn ram_region(&self) -> bool {
        self.ram
    }

    fn host_write(&mut self, _lpn: Lpn, current: Option<PageState>, now_ns: u64) -> u8 {
        let Some(page) = current else { return 0 };
        let young = self.threshold_ns.is_none_or(|t| now_ns.saturating_sub(page.entered_ns) < t);
        if young {
            (page.region + 1).min(self.top())
        } else {
            page.region
        }
    }

    fn cleaner_copy(&mut self, _lpn: Lpn, current: PageState, now_ns: u64) -> u8 {
        let old = self.threshold_ns.is_none_or(|t| now_ns.saturating_sub(current.entered_ns) > t);
        if old {
            current.region.saturating_sub(1)
        } else {
            current.region
        }
    }
}
