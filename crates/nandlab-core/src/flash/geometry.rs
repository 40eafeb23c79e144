//! The flash device's shape: geometry (page, block and device sizes; docs/ALGORITHMS.md §1). It
//! describes the flash model itself, so it lives beside it; the configuration resolves it
//! (`config::Config::resolve`) and presets give its defaults. The operation times (`Timing`) live
//! with the sim-engine that uses them (`engine::hardware`).

use serde::Serialize;

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
}
