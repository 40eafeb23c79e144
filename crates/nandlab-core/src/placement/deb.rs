//! DEB's data-reorganization rules (LFSS thesis §4.1, docs/ALGORITHMS.md §3) and the `deb`
//! placement.
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

use std::sync::Arc;

use super::{PageState, Placement, PlacementEntry, PlacementSpec};
use crate::error::ConfigError;
use crate::flash::{Geometry, Lpn};
use crate::ftl::FtlConfig;
use crate::spec::{check, Param, Params};

/// The LFSS thesis's stable-time interval boundaries (seconds, hottest first).
pub const DEB_INTERVALS_S: [f64; 4] = [100.0, 200.0, 300.0, 400.0];
/// The LFSS thesis's EBR: 4 MB.
pub const EBR_SIZE_BYTES_DEFAULT: u64 = 4 << 20;

/// DEB's parameters, in its own table `[deb]` (LFSS thesis §4.1, docs/ALGORITHMS.md §3):
/// - `deb.ebr_size_bytes`: the Extra Buffer Region (battery-backed RAM). Default 4 MiB (the
///   thesis's); 0 = no EBR (its "LFSS (No EBR)").
/// - `deb.stable_time_intervals_s`: interval boundaries in seconds, hottest first, strictly
///   increasing; one flash region per value. Default [100, 200, 300, 400]: EBR [0, 100], hottest
///   flash region [100, 200], ..., coldest [400, ∞).
/// - `deb.ebr_write_back_threshold`: rule 5, write back when the EBR's used space would pass
///   this fraction of it, down to below half of it. Default 1.0 (when full).
/// - `deb.wear_aware`: wear-aware region moves at cleaning (an erased block goes to a hotter
///   region when it is less worn, a colder one when more worn). Default true.
pub(super) const ENTRY: PlacementEntry = PlacementEntry {
    name: "deb",
    params: &[
        Param::new("deb", "ebr_size_bytes"),
        Param::new("deb", "stable_time_intervals_s"),
        Param::new("deb", "ebr_write_back_threshold"),
        Param::new("deb", "wear_aware"),
    ],
    resolve,
};

/// `[deb]` resolved: one flash region per stable-time interval, the EBR, rule 5's threshold,
/// wear-aware region moves.
#[derive(Clone, Debug)]
struct DebSpec {
    intervals_s: Vec<f64>,
    ebr_size_bytes: u64,
    ebr_write_back_threshold: f64,
    wear_aware: bool,
}

fn resolve(f: &mut FtlConfig, params: &mut Params<'_>) -> Result<Arc<dyn PlacementSpec>, ConfigError> {
    let mut d = params.table("deb");
    let key = "deb.stable_time_intervals_s";
    let iv: Vec<f64> = d.or("stable_time_intervals_s", DEB_INTERVALS_S.to_vec())?;
    check((1..=64).contains(&iv.len()), key, "needs 1 to 64 values (one flash region each)")?;
    let regions = *f.regions.get_or_insert(iv.len() as u32);
    check(
        regions as usize == iv.len(),
        "ftl.regions",
        format!(
            "DEB has one flash region per stable-time interval: deb.stable_time_intervals_s \
             gives {}; leave ftl.regions unset",
            iv.len()
        ),
    )?;
    check(
        iv.iter().all(|v| v.is_finite() && *v > 0.0),
        key,
        "values must be positive, finite seconds",
    )?;
    if let Some(i) = iv.windows(2).position(|w| w[0] >= w[1]) {
        return Err(ConfigError::new(
            key,
            format!(
                "must be strictly increasing, hottest region first: value {} ({} s) is \
                 followed by {} s",
                i,
                iv[i],
                iv[i + 1]
            ),
        ));
    }
    let ebr_size_bytes = d.or("ebr_size_bytes", EBR_SIZE_BYTES_DEFAULT)?;
    let t = d.f64("ebr_write_back_threshold", 1.0)?;
    check(t > 0.0 && t <= 1.0, "deb.ebr_write_back_threshold", "must be in (0, 1] (a fraction of the EBR)")?;
    let wear_aware = d.or("wear_aware", true)?;
    Ok(Arc::new(DebSpec {
        intervals_s: iv,
        ebr_size_bytes,
        ebr_write_back_threshold: t,
        wear_aware,
    }))
}

