//! DEB's data-reorganization rules (paper 004 §4.2, SPEC §3). Issue 7, in progress: the rules
//! are complete and hand-tested here; the EBR itself (a RAM region the page FTL maps pages
//! into), rule 5's write-back trigger, the wear-aware region moves of erase blocks and the
//! `placement = "deb"` config are not built yet (docs/ROADMAP.md).
//!
//! The flash is split into regions (0 = coldest, N−1 = hottest, as in DAC) plus the Extra
//! Buffer Region (EBR), battery-backed RAM above the hottest region. A page's *stable time* is
//! the time between its two most recent updates. Each region has a stable-time interval
//! [sst, lst]; a colder region's bounds are larger, and sst(i) = lst(i+1). The config lists
//! each region's upper bound lst, hottest first (the paper: 100, 200, 300, 400 s): the hottest
//! region holds [0, 100], the coldest [300, 400]. An update is *fast* when its stable time is
//! below its region's sst and *slow* above its lst.
//!
//! 1. A page written for the first time goes to the EBR.
//! 2. Stable time inside the region's interval: rewritten in the same region.
//! 3. Fast update: the next hotter region, or the EBR when the page's previous update was
//!    fast too. (The hottest region's sst is 0, so no update there is fast.)
//! 4. Slow update: the next colder region (the coldest stays).
//! 5. EBR write-back (the caller decides when): each page goes to the region whose interval
//!    holds the time since its last update (below all: the hottest; above all: the coldest).
//! 6. An update of a page in the EBR is done in place.
//! 7. Cleaning copies a valid page to the next colder region.

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
    /// lst of each region by region index (0 = coldest), in ns.
    upper_ns: Vec<u64>,
    /// Time of each page's most recent update (`NEVER`: not written yet).
    last_update_ns: Vec<u64>,
    /// One bit per page: its most recent update was fast.
    last_fast: Vec<u64>,
}

impl DebRules {
    /// `upper_s`: each region's lst in seconds, hottest first, strictly increasing (checked by
    /// the config).
    #[must_use]
    pub fn new(upper_s: &[f64], logical_pages: u64) -> Self {
        assert!(!upper_s.is_empty() && upper_s.len() <= 255);
        assert!(upper_s.windows(2).all(|w| w[0] < w[1]), "intervals must increase");
        let upper_ns = upper_s.iter().rev().map(|s| (s * 1e9).round() as u64).collect();
        Self {
            upper_ns,
            last_update_ns: vec![NEVER; logical_pages as usize],
            last_fast: vec![0; (logical_pages as usize).div_ceil(64)],
        }
    }

    #[must_use]
    pub fn regions(&self) -> u32 {
        self.upper_ns.len() as u32
    }

    fn top(&self) -> u8 {
        (self.upper_ns.len() - 1) as u8
    }

    /// [sst, lst] of region `r` in ns.
    fn interval(&self, r: u8) -> (u64, u64) {
        let r = r as usize;
        let sst = self.upper_ns.get(r + 1).copied().unwrap_or(0);
        (sst, self.upper_ns[r])
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
        let dest = match current {
            None => DebDest::Ebr,
            Some(DebDest::Ebr) => DebDest::Ebr,
            Some(DebDest::Region(r)) => {
                debug_assert_ne!(last, NEVER, "a page in a region has been written");
                let stable = now_ns.saturating_sub(last);
                let (sst, lst) = self.interval(r);
                if stable < sst {
                    let twice = self.fast_bit(lpn);
                    self.set_fast_bit(lpn, true);
                    debug_assert!(r < self.top(), "the hottest region has sst 0");
                    if twice {
                        DebDest::Ebr
                    } else {
                        DebDest::Region(r + 1)
                    }
                } else {
                    self.set_fast_bit(lpn, false);
                    if stable > lst {
                        DebDest::Region(r.saturating_sub(1))
                    } else {
                        DebDest::Region(r)
                    }
                }
            }
        };
        if current.is_none() {
            self.set_fast_bit(lpn, false);
        }
        dest
    }

