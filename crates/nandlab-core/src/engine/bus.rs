//! One gang's bus (its lock-stepped channels): the time slots it is reserved for, so that a
//! command or data transfer is placed in the earliest free slot at or after the time it is
//! ready — also in a gap before transfers reserved earlier for later times (a die that becomes
//! free late must not hold the bus for a die that is ready now).
//!
//! Reservations are kept as sorted, disjoint intervals; touching intervals are merged, so a
//! saturated bus is one interval. Intervals that end at or before the engine's horizon (no
//! operation can ask for the bus before it) are dropped.

/// Dropped reservations kept before the slots are compacted.
const COMPACT_AT: usize = 32;

#[derive(Clone, Debug, Default)]
pub(crate) struct Bus {
    /// Reserved `[start, end)` intervals from `head` on, sorted, disjoint and not touching
    /// (those before `head` have been forgotten).
    slots: Vec<(u64, u64)>,
    head: usize,
    /// Total time reserved (transfers and commands), for utilization.
    pub busy_ns: u64,
}

impl Bus {
    /// Reserves `len` ns (> 0) at the earliest time ≥ `at` when the bus is free for that long,
    /// forgetting reservations that end at or before `horizon` (≤ `at`). Returns the start.
    #[inline(always)]
    pub fn reserve(&mut self, at: u64, len: u64, horizon: u64) -> u64 {
        debug_assert!(len > 0);
        debug_assert!(horizon <= at, "a reservation before the horizon");
        self.busy_ns += len;
        // The common case: after everything reserved so far.
        let after_all = self.slots[self.head..].last().is_none_or(|&(_, end)| at >= end);
        if after_all {
            self.forget(horizon);
            let live = self.head < self.slots.len();
            match self.slots.last_mut() {
                Some(last) if live && last.1 == at => last.1 = last.1.saturating_add(len),
                _ => self.slots.push((at, at.saturating_add(len))),
            }
            return at;
        }
        self.backfill(at, len, horizon)
    }

    /// Forgets the reservations that end at or before `horizon`, now and then.
    #[inline]
    fn forget(&mut self, horizon: u64) {
        if self.head == self.slots.len() {
            self.slots.clear();
            self.head = 0;
        } else if self.slots.len() >= COMPACT_AT {
            let live = &self.slots[self.head..];
            let past = live.partition_point(|&(_, end)| end <= horizon);
            self.head += past;
            if self.head >= COMPACT_AT / 2 {
                self.slots.drain(..self.head);
                self.head = 0;
            }
        }
    }

    /// The earliest gap at or after `at` (a reservation ending after `at` exists).
    #[inline(never)]
    fn backfill(&mut self, at: u64, len: u64, horizon: u64) -> u64 {
        self.forget(horizon);
        let live = &self.slots[self.head..];
        let mut i = self.head + live.partition_point(|&(_, end)| end <= at);
        let mut t = at;
        loop {
            let Some(&(start, end)) = self.slots.get(i) else {
                let last = self.slots.last_mut().expect("the bus has reservations");
                debug_assert!(t >= last.1);
                if t == last.1 {
                    last.1 = last.1.saturating_add(len);
                } else {
                    self.slots.push((t, t.saturating_add(len)));
                }
                return t;
            };
            if t.saturating_add(len) <= start {
                // Fits in the gap before slot i; merge with the neighbours it touches.
                let touches_prev = i > self.head && self.slots[i - 1].1 == t;
                let touches_next = t + len == start;
                match (touches_prev, touches_next) {
                    (true, true) => {
                        self.slots[i - 1].1 = end;
                        self.slots.remove(i);
                    }
                    (true, false) => self.slots[i - 1].1 = t + len,
                    (false, true) => self.slots[i].0 = t,
                    (false, false) => self.slots.insert(i, (t, t + len)),
                }
                return t;
            }
            t = t.max(end);
            i += 1;
        }
    }

    /// Reserved intervals (tests and invariant checks).
    #[cfg(test)]
    pub fn slots(&self) -> Vec<(u64, u64)> {
        self.slots[self.head..].to_vec()
    }

    /// The slots are sorted, disjoint and not touching.
    pub fn check(&self) {
        let live = &self.slots[self.head..];
        for w in live.windows(2) {
            let ((s0, e0), (s1, e1)) = (w[0], w[1]);
            assert!(s0 < e0 && s1 < e1, "empty bus slot");
            assert!(e0 < s1, "bus slots overlap or touch");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_merges_and_backfills() {
        let mut b = Bus::default();
        assert_eq!(b.reserve(100, 10, 0), 100);
        assert_eq!(b.reserve(110, 5, 0), 110); // touches: merged
        assert_eq!(b.slots(), vec![(100, 115)]);
        assert_eq!(b.reserve(200, 10, 0), 200);
        // Ready at 50: fits before 100.
        assert_eq!(b.reserve(50, 20, 0), 50);
        // Ready at 105 for 30: 115..145 fits before 200.
        assert_eq!(b.reserve(105, 30, 0), 115);
        assert_eq!(b.slots(), vec![(50, 70), (100, 145), (200, 210)]);
        // Ready at 60 for 60: 70..100 too short, 145..200 too short? 55 < 60: after 210.
        assert_eq!(b.reserve(60, 60, 0), 210);
        assert_eq!(b.slots(), vec![(50, 70), (100, 145), (200, 270)]);
        // Exactly filling a gap merges three slots into one.
        assert_eq!(b.reserve(70, 30, 0), 70);
        assert_eq!(b.slots(), vec![(50, 145), (200, 270)]);
        assert_eq!(b.busy_ns, 10 + 5 + 10 + 20 + 30 + 60 + 30);
        b.check();
    }

    #[test]
    fn the_horizon_forgets_the_past() {
        let mut b = Bus::default();
        for i in 0..COMPACT_AT as u64 {
            b.reserve(20 * i, 10, 0);
        }
        let t = 20 * COMPACT_AT as u64;
        assert_eq!(b.reserve(t - 5, 1, t - 5), t - 5);
        assert_eq!(b.slots(), vec![(t - 5, t - 4)]);
        // A reservation ready before the last one's end backfills.
        assert_eq!(b.reserve(t - 5, 2, t - 5), t - 4);
        assert_eq!(b.slots(), vec![(t - 5, t - 2)]);
        b.check();
    }
}
