//! Static wear leveling: Chang et al.'s SW Leveler (Design Automation Conference 2007), the
//! baseline of the lazy wear-leveling paper (§2.4, §5; docs/PAPERS.md, docs/ALGORITHMS.md §6).
//!
//! An erase bitmap holds one bit per set of `set_blocks` consecutive physical blocks: set when
//! a block of the set is erased. `ecnt` counts erases and `fcnt` set bits since the bitmap was
//! last reset. Whenever `ecnt / fcnt ≥ TH` (the paper: "the ratio of the total erase count to
//! the total number of recently erased flash blocks", TH = 16), the leveler takes the next set
//! whose bit is clear, scanning cyclically from `findex`, and forces the data out of its blocks
//! (`WearHost::evict`), so blocks holding static data rejoin garbage collection. When every
//! bit is set, the bitmap is reset and `findex` starts at a random set.
//!
//! A forced set whose blocks have nothing to evict (free blocks, open blocks, data being
//! updated) is marked anyway: those blocks are about to be erased by ordinary cleaning, and
//! marking keeps each forcing round finite.

use std::sync::Arc;

use super::spec::{ResolvedLeveler, WearEntry};
use super::{WearHost, WearLeveler, WearLevelingStats, WearSetup};
use crate::flash::BlockId;
use crate::rng::Prng;
use crate::spec::{check, Param};

/// Static's parameters, in `[wear]`: `threshold` (TH, erases since the bitmap reset per erased
/// set that force a set; default 16) and `set_blocks` (blocks per erase-bitmap set; default 1,
/// the paper's "recently erased blocks").
pub(super) const ENTRY: WearEntry = WearEntry {
    name: "static",
    params: &[Param::new("wear", "threshold"), Param::new("wear", "set_blocks")],
    resolve: |params| {
        let threshold = params.f64("threshold", 16.0)?;
        check(threshold >= 1.0, "wear.threshold", "must be >= 1")?;
        let set_blocks = params.u32("set_blocks", 1)?;
        check(set_blocks >= 1, "wear.set_blocks", "must be at least 1")?;
        Ok(Arc::new(StaticSpec { threshold, set_blocks }))
    },
};

/// Static wear leveling with TH and the set size resolved.
#[derive(Clone, Copy, Debug)]
struct StaticSpec {
    threshold: f64,
    set_blocks: u32,
}

impl ResolvedLeveler for StaticSpec {
    fn build(&self, setup: WearSetup) -> Box<dyn WearLeveler> {
        Box::new(StaticWearLeveling::new(
            self.threshold,
            self.set_blocks,
            setup.physical_blocks,
            setup.seed,
        ))
    }
}

#[derive(Clone, Debug)]
pub struct StaticWearLeveling {
    threshold: f64,
    set_blocks: u32,
    physical_blocks: u32,
    sets: u32,
    bits: Vec<u64>,
    ecnt: u64,
    fcnt: u32,
    findex: u32,
    rng: Prng,
    forced_sets: u64,
    evicted_blocks: u64,
    bitmap_resets: u64,
}

impl StaticWearLeveling {
    #[must_use]
    pub fn new(threshold: f64, set_blocks: u32, physical_blocks: u32, seed: u64) -> Self {
        assert!(threshold > 0.0 && set_blocks > 0 && physical_blocks > 0);
        let sets = physical_blocks.div_ceil(set_blocks);
        let mut rng = Prng::new(seed);
        let findex = rng.below(u64::from(sets)) as u32;
        Self {
            threshold,
            set_blocks,
            physical_blocks,
            sets,
            bits: vec![0; (sets as usize).div_ceil(64)],
            ecnt: 0,
            fcnt: 0,
            findex,
            rng,
            forced_sets: 0,
            evicted_blocks: 0,
            bitmap_resets: 0,
        }
    }


    fn is_set(&self, set: u32) -> bool {
        self.bits[(set / 64) as usize] & (1 << (set % 64)) != 0
    }

    fn mark(&mut self, set: u32) {
        if !self.is_set(set) {
            self.bits[(set / 64) as usize] |= 1 << (set % 64);
            self.fcnt += 1;
        }
    }

    fn reset(&mut self) {
        self.bits.fill(0);
        self.ecnt = 0;
        self.fcnt = 0;
        self.findex = self.rng.below(u64::from(self.sets)) as u32;
        self.bitmap_resets += 1;
    }

    fn over_threshold(&self) -> bool {
        self.fcnt > 0 && self.ecnt as f64 >= self.threshold * f64::from(self.fcnt)
    }
}

