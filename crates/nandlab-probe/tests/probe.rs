//! Goal: every probe recovers the configured geometry of simulated devices — effective page =
//! flash page × channels per gang, the block of a block-mapped (hybrid) FTL, the mapping zone,
//! the dies serving reads at once — and finds no zone where the whole table is resident.
//! Method: `probe` against prefilled `sim:` targets (exact simulated times), one probe per
//! test to keep each run short.

use nandlab_probe::probe::{probe, ProbeOptions, ProbeReport};
use nandlab_probe::target::SimTarget;
use nandlab_probe::Target;

fn only(which: &str) -> ProbeOptions {
    ProbeOptions {
        page: which == "page",
        block: which == "block",
        zone: which == "zone",
        parallel: which == "parallel",
        ..ProbeOptions::default()
    }
}

fn run(device: &[&str], which: &str) -> ProbeReport {
    let mut overrides = vec!["device.logical_bytes=134217728".to_string()];
    overrides.extend(device.iter().map(|s| (*s).to_string()));
    let mut t = SimTarget::new(None, &overrides, true).unwrap();
    probe(&mut t, &only(which), &mut |_| {}).unwrap()
}

#[test]
fn effective_page_is_the_flash_page_times_the_channels_per_gang() {
    for (device, want) in [
        (vec![], 4096),
        (vec!["device.channels_per_gang=2"], 8192),
        (vec!["device.channels_per_gang=4"], 16384),
        (vec!["device.channels_per_gang=4", "device.page_size_bytes=8192"], 32768),
        // A write buffer hides the writes' step: the read variant finds the page.
        (vec!["buffer.kind=fab", "buffer.size_bytes=1048576"], 4096),
        // Pages of one request go to different dies at once: the partial pages' reads show.
        (vec!["device.channels_per_gang=2", "device.chips_per_channel=2"], 8192),
    ] {
        let r = run(&device, "page");
        assert_eq!(r.effective_page_bytes, Some(want), "{device:?}: {}", r.page.how);
        assert_eq!(r.configured.unwrap().effective_page_bytes, want);
        assert!(r.page.confidence >= 0.5, "{device:?}: {}", r.page.confidence);
        assert_eq!(r.curves.len(), 2, "aligned and shifted");
    }
}

#[test]
fn block_is_the_merge_unit_of_hybrid_ftls_and_the_page_ftl_with_a_cleaner_log() {
    for (device, want) in [
        (vec!["ftl.kind=bast", "device.pages_per_block=32"], 131_072),
        (vec!["ftl.kind=bast", "device.pages_per_block=64"], 262_144),
        (vec!["ftl.kind=fast", "device.pages_per_block=128"], 524_288),
        // A page-mapped FTL shows its block when the cleaner's copies have a log of their
        // own (with one shared log its knee lies at 4 blocks: RESULTS in experiments/geometry).
        (vec!["ftl.placement=host-gc", "device.pages_per_block=32"], 131_072),
        (vec!["ftl.placement=host-gc", "device.pages_per_block=64"], 262_144),
    ] {
        let r = run(&device, "block");
        assert_eq!(r.block_bytes, Some(want), "{device:?}: {}", r.block.how);
        assert_eq!(r.configured.unwrap().block_bytes, want);
    }
}

#[test]
fn zone_is_the_mapping_zone_and_absent_without_one() {
    for (device, want) in [
        (vec!["ftl.mapping_zone_bytes=4194304"], Some(4_194_304)),
        (vec!["ftl.mapping_zone_bytes=16777216"], Some(16_777_216)),
        (vec!["ftl.kind=bast", "ftl.mapping_zone_bytes=8388608"], Some(8_388_608)),
        // A write buffer would answer reads of what was just written: the probe pushes it out.
        (
            vec!["buffer.kind=fab", "buffer.size_bytes=1048576", "ftl.mapping_zone_bytes=16777216"],
            Some(16_777_216),
        ),
        (vec![], None),
    ] {
        let r = run(&device, "zone");
        assert_eq!(r.zone_bytes, want, "{device:?}: {}", r.zone.how);
        assert_eq!(r.configured.unwrap().zone_bytes, want.map(|z: u64| z));
    }
}