    /// Rule 5: the region an EBR page is written back to, from the time since its last update.
    #[must_use]
    pub fn write_back_region(&self, lpn: Lpn, now_ns: u64) -> u8 {
        let age = now_ns.saturating_sub(self.last_update_ns[lpn as usize]);
        // The coldest region whose lower bound the age reaches; below every bound, the hottest.
        (0..=self.top()).find(|&r| age >= self.interval(r).0).unwrap_or(self.top())
    }

    /// Rule 7: a valid page the cleaner copies out of region `r`.
    #[must_use]
    pub fn cleaner_copy(r: u8) -> u8 {
        r.saturating_sub(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    /// The paper's four regions: hottest (3) [0, 100] s, 2 [100, 200], 1 [200, 300], coldest
    /// (0) [300, 400].
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
        // Region 1 holds [200, 300] s: an update 250 s later stays there.
        assert_eq!(d.host_write(5, Some(DebDest::Region(1)), 250 * S), DebDest::Region(1));
        // The bounds belong to the interval: exactly sst (200 s) and exactly lst (300 s).
        assert_eq!(d.host_write(5, Some(DebDest::Region(1)), 450 * S), DebDest::Region(1));
        assert_eq!(d.host_write(5, Some(DebDest::Region(1)), 750 * S), DebDest::Region(1));
    }

    #[test]
    fn rule_3_fast_goes_hotter_then_to_the_ebr() {
        let mut d = rules();
        d.host_write(7, None, 0);
        // Region 1's sst is 200 s: 50 s is fast, the first one → region 2.
        assert_eq!(d.host_write(7, Some(DebDest::Region(1)), 50 * S), DebDest::Region(2));
        // In region 2 ([100, 200]) 30 s later: fast again, the previous was fast → EBR.
        assert_eq!(d.host_write(7, Some(DebDest::Region(2)), 80 * S), DebDest::Ebr);
        // The hottest region ([0, 100]) has no fast update: 1 s later it stays.
        let mut d = rules();
        d.host_write(8, None, 0);
        assert_eq!(d.host_write(8, Some(DebDest::Region(3)), S), DebDest::Region(3));
        assert_eq!(d.host_write(8, Some(DebDest::Region(1)), 60 * S), DebDest::Region(2));
        assert_eq!(d.host_write(8, Some(DebDest::Region(2)), 500 * S), DebDest::Region(1));
        // The slow update cleared the fast mark: the next fast update goes one hotter only.
        assert_eq!(d.host_write(8, Some(DebDest::Region(1)), 510 * S), DebDest::Region(2));
    }

    #[test]
    fn rule_4_slow_goes_colder_and_the_coldest_stays() {
        let mut d = rules();
        d.host_write(9, None, 0);
        // Region 2's lst is 200 s: 250 s is slow → region 1.
        assert_eq!(d.host_write(9, Some(DebDest::Region(2)), 250 * S), DebDest::Region(1));
        // Coldest region, 1000 s: slow, stays in region 0.
        assert_eq!(d.host_write(9, Some(DebDest::Region(0)), 1250 * S), DebDest::Region(0));
    }

    #[test]
    fn rule_5_write_back_by_time_since_the_last_update() {
        let mut d = rules();
        for lpn in 0..5 {
            d.host_write(lpn, None, 0);
        }
        assert_eq!(d.write_back_region(0, 20 * S), 3, "20 s: hottest");
        assert_eq!(d.write_back_region(1, 150 * S), 2);
        assert_eq!(d.write_back_region(2, 200 * S), 1, "a shared bound goes to the colder");
        assert_eq!(d.write_back_region(3, 350 * S), 0);
        assert_eq!(d.write_back_region(4, 5000 * S), 0, "above every interval: coldest");
    }

    #[test]
    fn rule_6_updates_in_the_ebr_stay_in_place() {
        let mut d = rules();
        d.host_write(3, None, 0);
        assert_eq!(d.host_write(3, Some(DebDest::Ebr), 1000 * S), DebDest::Ebr);
        // The update is recorded: write-back measures from it.
        assert_eq!(d.write_back_region(3, 1010 * S), 3);
    }

    #[test]
    fn rule_7_cleaning_demotes() {
        assert_eq!(DebRules::cleaner_copy(3), 2);
        assert_eq!(DebRules::cleaner_copy(0), 0);
    }
}
