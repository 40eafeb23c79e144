//! The engine's events: for each die, the time its queue may next start an operation
//! (docs/ALGORITHMS.md §7, "Scheduling"). Events are taken in (time, die) order: the earliest
//! first and, at one time, the lowest die first, so that dies ask for their shared bus in a
//! fixed order and a run is a pure function of its inputs.
//!
//! Two forms, chosen once from the number of dies and giving the same order:
//! - up to `SCAN_DIES` dies, the earliest event is kept and found again by a scan of the dies'
//!   times when it is taken: a few compares per event, nothing allocated, no stale entries;
//! - beyond, a binary heap of (time, die). An event moved earlier leaves its old entry behind,
//!   which is recognised (and skipped) when it comes out because the die's time differs.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Dies up to which a scan finds the next event faster than a heap keeps it.
const SCAN_DIES: usize = 32;
const NONE: u64 = u64::MAX;

#[derive(Clone, Debug)]
pub(super) struct Events {
    /// Per die: the time of its event, `NONE` if it has none.
    at_ns: Vec<u64>,
    /// Heap form (many dies); may hold entries an earlier event of their die replaced.
    heap: BinaryHeap<Reverse<(u64, u32)>>,
    /// Scan form (few dies): the earliest (time, die), time `NONE` if there is no event.
    next: (u64, u32),
    scan: bool,
}

impl Events {
    pub fn new(dies: usize) -> Self {
        Self {
            at_ns: vec![NONE; dies],
            heap: BinaryHeap::new(),
            next: (NONE, 0),
            scan: dies <= SCAN_DIES,
        }
    }

    /// The time of die `die`'s event (`u64::MAX` if none).
    #[inline(always)]
    pub fn of(&self, die: u32) -> u64 {
        self.at_ns[die as usize]
    }

    /// Gives die `die` an event at `at_ns`, earlier than the one it has (if any).
    #[inline]
    pub fn set(&mut self, die: u32, at_ns: u64) {
        debug_assert!(at_ns < self.at_ns[die as usize], "an event moved later");
        self.at_ns[die as usize] = at_ns;
        if self.scan {
            if (at_ns, die) < self.next {
                self.next = (at_ns, die);
            }
        } else {
            self.heap.push(Reverse((at_ns, die)));
        }
    }

    /// The earliest event as (time, die), without taking it. In the heap form it may be a
    /// replaced entry: `take` says so.
    #[inline(always)]
    pub fn peek(&self) -> Option<(u64, u32)> {
        if self.scan {
            (self.next.0 != NONE).then_some(self.next)
        } else {
            self.heap.peek().map(|&Reverse(e)| e)
        }
    }

    /// Whether nothing is left (in the heap form, not even replaced entries).
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.peek().is_none()
    }

    /// Takes the event `peek` returned: true if it is its die's event (which the die then no
    /// longer has), false for a replaced heap entry, which is dropped.
    #[inline]
    pub fn take(&mut self, (at_ns, die): (u64, u32)) -> bool {
        if self.scan {
            debug_assert_eq!(self.next, (at_ns, die));
            self.at_ns[die as usize] = NONE;
            let mut next = (NONE, 0);
            for (d, &t) in self.at_ns.iter().enumerate() {
                if t < next.0 {
                    next = (t, d as u32);
                }
            }
            self.next = next;
            return true;
        }
        self.heap.pop();
        let current = self.at_ns[die as usize] == at_ns;
        if current {
            self.at_ns[die as usize] = NONE;
        }
        current
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both forms take the same events in the same order on a seeded random schedule of sets
    /// and takes, and agree with a brute-force minimum over the dies.
    #[test]
    fn scan_and_heap_take_the_same_events() {
        let dies = 7u32;
        let mut scan = Events::new(dies as usize);
        let mut heap = Events::new(dies as usize);
        heap.scan = false;
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut taken = 0;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let die = (x % u64::from(dies)) as u32;
            let at = (x >> 8) % 1_000;
            if !x.is_multiple_of(3) {
                if at < scan.of(die) {
                    scan.set(die, at);
                    heap.set(die, at);
                }
                continue;
            }
            let brute = (0..dies).map(|d| (scan.of(d), d)).filter(|e| e.0 != NONE).min();
            assert_eq!(scan.peek(), brute);
            let Some(e) = scan.peek() else { continue };
            // The heap skips its replaced entries before reaching the same event.
            loop {
                let h = heap.peek().expect("the heap holds the event");
                if heap.take(h) {
                    assert_eq!(h, e);
                    break;
                }
            }
            assert!(scan.take(e));
            taken += 1;
        }
        assert!(taken > 1_000, "the schedule took {taken} events");
    }
}
