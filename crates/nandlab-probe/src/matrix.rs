//! A seeded random matrix of simulated devices for the geometry probes: devices a user with an
//! unknown drive might have, drawn over documented ranges, each probed as a black box and
//! compared with its configured geometry (`experiments/geometry/matrix.md`). The probes must
//! hold on devices nobody tuned them for, so the matrix, not a hand-picked list, is their test.
//!
//! Ranges (each drawn independently and uniformly unless said otherwise):
//! - flash page 2, 4, 8, 16, 32 or 64 KiB; 1–8 channels per gang (lock-stepped: the effective
//!   page is the flash page × the channels per gang); 1–8 gangs; 1–8 chips per channel; 1–4
//!   planes per die; one die per chip;
//! - pages per block 16–1024 (any integer, log-uniform);
//! - FTL: the page FTL with `host-gc` placement (half the devices), else `bast`, `sast` or
//!   `fast` (8 log blocks);
//! - mapping zone: off (half the devices) or 1–64 MiB (any whole number of MiB, log-uniform,
//!   rounded down to a whole number of effective pages);
//! - buffer: none (half the devices), else `lru`, `fab` or `bplru` of 1–8 MiB (whole effective
//!   pages);
//! - capacity: 64 MiB, or 16 effective blocks when that is more (the block probe needs several
//!   blocks per request size), and at least 4 mapping zones;
//! - timing: the `generic` preset's.
//!
//! A draw whose effective block exceeds 64 MiB is drawn again (its capacity would be over a
//! gigabyte, and its probe minutes long); that keeps the joint distribution away from the
//! largest page × channels × pages-per-block corner, which the results table states.

use crate::probe::{mix, probe, ProbeOptions, ProbeReport};
use crate::target::SimTarget;

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;

/// Largest effective block a draw may have (see the module doc).
const MAX_BLOCK_BYTES: u64 = 64 * MIB;
/// Most logical (effective) pages a draw may have: the probes write the capacity many times
/// over, and the simulation's time grows with the pages.
const MAX_LOGICAL_PAGES: u64 = 1 << 20;

/// The FTL kinds drawn (an enum, not names: no mechanism compares a policy's name).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Page,
    Bast,
    Sast,
    Fast,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Page => "page",
            Kind::Bast => "bast",
            Kind::Sast => "sast",
            Kind::Fast => "fast",
        }
    }
}

/// One drawn device: its `--set` overrides and the values its probes should find.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatrixDevice {
    pub seed: u64,
    pub index: u32,
    pub overrides: Vec<String>,
    pub effective_page_bytes: u64,
    pub block_bytes: u64,
    pub zone_bytes: Option<u64>,
    /// Dies: each serves one operation at a time.
    pub dies: u64,
    /// What a row of the table says about it.
    pub summary: String,
}

/// SplitMix64 step: the value at the state, then the state moved on (the probes' `mix`).
fn next(state: &mut u64) -> u64 {
    let z = mix(*state);
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z
}

/// Uniform integer in `lo..=hi`.
fn uniform(state: &mut u64, lo: u64, hi: u64) -> u64 {
    lo + next(state) % (hi - lo + 1)
}

/// Log-uniform integer in `lo..=hi`.
fn log_uniform(state: &mut u64, lo: u64, hi: u64) -> u64 {
    let u = (next(state) >> 11) as f64 / (1u64 << 53) as f64;
    let x = (lo as f64).ln() + u * ((hi as f64 + 1.0).ln() - (lo as f64).ln());
    (x.exp() as u64).clamp(lo, hi)
}

