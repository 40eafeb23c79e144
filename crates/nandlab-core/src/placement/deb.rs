//! DEB's data-reorganization rules (paper 004 §4.1, SPEC §3) and the `deb` placement.
//!
//! The flash is split into regions (0 = coldest, N−1 = hottest, as in DAC) plus the Extra
//! Buffer Region (EBR), battery-backed RAM above the hottest region (the page FTL keeps it:
//! `ftl::ram_region`). A page's *stable time* is the time between its two most recent updates.
//! Each region has a stable-time interval [sst, lst]; a colder region's bounds are larger, and
//! sst(i) = lst(i+1). The config lists the interval boundaries hottest first (the paper's 100,
//! 200, 300, 400 s): the EBR holds [0, 100], the hottest flash region [100, 200], the next
//! [200, 300], then [300, 400], and the coldest [400, ∞). Read this way every listed value
//! matters, and the hottest flash region has fast updates that lead into the EBR, which is what
//! lets the EBR "gather the most frequently updated data". An update is *fast* when its stable
//! time is below its region's sst and *slow* above its lst.
//!
//! 1. A page written for the first time goes to the EBR.
//! 2. Stable time inside the region's interval: rewritten in the same region.
//! 3. Fast update: the next hotter region, or the EBR when the page's previous update was
//!    fast too. The next hotter region of the hottest flash region is the EBR.
//! 4. Slow update: the next colder region (the coldest has no upper bound).
//! 5. EBR write-back (the FTL decides when): each page goes to the region whose interval holds
//!    the time since its last update; an age inside the EBR's own interval goes to the hottest
//!    flash region. A shared bound belongs to the colder region.
//! 6. An update of a page in the EBR is done in place (it is not fast: the fast mark clears).
//! 7. Cleaning copies a valid page to the next colder region.
//!
//! Without an EBR (`deb.ebr_size_bytes = 0`, the paper's "LFSS (No EBR)"), every destination
//! that would be the EBR is the hottest flash region.

use super::{PageState, Placement};
use crate::flash::Lpn;

/// Where DEB puts a page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DebDest {
    /// The Extra Buffer Region (RAM).
    Ebr,
    /// A flash region (0 = coldest).
    Region(u8),
}

const NEVER: u64 = u64::MAX;

/// Per-page update history and the regions' stable-time intervals.
pub struct DebRules {
    /// sst of each flash region by region index (0 = coldest), in ns; the hottest region's sst
    /// is the EBR's lst.
    sst_ns: Vec<u64>,
    /// Time of each page's most recent update (`NEVER`: not written yet).
    last_update_ns: Vec<u64>,
    /// One bit per page: its most recent update was fast.
    last_fast: Vec<u64>,
}

impl DebRules {
    /// `bounds_s`: the interval boundaries in seconds, hottest first, strictly increasing
    /// (checked by the config); one flash region per value.
    #[must_use]
    pub fn new(bounds_s: &[f64], logical_pages: u64) -> Self {
        assert!(!bounds_s.is_empty() && bounds_s.len() <= 64);
        assert!(bounds_s.windows(2).all(|w| w[0] < w[1]), "intervals must increase");
        let sst_ns = bounds_s.iter().rev().map(|s| (s * 1e9).round() as u64).collect();
        Self {
            sst_ns,
            last_update_ns: vec![NEVER; logical_pages as usize],
            last_fast: vec![0; (logical_pages as usize).div_ceil(64)],
        }
    }

    /// Flash regions (the EBR not counted).
    #[must_use]
    pub fn regions(&self) -> u32 {
        self.sst_ns.len() as u32
    }

    fn top(&self) -> u8 {
        (self.sst_ns.len() - 1) as u8
    }

    /// [sst, lst] of flash region `r` in ns (the coldest's lst is unbounded).
    fn interval(&self, r: u8) -> (u64, u64) {
        let r = r as usize;
        let lst = if r == 0 { u64::MAX } else { self.sst_ns[r - 1] };
        (self.sst_ns[r], lst)
    }

    fn fast_bit(&self, lpn: Lpn) -> bool {
        self.last_fast[(lpn / 64) as usize] & (1 << (lpn % 64)) != 0
    }

    fn set_fast_bit(&mut self, lpn: Lpn, fast: bool) {
        let (w, bit) = ((lpn / 64) as usize, 1u64 << (lpn % 64));
        if fast {
            self.last_fast[w] |= bit;
        } else {
            self.last_fast[w] &= !bit;
        }
    }

