//! Lazy wear leveling, Algorithm 1 of the lazy wear-leveling paper (§3.2–§3.3; docs/PAPERS.md,
//! docs/ALGORITHMS.md §6).
//!
//! ```text
//! on erase of victim v:
//!   if eraseCount(v) − avg > Δ:
//!     repeat l ← lbnNext() until not lbnHasSectorMapping(l)
//!     erase(v); p ← pbn(l); copy(v ← p); map(l → v)
//!     update eraseCount(v) and avg
//!     return p          (the FTL erases and uses p instead of v)
//!   else return v
//! ```
//!
//! Only the average erase count is tracked (a sum over all blocks), not per-block ages: the
//! FTL owns the erase counts. "Has a sector mapping" is the FTL's: a logical block with pages
//! in a log block (hybrid FTLs) is being updated and must not be moved (see the module doc of
//! `wear` for the page-mapped FTL's counterpart).

use super::adaptive::DeltaTuner;
use super::permutation::LbnPermutation;
use std::sync::Arc;

use super::spec::{ResolvedLeveler, WearEntry};
use super::{WearHost, WearLeveler, WearLevelingStats, WearSetup};
use crate::error::ConfigError;
use crate::flash::BlockId;
use crate::spec::{check, Param, Params};

/// Lazy's parameters, in `[wear]`: `delta` (Δ, how far above the average erase count a victim
/// may be before its erase re-maps a cold logical block onto it; default 16, the paper's),
/// `adaptive` (retune Δ every session, Δ_next = sqrt(Δ·g/|λ|); default false), and with it
/// `lambda` (λ, the overhead slope limit in % per unit of Δ; default −0.1) and
/// `session_wear_erases` (session length in wear-leveling erases; default 1000, the paper's).
pub(super) const ENTRY: WearEntry = WearEntry {
    name: "lazy",
    params: &[
        Param::new("wear", "delta"),
        Param::new("wear", "adaptive"),
        Param::new("wear", "lambda"),
        Param::new("wear", "session_wear_erases"),
    ],
    resolve,
};

const DELTA_DEFAULT: f64 = 16.0;
const LAMBDA_DEFAULT: f64 = -0.1;

fn resolve(params: &mut Params<'_>) -> Result<Arc<dyn ResolvedLeveler>, ConfigError> {
    let delta = params.f64("delta", DELTA_DEFAULT)?;
    check(delta >= 0.0, "wear.delta", "must be >= 0")?;
    let adaptive = if params.or("adaptive", false)? {
        let lambda = params.f64("lambda", LAMBDA_DEFAULT)?;
        check(lambda < 0.0, "wear.lambda", "must be negative (the paper: -0.1)")?;
        let session = params.u64("session_wear_erases", 1000)?;
        check(session >= 1, "wear.session_wear_erases", "must be at least 1")?;
        Some((lambda, session))
    } else {
        for key in ["lambda", "session_wear_erases"] {
            check(
                params.get::<crate::spec::Value>(key)?.is_none(),
                &format!("wear.{key}"),
                "only adaptive Δ uses it: set wear.adaptive = true too",
            )?;
        }
        None
    };
    Ok(Arc::new(LazySpec { delta, adaptive }))
}

/// Lazy wear leveling with Δ and its adaptive tuning resolved.
#[derive(Clone, Copy, Debug)]
struct LazySpec {
    delta: f64,
    adaptive: Option<(f64, u64)>,
}

impl ResolvedLeveler for LazySpec {
    fn build(&self, setup: WearSetup) -> Box<dyn WearLeveler> {
        Box::new(LazyWearLeveling::with(self.delta, self.adaptive, setup))
    }
}

/// The wear leveler's state: Δ (and its tuner), the permutation, and the erase-count sum for
/// the average.
#[derive(Clone, Debug)]
pub struct LazyWearLeveling {
    delta: f64,
    tuner: Option<DeltaTuner>,
    lbns: LbnPermutation,
    units: u32,
    physical_blocks: u32,
    erase_sum: u64,
    /// Re-mappings done (each costs one extra erase and a block copy).
    pub remaps: u64,
}

impl LazyWearLeveling {
    #[must_use]
    pub fn new(delta: f64, units: u32, physical_blocks: u32, seed: u64) -> Self {
        assert!(physical_blocks > 0 && units > 0);
        Self {
            delta,
            tuner: None,
            lbns: LbnPermutation::new(units, seed),
            units,
            physical_blocks,
            erase_sum: 0,
            remaps: 0,
        }
    }

    /// A leveler for `setup` with Δ and, if `adaptive` is `Some((λ, session length))`, its
    /// tuning.
    #[must_use]
    pub fn with(delta: f64, adaptive: Option<(f64, u64)>, setup: WearSetup) -> Self {
        let mut l = Self::new(delta, setup.units, setup.physical_blocks, setup.seed);
        l.erase_sum = setup.erases_so_far;
        l.tuner = adaptive.map(|(lambda, session)| DeltaTuner::new(delta, lambda, session));
        l
    }

    #[must_use]
    pub fn average(&self) -> f64 {
        self.erase_sum as f64 / f64::from(self.physical_blocks)
    }

    /// One erase happened (any source), so the average stays true and the tuner sees it.
    fn count_erase(&mut self, by_wear_leveling: bool) {
        self.erase_sum += 1;
        if let Some(t) = &mut self.tuner {
            if t.note_erase(by_wear_leveling) {
                self.delta = t.delta();
            }
        }
    }

