//! Endurance: each block tolerates a rated number of program/erase cycles (the preset's
//! `endurance_cycles`, or `wear.endurance_cycles`). A block erased that many times is worn
//! out: the FTL retires it (it never returns to the free pool) as long as enough good blocks
//! remain for the FTL to work (`min_good_blocks`: its data blocks plus its reserve). The first
//! time retiring would leave fewer, the device is *unusable*: it keeps the block in service so
//! its state stays consistent and its data readable, and the device refuses further writes.
//!
//! Lifetime: host bytes written until the first block wears out, and until the device
//! is unusable. The device turns `LifetimeState` changes into those byte counts.

use crate::flash::BlockId;

/// Where a device is in its life.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LifetimeState {
    /// Rated cycles per block (0 = unlimited).
    pub endurance_cycles: u32,
    /// Blocks retired as bad.
    pub retired_blocks: u32,
    /// A block has reached its rated cycles.
    pub worn: bool,
    /// Too few good blocks remain: no more writes.
    pub unusable: bool,
}

#[derive(Clone, Debug)]
pub struct Endurance {
    /// Rated program/erase cycles per block; 0 = unlimited.
    cycles: u32,
    good_blocks: u32,
    min_good_blocks: u32,
    retired: Vec<bool>,
    state: LifetimeState,
}

impl Endurance {
    /// `cycles` = 0 turns endurance off. `min_good_blocks`: fewer good blocks and the FTL can
    /// no longer guarantee progress.
    #[must_use]
    pub fn new(cycles: u32, blocks: u32, min_good_blocks: u32) -> Self {
        assert!(min_good_blocks <= blocks);
        let retired = if cycles > 0 { vec![false; blocks as usize] } else { Vec::new() };
        let state = LifetimeState { endurance_cycles: cycles, ..LifetimeState::default() };
        Self { cycles, good_blocks: blocks, min_good_blocks, retired, state }
    }

    #[cfg(test)]
    #[must_use]
    pub fn cycles(&self) -> u32 {
        self.cycles
    }

    #[must_use]
    pub fn state(&self) -> LifetimeState {
        self.state
    }

    #[must_use]
    pub fn is_retired(&self, b: BlockId) -> bool {
        self.retired.get(b.index()).copied().unwrap_or(false)
    }

    /// Block `b` was erased and keeps its data role (a wear-leveling erase before a block
    /// copy): it is retired at its next erase, but it has worn out now.
    #[inline]
    pub fn observe(&mut self, erase_count: u32) {
        if self.cycles > 0 && erase_count >= self.cycles {
            self.state.worn = true;
        }
    }

    /// Block `b`, just erased, now has `erase_count` erases. Returns true if it is retired
    /// (the caller must not put it in the free pool). `room`: whether the FTL can spare the
    /// block right now (a page-mapped FTL in the middle of cleaning may need it back at once;
    /// a worn block it cannot spare stays in service and is retired at a later erase, so its
    /// count may pass the rating by a few cycles).
    #[inline]
    pub fn after_erase(&mut self, b: BlockId, erase_count: u32, room: bool) -> bool {
        if self.cycles == 0 || erase_count < self.cycles {
            return false;
        }
        self.state.worn = true;
        if !room {
            return false;
        }
        if self.good_blocks <= self.min_good_blocks {
            self.state.unusable = true;
            return false;
        }
        debug_assert!(!self.retired[b.index()]);
        self.retired[b.index()] = true;
        self.good_blocks -= 1;
        self.state.retired_blocks += 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retires_until_the_minimum_then_is_unusable() {
        let mut e = Endurance::new(3, 5, 3);
        assert!(!e.after_erase(BlockId::new(0), 2, true));
        assert!(!e.state().worn);
        assert!(!e.after_erase(BlockId::new(0), 3, false), "no room: stays in service");
        assert!(e.state().worn && !e.is_retired(BlockId::new(0)));
        assert!(e.after_erase(BlockId::new(0), 3, true));
        let s = e.state();
        assert_eq!((s.retired_blocks, s.worn, s.unusable), (1, true, false));
        assert!(e.after_erase(BlockId::new(1), 3, true));
        // Good blocks 3 = the minimum: block 2 stays in service and the device is unusable.
        assert!(!e.after_erase(BlockId::new(2), 3, true));
        let s = e.state();
        assert_eq!((s.retired_blocks, s.worn, s.unusable), (2, true, true));
        assert!(
            e.is_retired(BlockId::new(0))
                && e.is_retired(BlockId::new(1))
                && !e.is_retired(BlockId::new(2))
        );
    }

    #[test]
    fn zero_cycles_is_unlimited() {
        let mut e = Endurance::new(0, 4, 2);
        assert!(!e.after_erase(BlockId::new(0), u32::MAX, true));
        assert_eq!(e.state(), LifetimeState::default());
        assert_eq!(e.cycles(), 0);
    }
}
