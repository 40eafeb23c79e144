//! Goal: each placement rule decides exactly as docs/ALGORITHMS.md §2.1 says.
//! Method: call the policies directly with hand-picked page states and times.

use super::dac::Dac;
use super::oracle::{next_write_distances, Oracle, NEVER};
use super::{PageState, Placement};
use crate::flash::Lpn;

const S: u64 = 1_000_000_000;

#[test]
fn dac_without_threshold_promotes_and_demotes_one_step() {
    let mut d = Dac::new(4, None, false);
    assert_eq!(d.host_write(Lpn::new(7), None, 0), 0, "new data enters the Bottom region");
    let at = |region| PageState { region, entered_ns: 0, last_write: 0 };
    assert_eq!(d.host_write(Lpn::new(7), Some(at(0)), 5 * S), 1);
    assert_eq!(d.host_write(Lpn::new(7), Some(at(2)), 5 * S), 3);
    assert_eq!(d.host_write(Lpn::new(7), Some(at(3)), 5 * S), 3, "Top stays Top");
    assert_eq!(d.cleaner_copy(Lpn::new(7), at(3), 5 * S), 2);
    assert_eq!(d.cleaner_copy(Lpn::new(7), at(0), 5 * S), 0, "Bottom stays Bottom");
    assert!(!d.needs_residence_time());
}

#[test]
fn dac_time_threshold() {
    let mut d = Dac::new(4, Some(10 * S), false);
    assert!(d.needs_residence_time());
    let page = PageState { region: 1, entered_ns: 100 * S, last_write: 0 };
    // Updated 9 s after entering: young → promoted.
    assert_eq!(d.host_write(Lpn::new(1), Some(page), 109 * S), 2);
    // Updated 11 s after: old → rewritten in the same region.
    assert_eq!(d.host_write(Lpn::new(1), Some(page), 111 * S), 1);
    // Exactly T: neither younger than T nor older.
    assert_eq!(d.host_write(Lpn::new(1), Some(page), 110 * S), 1);
    assert_eq!(d.cleaner_copy(Lpn::new(1), page, 110 * S), 1);
    // Cleaned 11 s after entering: old → demoted; 9 s: stays.
    assert_eq!(d.cleaner_copy(Lpn::new(1), page, 111 * S), 0);
    assert_eq!(d.cleaner_copy(Lpn::new(1), page, 109 * S), 1);
}

#[test]
fn next_write_distances_exact() {
    // Writes of LPNs a b a c b a at indexes 0..6.
    let writes = [0, 1, 0, 2, 1, 0].map(Lpn::new);
    let got = next_write_distances(&writes, 3);
    assert_eq!(got, vec![2, 3, 3, NEVER, NEVER, NEVER]);
}

#[test]
fn oracle_bands_host_and_cleaner_writes() {
    // 3 regions, boundaries at 2 and 10 host page writes.
    let future = vec![1, 5, NEVER, 20];
    let mut o = Oracle::new(3, vec![2, 10], future, 8);
    assert_eq!(o.host_write(Lpn::new(0), None, 0), 2, "distance 1 < 2: hottest (Top)");
    assert_eq!(o.host_write(Lpn::new(1), None, 0), 1, "distance 5 in [2, 10): middle");
    assert_eq!(o.host_write(Lpn::new(2), None, 0), 0, "never rewritten: Bottom");
    assert_eq!(o.host_write(Lpn::new(3), None, 0), 0, "distance 20 >= 10: Bottom");
    // LPN 3 is next written at index 3 + 20 = 23; now 4 writes done → 19 away → Bottom.
    let page = PageState { region: 0, entered_ns: 0, last_write: 0 };
    assert_eq!(o.cleaner_copy(Lpn::new(3), page, 0), 0);
    // LPN 1 is next written at 1 + 5 = 6; 2 away now → middle band.
    assert_eq!(o.cleaner_copy(Lpn::new(1), page, 0), 1);
}
