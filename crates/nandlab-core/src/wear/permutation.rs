//! `lbnNext()` of Algorithm 1: a full-period permutation of the logical blocks (the lazy
//! wear-leveling paper, §3.2, suggests a linear congruential generator), so every logical block is
//! visited once per round and two visits to the same block are as far apart as possible.
//!
//! An LCG x → (a·x + c) mod m with m a power of two, c odd and a ≡ 1 (mod 4) has full period m
//! (Hull–Dobell). m is the smallest power of two ≥ n; values ≥ n are skipped (fewer than half
//! of all steps), which keeps the visit order a permutation of 0..n.

/// Visits `0..n` in a fixed pseudo-random order, forever.
#[derive(Clone, Debug)]
pub struct LbnPermutation {
    n: u64,
    mask: u64,
    a: u64,
    c: u64,
    x: u64,
}

impl LbnPermutation {
    /// A permutation of `0..n` chosen by `seed`.
    #[must_use]
    pub fn new(n: u32, seed: u64) -> Self {
        assert!(n > 0, "no logical blocks to visit");
        let m = u64::from(n).next_power_of_two();
        let mut rng = crate::rng::Prng::new(seed);
        // Only the low bits matter (arithmetic mod m): a ≡ 1 (mod 4), c odd.
        let a = (rng.next_u64() << 2) | 1;
        let c = rng.next_u64() | 1;
        Self { n: u64::from(n), mask: m - 1, a, c, x: rng.below(m) }
    }

    /// The next logical block.
    pub fn next_lbn(&mut self) -> u32 {
        loop {
            self.x = self.a.wrapping_mul(self.x).wrapping_add(self.c) & self.mask;
            if self.x < self.n {
                return self.x as u32;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_block_once_per_round() {
        for (n, seed) in [(1, 1), (2, 7), (5, 3), (64, 9), (1000, 2), (1023, 5), (4097, 11)] {
            let mut p = LbnPermutation::new(n, seed);
            for round in 0..3 {
                let mut seen = vec![false; n as usize];
                for _ in 0..n {
                    let l = p.next_lbn() as usize;
                    assert!(!seen[l], "n {n} round {round}: {l} twice");
                    seen[l] = true;
                }
            }
        }
    }

    #[test]
    fn seeds_give_different_orders() {
        let order = |seed| {
            let mut p = LbnPermutation::new(100, seed);
            (0..100).map(|_| p.next_lbn()).collect::<Vec<_>>()
        };
        assert_ne!(order(1), order(2));
        assert_eq!(order(3), order(3));
    }
}