    /// Algorithm 1: called with the victim `v` the FTL is about to erase; returns the block the
    /// FTL should erase and reuse instead (`v` itself when no wear leveling is due).
    pub fn substitute(&mut self, host: &mut dyn WearHost, v: BlockId) -> BlockId {
        if f64::from(host.erase_count(v)) - self.average() <= self.delta {
            return v;
        }
        // Steps 3-5, bounded to one round: if every unit is being updated (or holds no data),
        // there is nothing cold to move and `v` is erased as usual.
        for _ in 0..self.units {
            let l = self.lbns.next_lbn();
            if host.has_sector_mapping(l) {
                continue;
            }
            let Some(p) = host.pbn(l) else { continue };
            if p == v {
                continue;
            }
            host.erase(v);
            self.count_erase(true);
            host.move_block(l, p, v);
            self.remaps += 1;
            return p;
        }
        v
    }
}

impl WearLeveler for LazyWearLeveling {
    fn name(&self) -> &'static str {
        "lazy"
    }

    fn on_victim(&mut self, host: &mut dyn WearHost, v: BlockId) -> BlockId {
        self.substitute(host, v)
    }

    fn erased(&mut self, _b: BlockId) {
        self.count_erase(false);
    }

    fn stats(&self) -> WearLevelingStats {
        WearLevelingStats {
            kind: "lazy",
            remaps: self.remaps,
            delta: self.delta,
            delta_history: self.tuner.as_ref().map_or_else(Vec::new, |t| t.history().to_vec()),
            summary: format!("lazy, {} re-mappings, Δ {:.1}", self.remaps, self.delta),
            ..WearLevelingStats::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(n: u32) -> BlockId {
        BlockId::new(n)
    }

    /// Four physical blocks, three logical blocks. Block 0 is worn (erase count 9, average 3),
    /// Δ = 4: erasing it must re-map the first logical block in permutation order with no
    /// sector mapping — the walk finds that logical block 1 is being updated, skips it, and
    /// moves logical block 2 (in physical block 3) onto block 0, handing block 3 back.
    struct Mock {
        erase: Vec<u32>,
        data: Vec<Option<BlockId>>,
        in_log: Vec<bool>,
        log: Vec<String>,
    }

    impl WearHost for Mock {
        fn erase_count(&self, b: BlockId) -> u32 {
            self.erase[b.index()]
        }
        fn units(&self) -> u32 {
            self.data.len() as u32
        }
        fn has_sector_mapping(&mut self, lbn: u32) -> bool {
            self.in_log[lbn as usize]
        }
        fn evict(&mut self, _b: BlockId) -> bool {
            unreachable!("lazy wear leveling never evicts")
        }
        fn pbn(&self, lbn: u32) -> Option<BlockId> {
            self.data[lbn as usize]
        }
        fn erase(&mut self, b: BlockId) {
            self.erase[b.index()] += 1;
            self.log.push(format!("erase {b}"));
        }
        fn move_block(&mut self, lbn: u32, from: BlockId, to: BlockId) {
            self.data[lbn as usize] = Some(to);
            self.log.push(format!("move lbn {lbn}: {from} -> {to}"));
        }
    }

    fn order(n: u32, seed: u64) -> Vec<u32> {
        let mut p = LbnPermutation::new(n, seed);
        (0..n).map(|_| p.next_lbn()).collect()
    }

    #[test]
    fn worn_victim_takes_a_cold_logical_block() {
        // A seed whose order visits logical block 1, then 2, then 0 (the case worked above).
        let seed = (0..1000).find(|&s| order(3, s) == [1, 2, 0]).unwrap();
        let mut host = Mock {
            erase: vec![9, 1, 1, 1],
            data: vec![Some(b(1)), Some(b(2)), Some(b(3))],
            in_log: vec![false, true, false],
            log: Vec::new(),
        };
        let mut wl = LazyWearLeveling::new(4.0, 3, 4, seed);
        wl.erase_sum = 12; // average 3
        assert_eq!(wl.substitute(&mut host, b(0)), b(3), "logical block 2's old block is handed back");
        assert_eq!(host.data, [Some(b(1)), Some(b(2)), Some(b(0))], "logical block 2 now lives in block 0");
        assert_eq!(host.log, ["erase 0", "move lbn 2: 3 -> 0"]);
        assert_eq!(host.erase[0], 10);
        assert_eq!((wl.remaps, wl.erase_sum), (1, 13));
    }

    #[test]
    fn victim_within_delta_is_kept() {
        let mut host = Mock {
            erase: vec![7, 1, 1, 3],
            data: vec![Some(b(1)), Some(b(2)), Some(b(3))],
            in_log: vec![false; 3],
            log: Vec::new(),
        };
        let mut wl = LazyWearLeveling::new(4.0, 3, 4, 1);
        wl.erase_sum = 12; // average 3: 7 − 3 = 4 is not above Δ
        assert_eq!(wl.substitute(&mut host, b(0)), b(0));
        assert!(host.log.is_empty());
        // Every logical block being updated: nothing to move, the victim is erased as usual.
        host.erase[0] = 20;
        host.in_log = vec![true; 3];
        assert_eq!(wl.substitute(&mut host, b(0)), b(0));
        assert!(host.log.is_empty());
    }
}
