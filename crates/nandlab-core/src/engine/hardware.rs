//! The hardware abstraction of an SSD (the virtual-platform report, docs/PAPERS.md;
//! docs/ALGORITHMS.md §1 and §7): gangs × channels per gang × chips (ways) per channel × dies
//! per chip × planes per die.
//!
//! - A *gang* is a set of channels that share chip-enable lines and work in lock step: one
//!   operation is striped across all of them (virtual-platform report, Fig. 4a). Its channels
//!   therefore act as one bus, and the FTL's mapping unit — the *effective page* — is the flash
//!   page striped over them (`channels_per_gang` flash pages; the geometry paper finds exactly such
//!   multiples). Gangs are independent: each has its own bus.
//! - A *chip* (way) on a gang's channels is, by the same lock step, one chip per channel working
//!   together; its *dies* are independent parallel units (each has its own array and page
//!   registers) that share the gang's bus. The die is the engine's parallel unit.
//! - The *planes* of a die work together through multi-plane operations: one command, one array
//!   time, the planes' data moved over the bus one after the other (`engine` documents the
//!   address rules).
//!
//! Addresses: the FTL's erase blocks are *effective blocks* (one flash block on each channel of
//! a gang), numbered so that consecutive blocks fall on consecutive planes: block `b` is on plane
//! `b mod planes()`, the planes numbered plane-fastest within a die, die-fastest within a chip,
//! chip-fastest within a gang. A free list in block order thus walks every plane in turn.

use serde::Serialize;

/// The resolved hardware abstraction (`device.gangs`, `device.channels_per_gang`,
/// `device.chips_per_channel`, `device.dies_per_chip`, `device.planes_per_die`). Every count is
/// at least 1; `device.blocks` is the device's total of flash blocks, a multiple of
/// `flash_blocks_per_block_row()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Hardware {
    pub gangs: u32,
    pub channels_per_gang: u32,
    pub chips_per_channel: u32,
    pub dies_per_chip: u32,
    pub planes_per_die: u32,
}

impl Default for Hardware {
    /// One of everything: a single serialized channel and die (the timing of earlier versions).
    fn default() -> Self {
        Self {
            gangs: 1,
            channels_per_gang: 1,
            chips_per_channel: 1,
            dies_per_chip: 1,
            planes_per_die: 1,
        }
    }
}

/// Largest count of any one level, and of the product of all levels: far beyond any SSD, small
/// enough that every index fits comfortably in a u32 and per-unit tables stay small.
pub const HARDWARE_LEVEL_MAX: u32 = 4096;
pub const HARDWARE_UNITS_MAX: u32 = 65_536;

impl Hardware {
    /// Dies over the whole device: the independent parallel units (gangs × chips per channel ×
    /// dies per chip; a gang's channels are one unit's lock-stepped lanes).
    #[inline]
    #[must_use]
    pub fn dies(&self) -> u32 {
        self.gangs * self.chips_per_channel * self.dies_per_chip
    }

    /// Planes over the whole device: the allocation targets (each has its own open blocks).
    #[inline]
    #[must_use]
    pub fn planes(&self) -> u32 {
        self.dies() * self.planes_per_die
    }

    /// Dies sharing one gang's bus.
    #[inline]
    #[must_use]
    pub fn dies_per_gang(&self) -> u32 {
        self.chips_per_channel * self.dies_per_chip
    }

    /// Flash blocks in one row of effective blocks (one effective block per plane):
    /// `device.blocks` is a multiple of it (the "total = product" rule).
    #[must_use]
    pub fn flash_blocks_per_block_row(&self) -> u64 {
        u64::from(self.planes()) * u64::from(self.channels_per_gang)
    }

    /// The plane holding effective block `block`.
    #[inline]
    #[must_use]
    pub fn plane_of_block(&self, block: u32) -> u32 {
        block % self.planes()
    }

    /// The die a plane belongs to.
    #[inline]
    #[must_use]
    pub fn die_of_plane(&self, plane: u32) -> u32 {
        plane / self.planes_per_die
    }

    /// The gang (bus) a die is on.
    #[inline]
    #[must_use]
    pub fn gang_of_die(&self, die: u32) -> u32 {
        die / self.dies_per_gang()
    }

    /// The plane at (gang, chip, die, plane) coordinates.
    #[must_use]
    pub fn plane_at(&self, gang: u32, chip: u32, die: u32, plane: u32) -> u32 {
        debug_assert!(gang < self.gangs && chip < self.chips_per_channel);
        debug_assert!(die < self.dies_per_chip && plane < self.planes_per_die);
        ((gang * self.chips_per_channel + chip) * self.dies_per_chip + die) * self.planes_per_die
            + plane
    }

    /// Every plane in channel-way-die-plane order (MQSim's CWDP striping): consecutive entries
    /// change gang (channel) first, then chip (way), then die, then plane, so a stream of page
    /// writes allocated in this order spreads over the buses first.
    #[must_use]
    pub fn cwdp_order(&self) -> Vec<u32> {
        let mut order = Vec::with_capacity(self.planes() as usize);
        for plane in 0..self.planes_per_die {
            for die in 0..self.dies_per_chip {
                for chip in 0..self.chips_per_channel {
                    for gang in 0..self.gangs {
                        order.push(self.plane_at(gang, chip, die, plane));
                    }
                }
            }
        }
        order
    }

    /// The counts as `(key, value)` pairs, in the order of the config keys.
    #[must_use]
    pub fn levels(&self) -> [(&'static str, u32); 5] {
        [
            ("device.gangs", self.gangs),
            ("device.channels_per_gang", self.channels_per_gang),
            ("device.chips_per_channel", self.chips_per_channel),
            ("device.dies_per_chip", self.dies_per_chip),
            ("device.planes_per_die", self.planes_per_die),
        ]
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
    /// transfer out and in, program (the block-recycling paper's C_cp).
    #[must_use]
    pub fn copy_cost_ns(&self) -> u64 {
        self.copy_page_ns
            .unwrap_or(self.read_page_ns + 2 * self.transfer_page_ns + self.program_page_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hw(g: u32, c: u32, w: u32, d: u32, p: u32) -> Hardware {
        Hardware {
            gangs: g,
            channels_per_gang: c,
            chips_per_channel: w,
            dies_per_chip: d,
            planes_per_die: p,
        }
    }

    #[test]
    fn counts_are_products() {
        let h = hw(2, 4, 2, 2, 2);
        assert_eq!(h.dies(), 8);
        assert_eq!(h.planes(), 16);
        assert_eq!(h.dies_per_gang(), 4);
        assert_eq!(h.flash_blocks_per_block_row(), 64);
    }

    #[test]
    fn blocks_walk_planes_and_planes_group_into_dies_and_gangs() {
        let h = hw(2, 1, 2, 1, 2);
        // plane = block mod 8; die = plane / 2; gang = die / 2.
        assert_eq!(h.plane_of_block(13), 5);
        assert_eq!(h.die_of_plane(5), 2);
        assert_eq!(h.gang_of_die(2), 1);
        assert_eq!(h.plane_at(1, 0, 0, 1), 5);
    }

    #[test]
    fn cwdp_changes_channel_first_then_way_then_die_then_plane() {
        let h = hw(2, 1, 2, 1, 2);
        // (gang, chip, plane): (0,0,0) (1,0,0) (0,1,0) (1,1,0) (0,0,1) ...
        assert_eq!(h.cwdp_order(), vec![0, 4, 2, 6, 1, 5, 3, 7]);
        let mut sorted = h.cwdp_order();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..8).collect::<Vec<_>>());
    }
}
