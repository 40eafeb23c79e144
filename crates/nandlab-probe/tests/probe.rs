//! Goal: every probe recovers the configured geometry of simulated devices — effective page =
//! flash page × channels per gang, the block of a block-mapped (hybrid) FTL, the mapping zone,
//! the dies serving reads at once — and finds no zone where the whole table is resident.
//! Method: `probe` against prefilled `sim:` targets (exact simulated times), one probe per
//! test to keep each run short.

use nandlab_probe::probe::{probe, ProbeOptions, ProbeReport};
use nandlab_probe::target::SimTarget;

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
        assert_eq!(r.curves.len(), 4);
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
