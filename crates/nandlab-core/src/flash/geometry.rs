//! The flash device's shape: geometry (page, block and device sizes; docs/ALGORITHMS.md §1). It
//! describes the flash model itself, so it lives beside it; the configuration resolves it
//! (`config::Config::resolve`) and presets give its defaults. The operation times (`Timing`) live
//! with the sim-engine that uses them (`engine::hardware`).

use serde::Serialize;

use super::{BlockId, Ppn};

/// Flash geometry after resolution.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
pub struct Geometry {
    pub page_size_bytes: u64,
    pub pages_per_block: u32,
    pub blocks: u32,
    pub logical_pages: u64,
    pub sector_size_bytes: u64,
}

impl Geometry {
    #[must_use]
    pub fn physical_pages(&self) -> u64 {
        u64::from(self.blocks) * u64::from(self.pages_per_block)
    }
    #[must_use]
    pub fn logical_bytes(&self) -> u64 {
        self.logical_pages * self.page_size_bytes
    }
    #[must_use]
    pub fn utilization(&self) -> f64 {
        self.logical_pages as f64 / self.physical_pages() as f64
    }

    /// Page `page_in_block` of `block`.
    #[inline]
    #[must_use]
    pub fn ppn(&self, block: BlockId, page_in_block: u32) -> Ppn {
        debug_assert!(page_in_block < self.pages_per_block);
        Ppn::new(block.get() * self.pages_per_block + page_in_block)
    }

    /// The block holding `ppn` (a division: `Flash::block_of` is the request path's).
    #[inline]
    #[must_use]
    pub fn block_of(&self, ppn: Ppn) -> BlockId {
        BlockId::new(ppn.get() / self.pages_per_block)
    }

    /// The offset of `ppn` in its block.
    #[inline]
    #[must_use]
    pub fn page_in_block(&self, ppn: Ppn) -> u32 {
        ppn.get() % self.pages_per_block
    }

    /// Every block, in order.
    pub fn block_ids(&self) -> impl DoubleEndedIterator<Item = BlockId> + Clone {
        (0..self.blocks).map(BlockId::new)
    }

    /// Every physical page, in order.
    pub fn ppns(&self) -> impl DoubleEndedIterator<Item = Ppn> + Clone {
        let pages = self.blocks * self.pages_per_block;
        (0..pages).map(Ppn::new)
    }

    /// The pages of `block`, in order.
    pub fn pages_of(&self, block: BlockId) -> impl DoubleEndedIterator<Item = Ppn> + Clone {
        let first = block.get() * self.pages_per_block;
        (first..first + self.pages_per_block).map(Ppn::new)
    }
}