impl PlacementSpec for DebSpec {
    fn name(&self) -> &'static str {
        ENTRY.name
    }
    fn regions(&self) -> u32 {
        self.intervals_s.len() as u32
    }
    fn ram_region_bytes(&self) -> u64 {
        self.ebr_size_bytes
    }
    fn ram_region_key(&self) -> &'static str {
        "deb.ebr_size_bytes"
    }
    /// Its regions are intervals of simulated time since a page's last update.
    fn reads_time(&self) -> bool {
        true
    }
    fn ram_write_back_threshold(&self) -> f64 {
        self.ebr_write_back_threshold
    }
    fn wear_aware_allocation(&self) -> bool {
        self.wear_aware
    }
    /// Each page's last update time (and a fast-update bit).
    fn bytes_per_logical_page(&self) -> u64 {
        8
    }
    fn build(
        &self,
        geometry: &Geometry,
        ram_region_pages: u32,
        _: Option<Vec<u32>>,
    ) -> Result<Box<dyn Placement>, ConfigError> {
        Ok(Box::new(Deb::new(&self.intervals_s, geometry.logical_pages, ram_region_pages > 0)))
    }
}

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
        self.last_fast[lpn.index() / 64] & (1 << (lpn.get() % 64)) != 0
    }

    fn set_fast_bit(&mut self, lpn: Lpn, fast: bool) {
        let (w, bit) = (lpn.index() / 64, 1u64 << (lpn.get() % 64));
        if fast {
            self.last_fast[w] |= bit;
        } else {
            self.last_fast[w] &= !bit;
        }
    }

    /// Rules 1-4 and 6: where a host write of `lpn` goes; `current` is where the page lives
    /// now (`None`: never written). Records the update.
    pub fn host_write(&mut self, lpn: Lpn, current: Option<DebDest>, now_ns: u64) -> DebDest {
        let last = std::mem::replace(&mut self.last_update_ns[lpn.index()], now_ns);
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
        let age = now_ns.saturating_sub(self.last_update_ns[lpn.index()]);
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
        assert_eq!(d.host_write(Lpn::new(5), None, 10 * S), DebDest::Ebr);
    }

    #[test]
    fn rule_2_stable_time_inside_the_interval_stays() {
        let mut d = rules();
        d.host_write(Lpn::new(5), None, 0);
        // Region 1 holds [300, 400] s: an update 350 s later stays there.
        assert_eq!(d.host_write(Lpn::new(5), Some(DebDest::Region(1)), 350 * S), DebDest::Region(1));
        // The bounds belong to the interval: exactly sst (300 s) and exactly lst (400 s).
        assert_eq!(d.host_write(Lpn::new(5), Some(DebDest::Region(1)), 650 * S), DebDest::Region(1));
        assert_eq!(d.host_write(Lpn::new(5), Some(DebDest::Region(1)), 1050 * S), DebDest::Region(1));
        // The hottest flash region holds [100, 200]: 150 s stays.
        assert_eq!(d.host_write(Lpn::new(5), Some(DebDest::Region(3)), 1200 * S), DebDest::Region(3));
    }

    #[test]
    fn rule_3_fast_goes_hotter_then_to_the_ebr() {
        let mut d = rules();
        d.host_write(Lpn::new(7), None, 0);
        // Region 1's sst is 300 s: 50 s is fast, the first one → region 2.
        assert_eq!(d.host_write(Lpn::new(7), Some(DebDest::Region(1)), 50 * S), DebDest::Region(2));
        // In region 2 ([200, 300]) 30 s later: fast again, the previous was fast → EBR.
        assert_eq!(d.host_write(Lpn::new(7), Some(DebDest::Region(2)), 80 * S), DebDest::Ebr);
        // The hottest flash region's next hotter region is the EBR: a first fast update there
        // (99 s < 100 s) goes to the EBR too.
        let mut d = rules();
        d.host_write(Lpn::new(8), None, 0);
        assert_eq!(d.host_write(Lpn::new(8), Some(DebDest::Region(3)), 99 * S), DebDest::Ebr);
        // A slow update clears the fast mark: the next fast update goes one hotter only.
        assert_eq!(d.host_write(Lpn::new(8), Some(DebDest::Region(1)), 609 * S), DebDest::Region(0));
        assert_eq!(d.host_write(Lpn::new(8), Some(DebDest::Region(0)), 619 * S), DebDest::Region(1));
        // ... and a second one in a row goes to the EBR from any region.
        assert_eq!(d.host_write(Lpn::new(8), Some(DebDest::Region(1)), 629 * S), DebDest::Ebr);
    }

    #[test]
    fn rule_4_slow_goes_colder_and_the_coldest_stays() {
        let mut d = rules();
        d.host_write(Lpn::new(9), None, 0);
        // Region 2's lst is 300 s: 350 s is slow → region 1.
        assert_eq!(d.host_write(Lpn::new(9), Some(DebDest::Region(2)), 350 * S), DebDest::Region(1));
        // The coldest region has no upper bound: 10,000 s later it stays in region 0.
        assert_eq!(d.host_write(Lpn::new(9), Some(DebDest::Region(0)), 10_350 * S), DebDest::Region(0));
    }

    #[test]
    fn rule_5_write_back_by_time_since_the_last_update() {
        let mut d = rules();
        for lpn in 0..6 {
            d.host_write(Lpn::new(lpn), None, 0);
        }
        assert_eq!(d.write_back_region(Lpn::new(0), 20 * S), 3, "inside the EBR's interval: hottest");
        assert_eq!(d.write_back_region(Lpn::new(1), 150 * S), 3);
        assert_eq!(d.write_back_region(Lpn::new(2), 200 * S), 2, "a shared bound goes to the colder");
        assert_eq!(d.write_back_region(Lpn::new(3), 350 * S), 1);
        assert_eq!(d.write_back_region(Lpn::new(4), 400 * S), 0);
        assert_eq!(d.write_back_region(Lpn::new(5), 5000 * S), 0, "above every bound: coldest");
    }

    #[test]
    fn rule_6_updates_in_the_ebr_stay_in_place() {
        let mut d = rules();
        d.host_write(Lpn::new(3), None, 0);
        assert_eq!(d.host_write(Lpn::new(3), Some(DebDest::Ebr), 1000 * S), DebDest::Ebr);
        // The update is recorded: write-back measures from it.
        assert_eq!(d.write_back_region(Lpn::new(3), 1010 * S), 3);
        assert_eq!(d.write_back_region(Lpn::new(3), 1250 * S), 2);
    }

    #[test]
    fn rule_7_cleaning_demotes() {
        assert_eq!(DebRules::cleaner_copy(3), 2);
        assert_eq!(DebRules::cleaner_copy(0), 0);
    }

    #[test]
    fn the_placement_puts_the_ebr_above_the_flash_regions_or_drops_it() {
        let state = |region| Some(PageState { region, entered_ns: 0, last_write: 0 });
        let mut with = Deb::new(&[100.0, 200.0, 300.0, 400.0], 8, true);
        assert_eq!((with.regions(), with.ram_region()), (5, true));
        assert_eq!(with.host_write(Lpn::new(1), None, 0), 4, "rule 1: the EBR is region 4");
        assert_eq!(with.host_write(Lpn::new(1), state(4), 10 * S), 4, "rule 6");
        let page = PageState { region: 4, entered_ns: 0, last_write: 0 };
        assert_eq!(with.ram_write_back(Lpn::new(1), page, 260 * S), 2, "rule 5: 250 s → region 2");
        // No EBR (the paper's "LFSS (No EBR)"): the EBR's pages go to the hottest region.
        let mut without = Deb::new(&[100.0, 200.0, 300.0, 400.0], 8, false);
        assert_eq!((without.regions(), without.ram_region()), (4, false));
        assert_eq!(without.host_write(Lpn::new(1), None, 0), 3);
        assert_eq!(without.host_write(Lpn::new(1), state(3), 10 * S), 3, "fast in the hottest stays");
        assert_eq!(without.cleaner_copy(Lpn::new(1), PageState { region: 3, entered_ns: 0, last_write: 0 }, 0), 2);
    }
}
