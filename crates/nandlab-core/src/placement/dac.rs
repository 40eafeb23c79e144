//! DAC dynamic data clustering (paper 000, SPEC §2.1).
//!
//! New data enters the Bottom region (0). A host update promotes the page one region hotter; the
//! cleaner demotes every valid page of a victim one region colder. With a time threshold T, a
//! promotion happens only if the page has been in its region for less than T (it was updated
//! while still young: hot), otherwise it is rewritten in the same region; a demotion only if it
//! has been there longer than T, otherwise it stays. Exactly T counts as neither (the paper says
//! "smaller than" and "exceeds").
//!
//! With a RAM region (`dac.ram_region_bytes`, paper 004's "DAC with 4 MB"), the RAM is one more
//! region on top of the flash regions: promotions from the hottest flash region reach it,
//! updates there stay there, and its written-back pages are demoted to the hottest flash
//! region (the default `Placement::ram_write_back`).

use super::{PageState, Placement};
use crate::flash::Lpn;

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