impl WearLeveler for StaticWearLeveling {
    fn name(&self) -> &'static str {
        "static"
    }

    fn erased(&mut self, b: BlockId) {
        self.ecnt += 1;
        self.mark(b.get() / self.set_blocks);
    }

    fn wants_work(&self) -> bool {
        self.fcnt == self.sets || self.over_threshold()
    }

    fn work(&mut self, host: &mut dyn WearHost) {
        loop {
            if self.fcnt == self.sets {
                self.reset();
                return;
            }
            if !self.over_threshold() {
                return;
            }
            while self.is_set(self.findex) {
                self.findex = (self.findex + 1) % self.sets;
            }
            let set = self.findex;
            self.forced_sets += 1;
            let first = set * self.set_blocks;
            let end = (first + self.set_blocks).min(self.physical_blocks);
            for b in (first..end).map(BlockId::new) {
                if host.evict(b) {
                    self.evicted_blocks += 1;
                    self.erased(b);
                }
            }
            self.mark(set);
            self.findex = (self.findex + 1) % self.sets;
        }
    }

    fn stats(&self) -> WearLevelingStats {
        WearLevelingStats {
            kind: "static",
            forced_sets: self.forced_sets,
            evicted_blocks: self.evicted_blocks,
            bitmap_resets: self.bitmap_resets,
            summary: format!(
                "static, {} sets forced, {} blocks evicted",
                self.forced_sets, self.evicted_blocks
            ),
            ..WearLevelingStats::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records evictions; blocks listed in `movable` have data to force out.
    struct Mock {
        movable: Vec<bool>,
        evicted: Vec<BlockId>,
    }

    impl WearHost for Mock {
        fn erase_count(&self, _b: BlockId) -> u32 {
            0
        }
        fn units(&self) -> u32 {
            0
        }
        fn has_sector_mapping(&mut self, _u: u32) -> bool {
            unreachable!()
        }
        fn pbn(&self, _u: u32) -> Option<BlockId> {
            unreachable!()
        }
        fn erase(&mut self, _b: BlockId) {
            unreachable!()
        }
        fn move_block(&mut self, _u: u32, _from: BlockId, _to: BlockId) {
            unreachable!()
        }
        fn evict(&mut self, b: BlockId) -> bool {
            let m = std::mem::take(&mut self.movable[b.index()]);
            if m {
                self.evicted.push(b);
            }
            m
        }
    }

    /// Eight blocks in sets of two, TH = 4. Hot blocks 0 and 1 (set 0) are erased over and
    /// over: after 4 erases ecnt/fcnt = 4/1 reaches TH and the next clear set from findex is
    /// forced; its static block is evicted (ecnt 5, fcnt 2: 2.5 < 4, stop). Four more hot
    /// erases (9/2 ≥ 4) force the next set, and so on; when all four sets are marked the
    /// bitmap resets.
    #[test]
    fn forces_clear_sets_in_order_and_resets() {
        let mut wl = StaticWearLeveling::new(4.0, 2, 8, 3);
        let start = wl.findex;
        let mut host = Mock {
            movable: vec![false, false, true, false, true, true, false, true],
            evicted: vec![],
        };
        let mut hot_erases = 0;
        while wl.bitmap_resets == 0 {
            wl.erased(BlockId::new(hot_erases % 2));
            hot_erases += 1;
            if wl.wants_work() {
                wl.work(&mut host);
            }
        }
        // The forced sets are the three sets other than 0, in cyclic order from findex; every
        // movable block of them is evicted, in order.
        let sets: Vec<u32> = (0..4).map(|k| (start + k) % 4).filter(|&s| s != 0).collect();
        let expect: Vec<BlockId> = sets
            .iter()
            .flat_map(|&s| [2 * s, 2 * s + 1])
            .filter(|&b| [2, 4, 5, 7].contains(&b))
            .map(BlockId::new)
            .collect();
        assert_eq!(host.evicted, expect);
        assert_eq!(wl.forced_sets, 3);
        // With this seed findex starts at set 2. Hot erase 4: 4/1 → force set 2, evict 4 and 5
        // (ecnt 6, fcnt 2: 3 < 4). Hot erase 6: 8/2 → force set 3, evict 7 (9/3 = 3). Hot erase
        // 9: 12/3 → force set 1 (set 0 is marked), evict 2; all four sets marked: reset.
        assert_eq!((start, hot_erases), (2, 9));
        assert_eq!(wl.bitmap_resets, 1);
        assert_eq!((wl.ecnt, wl.fcnt), (0, 0));
        assert_eq!(wl.stats().evicted_blocks, 4);
    }

    #[test]
    fn below_threshold_does_nothing() {
        let mut wl = StaticWearLeveling::new(16.0, 1, 8, 1);
        for _ in 0..15 {
            wl.erased(BlockId::new(0));
        }
        assert!(!wl.wants_work(), "15 erases over one erased block: below TH 16");
        wl.erased(BlockId::new(0));
        assert!(wl.wants_work());
    }
}