    /// Rules 1-4 and 6: where a host write of `lpn` goes; `current` is where the page lives
    /// now (`None`: never written). Records the update.
    pub fn host_write(&mut self, lpn: Lpn, current: Option<DebDest>, now_ns: u64) -> DebDest {
        let last = std::mem::replace(&mut self.last_update_ns[lpn as usize], now_ns);
        let Some(DebDest::Region(r)) = current else {
            // Rules 1 and 6.
            self.set_fast_bit(lpn, false);
            return DebDest::Ebr;
        };
        // A page trimmed and written again keeps no history: its "last update" is unknown, so
        // the update counts as inside its interval.
        let stable = if last == NEVER { self.interval(r).0 } else { now_ns.saturating_sub(last) };
        let (sst, lst) = self.interval(r);
        if stable < sst {
            let twice = self.fast_bit(lpn);
            self.set_fast_bit(lpn, true);
            if twice || r == self.top() {
                DebDest::Ebr
            } else {
                DebDest::Region(r + 1)
            }
        } else {
            self.set_fast_bit(lpn, false);
            if stable > lst {
                DebDest::Region(r - 1)
            } else {
                DebDest::Region(r)
            }
        }
    }

    /// Rule 5: the region an EBR page is written back to, from the time since its last update.
    #[must_use]
    pub fn write_back_region(&self, lpn: Lpn, now_ns: u64) -> u8 {
        let age = now_ns.saturating_sub(self.last_update_ns[lpn as usize]);
        // The coldest region whose lower bound the age reaches; below every bound (the EBR's
        // own interval), the hottest.
        (0..=self.top()).find(|&r| age >= self.interval(r).0).unwrap_or(self.top())
    }

    /// Rule 7: a valid page the cleaner copies out of region `r`.
    #[must_use]
    pub fn cleaner_copy(r: u8) -> u8 {
        r.saturating_sub(1)
    }
}

/// The `deb` placement: `DebRules` over the page FTL's regions, the EBR being the extra top
/// region (index = flash regions) when it has a size.
pub struct Deb {
    rules: DebRules,
    ebr: bool,
}

impl Deb {
    #[must_use]
    pub fn new(bounds_s: &[f64], logical_pages: u64, ebr: bool) -> Self {
        Self { rules: DebRules::new(bounds_s, logical_pages), ebr }
    }

    fn ebr_index(&self) -> u8 {
        self.rules.regions() as u8
    }
}