/// Device `index` of the matrix drawn from `seed`.
#[must_use]
pub fn draw(seed: u64, index: u32) -> MatrixDevice {
    let mut state = seed ^ (u64::from(index) + 1).wrapping_mul(0xA24B_AED4_963E_E407);
    loop {
        let page = (2 * KIB) << uniform(&mut state, 0, 5);
        let channels = uniform(&mut state, 1, 8);
        let gangs = uniform(&mut state, 1, 8);
        let chips = uniform(&mut state, 1, 8);
        let planes = uniform(&mut state, 1, 4);
        let ppb = log_uniform(&mut state, 16, 1024);
        // Half the devices the page FTL; the hybrid kinds a sixth each.
        let kind = [Kind::Page, Kind::Page, Kind::Page, Kind::Bast, Kind::Sast, Kind::Fast]
            [uniform(&mut state, 0, 5) as usize];
        let zone_on = next(&mut state).is_multiple_of(2);
        let zone_mib = log_uniform(&mut state, 1, 64);
        // Half the devices no buffer (`None`); the buffer kinds a sixth each.
        let buffer = [None, None, None, Some("lru"), Some("fab"), Some("bplru")]
            [uniform(&mut state, 0, 5) as usize];
        let buffer_mib = uniform(&mut state, 1, 8);
        let effective_page = page * channels;
        let block = effective_page * ppb;
        if block > MAX_BLOCK_BYTES {
            continue;
        }
        // The hybrid kinds map whole blocks: their zones are whole blocks.
        let zone_unit = if kind == Kind::Page { effective_page } else { block };
        let zone = zone_on.then(|| (zone_mib * MIB / zone_unit).max(1) * zone_unit);
        // Logical blocks: 64 MiB, 16 blocks, 4 zones, whichever is most...
        let mut logical_blocks =
            (64 * MIB).div_ceil(block).max(16).max(zone.map_or(0, |z| (4 * z).div_ceil(block)));
        // ...and spare blocks for the cleaner: the page FTL keeps a free block per plane and
        // region open (`ftl.gc_free_blocks_min` = planes + 1, two regions with `host-gc`), a
        // hybrid FTL its log blocks and a merge destination. Utilization 0.8 unless that leaves
        // too few; then lower, down to 0.5, and beyond that more logical blocks.
        let planes_total = gangs * chips * planes;
        let spare = if kind == Kind::Page { 3 * planes_total + 2 } else { 9 } + 2;
        logical_blocks = logical_blocks.max(spare);
        // SAST maps groups of `ftl.group_data_blocks` (4) logical blocks; a zone is whole
        // groups then too.
        if kind == Kind::Sast {
            logical_blocks = logical_blocks.next_multiple_of(4);
        }
        let physical = (logical_blocks * 5).div_ceil(4).max(logical_blocks + spare);
        let utilization = logical_blocks as f64 / physical as f64;
        if logical_blocks * ppb > MAX_LOGICAL_PAGES {
            continue;
        }
        let capacity = logical_blocks * block;
        let dies = gangs * chips;
        let mut overrides = vec![
            format!("device.page_size_bytes={page}"),
            format!("device.channels_per_gang={channels}"),
            format!("device.gangs={gangs}"),
            format!("device.chips_per_channel={chips}"),
            format!("device.planes_per_die={planes}"),
            format!("device.pages_per_block={ppb}"),
            format!("device.logical_bytes={capacity}"),
            format!("device.utilization={utilization}"),
            format!("ftl.kind={}", kind.name()),
        ];
        if kind == Kind::Page {
            overrides.push("ftl.placement=host-gc".into());
        }
        if let Some(z) = zone {
            overrides.push(format!("ftl.mapping_zone_bytes={z}"));
        }
        if let Some(buffer) = buffer {
            overrides.push(format!("buffer.kind={buffer}"));
            let pages = (buffer_mib * MIB / effective_page).max(1);
            overrides.push(format!("buffer.size_bytes={}", pages * effective_page));
        }
        let summary = format!(
            "{}K×{channels} page, {gangs}g×{chips}c×{planes}p, {ppb} ppb, {}, zone {}, buffer {}",
            page / KIB,
            kind.name(),
            zone.map_or("off".to_string(), |z| format!("{:.2}M", z as f64 / MIB as f64)),
            buffer.map_or("none".to_string(), |b| format!("{b} {buffer_mib}M")),
        );
        return MatrixDevice {
            seed,
            index,
            overrides,
            effective_page_bytes: effective_page,
            block_bytes: block,
            zone_bytes: zone,
            dies,
            summary,
        };
    }
}

/// One probe's outcome on one device.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    pub probe: &'static str,
    pub want: Option<u64>,
    pub got: Option<u64>,
    pub confidence: f64,
    pub how: String,
}

impl Outcome {
    #[must_use]
    pub fn exact(&self) -> bool {
        self.want == self.got
    }
}

/// Probes `d` on the simulator and compares every targeted value with its configuration.
pub fn check(d: &MatrixDevice) -> Result<(Vec<Outcome>, ProbeReport), String> {
    let mut t = SimTarget::new(None, &d.overrides, true)?;
    let report = probe(&mut t, &ProbeOptions::default(), &mut |_| {})?;
    let o = |probe, want, got, det: &crate::probe::Detected| Outcome {
        probe,
        want,
        got,
        confidence: det.confidence,
        how: det.how.clone(),
    };
    let outcomes = vec![
        o("page", Some(d.effective_page_bytes), report.effective_page_bytes, &report.page),
        o("block", Some(d.block_bytes), report.block_bytes, &report.block),
        o("zone", d.zone_bytes, report.zone_bytes, &report.zone),
        o("parallel", Some(d.dies), report.parallel_units, &report.parallel),
    ];
    Ok((outcomes, report))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_are_deterministic_and_cover_the_ranges() {
        assert_eq!(draw(1, 5), draw(1, 5));
        assert_ne!(draw(1, 5), draw(2, 5));
        let devices: Vec<MatrixDevice> = (0..400).map(|i| draw(7, i)).collect();
        let has = |s: &str| devices.iter().any(|d| d.overrides.iter().any(|o| o == s));
        for s in [
            "device.page_size_bytes=2048",
            "device.page_size_bytes=65536",
            "device.channels_per_gang=3",
            "device.channels_per_gang=8",
            "device.gangs=7",
            "device.chips_per_channel=5",
            "device.planes_per_die=4",
            "ftl.kind=fast",
            "ftl.placement=host-gc",
            "buffer.kind=bplru",
        ] {
            assert!(has(s), "{s} never drawn");
        }
        for d in &devices {
            assert!(d.block_bytes <= MAX_BLOCK_BYTES);
            assert_eq!(d.block_bytes % d.effective_page_bytes, 0);
            assert!((16..=1024).contains(&(d.block_bytes / d.effective_page_bytes)));
        }
        // Not only powers of two.
        assert!(devices
            .iter()
            .any(|d| !(d.block_bytes / d.effective_page_bytes).is_power_of_two()));
        assert!(devices.iter().any(|d| !d.effective_page_bytes.is_power_of_two()));
    }
}
