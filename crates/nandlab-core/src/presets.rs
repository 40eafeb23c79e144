//! Named flash device presets (docs/ALGORITHMS.md §1): default geometry and per-page timing.
//!
//! Timing is per page at the preset's own page size. Papers that give per-byte or per-sector
//! figures are converted here once (the arithmetic is in each entry's comment). If a user changes
//! `device.page_size_bytes`, the per-page times stay as given: override `timing.*` to rescale.
//! Where a paper gives a range, the midpoint is used.

use serde::Serialize;

use crate::engine::Hardware;
use crate::flash::Timing;

/// The timing of a preset: the flash model's `Timing`.
pub type TimingPreset = Timing;

#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Preset {
    pub name: &'static str,
    pub description: &'static str,
    pub page_size_bytes: u64,
    pub pages_per_block: u32,
    pub blocks: u32,
    pub timing: TimingPreset,
    /// The parallel hardware (gangs, channels per gang, chips, dies, planes); one of each unless
    /// the paper gives a layout.
    pub hardware: Hardware,
    /// Rated program/erase cycles per block (0 = not given by the paper).
    pub endurance_cycles: u64,
}

/// One gang, channel, chip, die and plane: a single serialized channel and die.
const ONE: Hardware = Hardware {
    gangs: 1,
    channels_per_gang: 1,
    chips_per_channel: 1,
    dies_per_chip: 1,
    planes_per_die: 1,
};