impl Placement for Deb {
    fn name(&self) -> &'static str {
        "deb"
    }

    fn regions(&self) -> u32 {
        self.rules.regions() + u32::from(self.ebr)
    }

    fn ram_region(&self) -> bool {
        self.ebr
    }

    fn host_write(&mut self, lpn: Lpn, current: Option<PageState>, now_ns: u64) -> u8 {
        let ebr = self.ebr_index();
        let current =
            current.map(|p| if p.region == ebr { DebDest::Ebr } else { DebDest::Region(p.region) });
        match self.rules.host_write(lpn, current, now_ns) {
            DebDest::Ebr if self.ebr => ebr,
            DebDest::Ebr => self.rules.top(),
            DebDest::Region(r) => r,
        }
    }

    fn cleaner_copy(&mut self, _lpn: Lpn, current: PageState, _now_ns: u64) -> u8 {
        DebRules::cleaner_copy(current.region)
    }

    fn ram_write_back(&mut self, lpn: Lpn, _current: PageState, now_ns: u64) -> u8 {
        self.rules.write_back_region(lpn, now_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    /// The paper's boundaries: EBR [0, 100] s, hottest flash region (3) [100, 200], 2 [200,
    /// 300], 1 [300, 400], coldest (0) [400, ∞).
    fn rules() -> DebRules {
        DebRules::new(&[100.0, 200.0, 300.0, 400.0], 64)
    }

    #[test]
    fn rule_1_new_pages_go_to_the_ebr() {
        let mut d = rules();
        assert_eq!(d.host_write(5, None, 10 * S), DebDest::Ebr);
    }

    #[test]
    fn rule_2_stable_time_inside_the_interval_stays() {
        let mut d = rules();
        d.host_write(5, None, 0);
        // Region 1 holds [300, 400] s: an update 350 s later stays there.
        assert_eq!(d.host_write(5, Some(DebDest::Region(1)), 350 * S), DebDest::Region(1));
        // The bounds belong to the interval: exactly sst (300 s) and exactly lst (400 s).
        assert_eq!(d.host_write(5, Some(DebDest::Region(1)), 650 * S), DebDest::Region(1));
        assert_eq!(d.host_write(5, Some(DebDest::Region(1)), 1050 * S), DebDest::Region(1));
        // The hottest flash region holds [100, 200]: 150 s stays.
        assert_eq!(d.host_write(5, Some(DebDest::Region(3)), 1200 * S), DebDest::Region(3));
    }

    #[test]
    fn rule_3_fast_goes_hotter_then_to_the_ebr() {
        let mut d = rules();
        d.host_write(7, None, 0);
        // Region 1's sst is 300 s: 50 s is fast, the first one → region 2.
        assert_eq!(d.host_write(7, Some(DebDest::Region(1)), 50 * S), DebDest::Region(2));
        // In region 2 ([200, 300]) 30 s later: fast again, the previous was fast → EBR.
        assert_eq!(d.host_write(7, Some(DebDest::Region(2)), 80 * S), DebDest::Ebr);
        // The hottest flash region's next hotter region is the EBR: a first fast update there
        // (99 s < 100 s) goes to the EBR too.
        let mut d = rules();
        d.host_write(8, None, 0);
        assert_eq!(d.host_write(8, Some(DebDest::Region(3)), 99 * S), DebDest::Ebr);
        // A slow update clears the fast mark: the next fast update goes one hotter only.
        assert_eq!(d.host_write(8, Some(DebDest::Region(1)), 609 * S), DebDest::Region(0));
        assert_eq!(d.host_write(8, Some(DebDest::Region(0)), 619 * S), DebDest::Region(1));
        // ... and a second one in a row goes to the EBR from any region.
        assert_eq!(d.host_write(8, Some(DebDest::Region(1)), 629 * S), DebDest::Ebr);
    }

    #[test]
    fn rule_4_slow_goes_colder_and_the_coldest_stays() {
        let mut d = rules();
        d.host_write(9, None, 0);
        // Region 2's lst is 300 s: 350 s is slow → region 1.
        assert_eq!(d.host_write(9, Some(DebDest::Region(2)), 350 * S), DebDest::Region(1));
        // The coldest region has no upper bound: 10,000 s later it stays in region 0.
        assert_eq!(d.host_write(9, Some(DebDest::Region(0)), 10_350 * S), DebDest::Region(0));
    }

    #[test]
    fn rule_5_write_back_by_time_since_the_last_update() {
        let mut d = rules();
        for lpn in 0..6 {
            d.host_write(lpn, None, 0);
        }
        assert_eq!(d.write_back_region(0, 20 * S), 3, "inside the EBR's interval: hottest");
        assert_eq!(d.write_back_region(1, 150 * S), 3);
        assert_eq!(d.write_back_region(2, 200 * S), 2, "a shared bound goes to the colder");
        assert_eq!(d.write_back_region(3, 350 * S), 1);
        assert_eq!(d.write_back_region(4, 400 * S), 0);
        assert_eq!(d.write_back_region(5, 5000 * S), 0, "above every bound: coldest");
    }

    #[test]
    fn rule_6_updates_in_the_ebr_stay_in_place() {
        let mut d = rules();
        d.host_write(3, None, 0);
        assert_eq!(d.host_write(3, Some(DebDest::Ebr), 1000 * S), DebDest::Ebr);
        // The update is recorded: write-back measures from it.
        assert_eq!(d.write_back_region(3, 1010 * S), 3);
        assert_eq!(d.write_back_region(3, 1250 * S), 2);
    }

    #[test]
    fn rule_7_cleaning_demotes() {
        assert_eq!(DebRules::cleaner_copy(3), 2);
        assert_eq!(DebRules::cleaner_copy(0), 0);
    }

    #[test]
    fn the_placement_puts_the_ebr_above_the_flash_regions_or_drops_it() {
        let state = |region| Some(PageState { region, entered_ns: 0 });
        let mut with = Deb::new(&[100.0, 200.0, 300.0, 400.0], 8, true);
        assert_eq!((with.regions(), with.ram_region()), (5, true));
        assert_eq!(with.host_write(1, None, 0), 4, "rule 1: the EBR is region 4");
        assert_eq!(with.host_write(1, state(4), 10 * S), 4, "rule 6");
        let page = PageState { region: 4, entered_ns: 0 };
        assert_eq!(with.ram_write_back(1, page, 260 * S), 2, "rule 5: 250 s → region 2");
        // No EBR (the paper's "LFSS (No EBR)"): the EBR's pages go to the hottest region.
        let mut without = Deb::new(&[100.0, 200.0, 300.0, 400.0], 8, false);
        assert_eq!((without.regions(), without.ram_region()), (4, false));
        assert_eq!(without.host_write(1, None, 0), 3);
        assert_eq!(without.host_write(1, state(3), 10 * S), 3, "fast in the hottest stays");
        assert_eq!(without.cleaner_copy(1, PageState { region: 3, entered_ns: 0 }, 0), 2);
    }
}
