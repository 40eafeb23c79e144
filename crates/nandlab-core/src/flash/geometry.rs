//! The flash device's shape and speed: geometry (page, block and device sizes) and per-page
//! operation times (SPEC §1). They describe the flash model itself, so they live beside it; the
//! configuration resolves them (`config::Config::resolve`) and presets give their defaults.

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

/// Per-page operation times of one flash chip, in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Timing {
    /// Array read of one page into the chip's register.
    pub read_page_ns: u64,
    /// Program of one page from the register.
    pub program_page_ns: u64,
    /// Erase of one erase block.
    pub erase_block_ns: u64,
    /// Moving one page over the bus between controller and chip.
    pub transfer_page_ns: u64,
    /// On-chip copyback of one page, when the chip has it (`None`: copy = read + 2 transfers +
    /// program).
    pub copy_page_ns: Option<u64>,
    /// RAM access per page (buffers and RAM regions of later issues).
    pub ram_page_ns: u64,
    /// Issuing one command (and its address cycles) over the bus, before an operation's data
    /// or array time (`engine`). 0 in every preset: the papers fold it into the other times.
    pub command_ns: u64,
}

impl Timing {
    /// Time of one page copy between blocks: copyback when the chip has it, otherwise read,
    /// transfer out and in, program (paper 002's C_cp).
    #[must_use]
    pub fn copy_cost_ns(&self) -> u64 {
        self.copy_page_ns
            .unwrap_or(self.read_page_ns + 2 * self.transfer_page_ns + self.program_page_ns)
    }
}