#[test]
fn parallel_units_are_the_dies_serving_reads() {
    for (device, want) in [
        (vec![], 1),
        (vec!["device.chips_per_channel=2"], 2),
        (vec!["device.gangs=2", "device.chips_per_channel=2"], 4),
    ] {
        let r = run(&device, "parallel");
        assert_eq!(r.parallel_units, Some(want), "{device:?}: {}", r.parallel.how);
    }
}

/// A simulated device seen as a wall-clock target is: several measurements per point (the
/// probe's repeats), each reply late by a client's round trip with jitter, now and then a
/// hiccup of milliseconds (the scheduler, another process), and slow spells of 64 replies
/// (the host writing back the served drive's image). Deterministic, so a failure reproduces.
struct WallClockLike {
    sim: SimTarget,
    state: u64,
    replies: u64,
}

impl WallClockLike {
    fn new(device: &[&str]) -> Self {
        let mut overrides = vec!["device.logical_bytes=134217728".to_string()];
        overrides.extend(device.iter().map(|s| (*s).to_string()));
        Self { sim: SimTarget::new(None, &overrides, true).unwrap(), state: 1, replies: 0 }
    }

    /// A 30 µs round trip, ±6 µs of jitter, one reply in 16 a hiccup of 1–3 ms, and one spell
    /// of 64 replies in 700 twice as slow.
    fn late(&mut self, ns: u64) -> u64 {
        self.state = self
            .state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let r = self.state >> 33;
        self.replies += 1;
        let hiccup = if r.is_multiple_of(16) { 1_000_000 + r % 2_000_000 } else { 0 };
        let spell = if (300..364).contains(&(self.replies % 700)) { ns } else { 0 };
        ns + spell + 24_000 + r % 12_000 + hiccup
    }
}

impl Target for WallClockLike {
    fn describe(&self) -> String {
        "a simulated device seen through a noisy client".into()
    }
    fn capacity_bytes(&self) -> u64 {
        self.sim.capacity_bytes()
    }
    fn write(&mut self, offset: u64, len: u64) -> Result<u64, String> {
        let ns = self.sim.write(offset, len)?;
        Ok(self.late(ns))
    }
    fn read(&mut self, offset: u64, len: u64) -> Result<u64, String> {
        let ns = self.sim.read(offset, len)?;
        Ok(self.late(ns))
    }
    fn flush(&mut self) -> Result<u64, String> {
        let ns = self.sim.flush()?;
        Ok(self.late(ns))
    }
    fn simulated(&self) -> bool {
        false
    }
}

/// Goal: the probes that read a small step — the read variant behind a write buffer (one page
/// read more), the zone of a device whose table page is one fast read — find the configured
/// size through repeats and a client's noise, as on `nandlab serve` (experiments/geometry).
/// A buffer that caches what it reads (FAB) answers a read of a page read in an earlier pass,
/// so every pass must read pages of its own; a mean of B's reads moves with one hiccup, so the
/// zone probe takes the median of every read.
#[test]
fn small_steps_are_found_through_repeats_and_a_noisy_client() {
    for (device, which, want) in [
        (vec!["buffer.kind=fab", "buffer.size_bytes=1048576"], "page", 4096),
        (
            vec![
                "buffer.kind=fab",
                "buffer.size_bytes=1048576",
                "timing.read_page_ns=200000",
                "timing.program_page_ns=1000000",
            ],
            "page",
            4096,
        ),
        (
            vec![
                "device.channels_per_gang=4",
                "device.page_size_bytes=8192",
                "device.pages_per_block=16",
                "ftl.mapping_zone_bytes=8388608",
            ],
            "page",
            32_768,
        ),
        (
            vec![
                "device.channels_per_gang=4",
                "device.page_size_bytes=8192",
                "device.pages_per_block=16",
                "ftl.mapping_zone_bytes=8388608",
            ],
            "zone",
            8_388_608,
        ),
        (
            vec!["buffer.kind=fab", "buffer.size_bytes=1048576", "ftl.mapping_zone_bytes=16777216"],
            "zone",
            16_777_216,
        ),
    ] {
        let mut t = WallClockLike::new(&device);
        let r = probe(&mut t, &only(which), &mut |_| {}).unwrap();
        let (got, how) = match which {
            "page" => (r.effective_page_bytes, &r.page.how),
            _ => (r.zone_bytes, &r.zone.how),
        };
        assert_eq!(got, Some(want), "{device:?} {which}: {how}");
    }
}