/// Every preset, the default first.
pub const PRESETS: &[Preset] = &[
    Preset {
        name: "generic",
        description: "Generic SLC-class NAND: 4 KiB pages, 64 pages (256 KiB) per block, \
                      1 GiB; 25 us read, 200 us program, 1.5 ms erase, 400 MB/s bus",
        page_size_bytes: 4096,
        pages_per_block: 64,
        blocks: 4096,
        timing: TimingPreset {
            read_page_ns: 25_000,
            program_page_ns: 200_000,
            erase_block_ns: 1_500_000,
            transfer_page_ns: 10_240,
            copy_page_ns: None,
            ram_page_ns: 1_000,
            command_ns: 0,
        },
        hardware: ONE,
        endurance_cycles: 100_000,
    },
    Preset {
        // DAC/LFSS server: Intel Series 2+ card, 24 MB, 128 KB segments, 4 KB blocks.
        // read 150-250 ns/B -> 200 ns/B * 4096 B = 819,200 ns; write 6-9 us/B -> 7.5 us/B *
        // 4096 B = 30.72 ms; segment erase 0.6-0.8 s -> 0.7 s. NOR: no separate bus transfer.
        name: "nor1999",
        description: "Intel Series 2+ NOR flash card of the DAC/LFSS papers: 24 MB, 128 KB \
                      segments, 4 KB blocks; 200 ns/B read, 7.5 us/B write, 0.7 s erase",
        page_size_bytes: 4096,
        pages_per_block: 32,
        blocks: 192,
        timing: TimingPreset {
            read_page_ns: 819_200,
            program_page_ns: 30_720_000,
            erase_block_ns: 700_000_000,
            transfer_page_ns: 0,
            copy_page_ns: None,
            ram_page_ns: 10_240,
            command_ns: 0,
        },
        hardware: ONE,
        endurance_cycles: 100_000,
    },
    Preset {
        // FAB paper: read 36,000 ns and program 266,000 ns per 512 B sector, 4 sectors per 2 KB
        // page -> 144,000 ns and 1,064,000 ns per page; erase 2,000,000 ns per 128 KB block;
        // DRAM 2,560 ns per 512 B -> 10,240 ns per page. The paper folds transfer into these.
        name: "slc2006",
        description: "SLC NAND of the FAB paper: 2 KB pages, 64 pages (128 KB) per block, \
                      512 MB; 144 us read, 1.064 ms program, 2 ms erase per the paper's table",
        page_size_bytes: 2048,
        pages_per_block: 64,
        blocks: 4096,
        timing: TimingPreset {
            read_page_ns: 144_000,
            program_page_ns: 1_064_000,
            erase_block_ns: 2_000_000,
            transfer_page_ns: 0,
            copy_page_ns: None,
            ram_page_ns: 10_240,
            command_ns: 0,
        },
        hardware: ONE,
        endurance_cycles: 100_000,
    },
    Preset {
        // Block-recycling paper (MLC): page read 0.113 ms, program 1.013 ms, page copy
        // 1.128 ms, erase 1.5 ms; 2,112 B pages (2 KB data + 64 B spare), 128 pages per block.
        name: "mlc2007",
        description: "MLC NAND of the block-recycling paper: 2 KB(+64 B) pages, 128 pages per \
                      block; 113 us read, 1.013 ms program, 1.128 ms copy, 1.5 ms erase",
        page_size_bytes: 2048,
        pages_per_block: 128,
        blocks: 4096,
        timing: TimingPreset {
            read_page_ns: 113_000,
            program_page_ns: 1_013_000,
            erase_block_ns: 1_500_000,
            transfer_page_ns: 0,
            copy_page_ns: Some(1_128_000),
            ram_page_ns: 10_240,
            command_ns: 0,
        },
        hardware: ONE,
        endurance_cycles: 10_000,
    },
    Preset {
        // The same paper's "SLC typical" figures: 25 us read, 300 us program, 2 ms erase, with
        // copyback (copy = read + program inside the chip).
        name: "slc2007",
        description: "SLC NAND typical figures of the block-recycling paper: 2 KB pages, 64 \
                      pages per block; 25 us read, 300 us program, 2 ms erase, copyback",
        page_size_bytes: 2048,
        pages_per_block: 64,
        blocks: 4096,
        timing: TimingPreset {
            read_page_ns: 25_000,
            program_page_ns: 300_000,
            erase_block_ns: 2_000_000,
            transfer_page_ns: 0,
            copy_page_ns: Some(325_000),
            ram_page_ns: 10_240,
            command_ns: 0,
        },
        hardware: ONE,
        endurance_cycles: 100_000,
    },
    Preset {
        // Lazy wear-leveling paper: 4 KB pages, 512 KB blocks, 20 GB logical on 20.5 GB
        // physical. The paper gives no timing; generic MLC figures are used.
        name: "mlc2011",
        description: "MLC NAND of the lazy wear-leveling paper: 4 KB pages, 128 pages (512 KB) \
                      per block, 20.5 GB; timing not given by the paper (generic MLC: 60 us \
                      read, 800 us program, 3 ms erase)",
        page_size_bytes: 4096,
        pages_per_block: 128,
        blocks: 41_984,
        timing: TimingPreset {
            read_page_ns: 60_000,
            program_page_ns: 800_000,
            erase_block_ns: 3_000_000,
            transfer_page_ns: 20_480,
            copy_page_ns: None,
            ram_page_ns: 1_000,
            command_ns: 0,
        },
        hardware: ONE,
        endurance_cycles: 5_000,
    },
    Preset {
        // Virtual platform (GP5086 controller): 1 gang x 4 channels x 1 chip x 1 plane (the
        // virtual-platform report's example configuration; docs/PAPERS.md): the 4 lock-stepped
        // channels make a 16 KB effective page of 4 KB flash pages. The chip datasheet is not in
        // the report; typical 2011 MLC figures are used. 8192 flash blocks = 2048 effective blocks
        // of 128 x 16 KB (4 GiB).
        name: "gp5086",
        description: "Virtual-platform SSD (GP5086 controller, 1 gang x 4 channels): 4 KB \
                      flash pages striped into 16 KB effective pages, 128 pages per block; \
                      datasheet not given (generic MLC timing)",
        page_size_bytes: 4096,
        pages_per_block: 128,
        blocks: 8192,
        timing: TimingPreset {
            read_page_ns: 60_000,
            program_page_ns: 800_000,
            erase_block_ns: 3_000_000,
            transfer_page_ns: 20_480,
            copy_page_ns: None,
            ram_page_ns: 1_000,
            command_ns: 0,
        },
        hardware: Hardware { channels_per_gang: 4, ..ONE },
        endurance_cycles: 5_000,
    },
];

#[must_use]
pub fn preset(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name == name)
}

#[must_use]
pub fn preset_names() -> Vec<&'static str> {
    PRESETS.iter().map(|p| p.name).collect()
}
