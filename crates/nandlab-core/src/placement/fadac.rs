//! FADaC: fading-average data classification (FADaC paper; docs/ALGORITHMS.md §11.3), as the
//! SepBIT paper's trace simulator runs it.
//!
//! Each logical page has a write count: +1 at each host write, −1 (not below 0) at each cleaner
//! copy. A fading average f of the host write sizes (in pages) over the mapped pages V is kept
//! per host write: f ← f + (1 − f) / V (one page a write; skipped while V = 0). A write (host
//! or cleaner copy, after its count changed) goes to class k, the smallest k with count ≤ f·10^k
//! (class 0 if f = 0), capped at the last class; class k is region k, so the most written pages
//! are in the Top region.
//!
//! Semantic difference from the reference simulator: it updates f once per request with the
//! request's length; nandlab's page FTL sees page writes, so a request of n pages updates f n
//! times by one page (the same for the reference traces, whose requests are one page).

use std::sync::Arc;

use super::{PageState, Placement, PlacementEntry, PlacementSpec, WriteClock};
use crate::error::ConfigError;
use crate::flash::{Geometry, Lpn};
use crate::ftl::FtlConfig;
use crate::spec::{check, Param, Params};

/// FADaC's parameter, in its own table `[fadac]` (left out of configurations that do not choose
/// it): `fadac.class_ratio`, the ratio between consecutive classes' count bounds. Default 10.
pub(super) const ENTRY: PlacementEntry = PlacementEntry {
    name: "fadac",
    params: &[Param::omitted("fadac", "class_ratio")],
    resolve,
};

#[derive(Clone, Copy, Debug)]
struct FadacSpec {
    regions: u32,
    class_ratio: f64,
}

fn resolve(f: &mut FtlConfig, params: &mut Params<'_>) -> Result<Arc<dyn PlacementSpec>, ConfigError> {
    let regions = *f.regions.get_or_insert(6);
    check((1..=64).contains(&regions), "ftl.regions", "must be between 1 and 64")?;
    let class_ratio = params.table("fadac").f64("class_ratio", 10.0)?;
    check(class_ratio > 1.0, "fadac.class_ratio", "must be greater than 1")?;
    Ok(Arc::new(FadacSpec { regions, class_ratio }))
}

impl PlacementSpec for FadacSpec {
    fn name(&self) -> &'static str {
        ENTRY.name
    }
    fn regions(&self) -> u32 {
        self.regions
    }
    /// A victim's pages are classified one by one: any region.
    fn cleaner_destinations_max(&self) -> u32 {
        self.regions
    }
    /// Each page's write count (4 bytes).
    fn bytes_per_logical_page(&self) -> u64 {
        4
    }
    fn build(&self, g: &Geometry, _: u32, _: Option<Vec<u32>>) -> Result<Box<dyn Placement>, ConfigError> {
        Ok(Box::new(Fadac::new(self.regions, g.logical_pages as usize, self.class_ratio)))
    }
}

pub struct Fadac {
    regions: u32,
    class_ratio: f64,
    /// LPN → write count.
    count: Vec<u32>,
    /// The fading average f.
    average: f64,
}

impl Fadac {
    #[must_use]
    pub fn new(regions: u32, logical_pages: usize, class_ratio: f64) -> Self {
        assert!((1..=64).contains(&regions) && class_ratio > 1.0);
        Self { regions, class_ratio, count: vec![0; logical_pages], average: 0.0 }
    }

    fn region(&self, count: u32) -> u8 {
        let mut bound = self.average;
        let mut class = 0;
        if bound != 0.0 {
            while f64::from(count) > bound && class < self.regions - 1 {
                bound *= self.class_ratio;
                class += 1;
            }
        }
        class as u8
    }
}

impl Placement for Fadac {
    fn name(&self) -> &'static str {
        "fadac"
    }
    fn regions(&self) -> u32 {
        self.regions
    }
    /// For the mapped pages V.
    fn needs_write_clock(&self) -> bool {
        true
    }
    fn needs_last_write(&self) -> bool {
        false
    }
    fn tick(&mut self, clock: WriteClock) {
        if clock.mapped_pages > 0 {
            let v = clock.mapped_pages as f64;
            self.average = self.average + 1.0 / v - self.average / v;
        }
    }
    fn host_write(&mut self, lpn: Lpn, _current: Option<PageState>, _now_ns: u64) -> u8 {
        let c = &mut self.count[lpn.index()];
        *c = c.saturating_add(1);
        let c = *c;
        self.region(c)
    }
    fn cleaner_copy(&mut self, lpn: Lpn, _current: PageState, _now_ns: u64) -> u8 {
        let c = &mut self.count[lpn.index()];
        *c = c.saturating_sub(1);
        let c = *c;
        self.region(c)
    }
    fn cleaner_copy_peek(&mut self, lpn: Lpn, _current: PageState, _now_ns: u64) -> u8 {
        self.region(self.count[lpn.index()].saturating_sub(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_fading_average_and_classes() {
        let mut f = Fadac::new(3, 8, 10.0);
        let tick = |f: &mut Fadac, mapped| f.tick(WriteClock { host_writes: 0, mapped_pages: mapped });
        tick(&mut f, 0);
        assert_eq!(f.average, 0.0, "no mapped page: f stays");
        assert_eq!(f.host_write(Lpn::new(0), None, 0), 0, "f = 0: class 0");
        tick(&mut f, 1);
        assert_eq!(f.average, 1.0, "0 + 1/1 − 0/1");
        tick(&mut f, 2);
        assert_eq!(f.average, 1.0, "1 + 1/2 − 1/2");
        f.average = 0.5;
        // LPN 1 written 1, 2, … times: count 1 > 0.5 → class 1; ≤ 5 stays 1; 6 > 5 → class 2.
        let classes: Vec<u8> = (0..7).map(|_| f.host_write(Lpn::new(1), None, 0)).collect();
        assert_eq!(classes, vec![1, 1, 1, 1, 1, 2, 2], "the last class catches the rest");
        let page = PageState::default();
        assert_eq!(f.cleaner_copy_peek(Lpn::new(1), page, 0), 2, "count 6 > 5");
        assert_eq!(f.count[1], 7, "a peek records nothing");
        assert_eq!(f.cleaner_copy(Lpn::new(1), page, 0), 2);
        assert_eq!(f.cleaner_copy(Lpn::new(1), page, 0), 1, "count 5");
        assert_eq!(f.cleaner_copy(Lpn::new(2), page, 0), 0, "never below 0");
        assert_eq!(f.count[2], 0);
    }

    /// Semantic difference pinned: f fades once per page write (the FTL's `tick`), so a request
    /// of 3 pages with V = 2 takes f from 0 to 1 − (1/2)³ = 0.875, where the simulator's one
    /// update by the request's length gives 0 + 3/2 − 0 = 1.5.
    #[test]
    fn the_average_fades_per_page_not_per_request() {
        let mut f = Fadac::new(3, 8, 10.0);
        for _ in 0..3 {
            f.tick(WriteClock { host_writes: 0, mapped_pages: 2 });
        }
        assert_eq!(f.average, 0.875);
    }
}
