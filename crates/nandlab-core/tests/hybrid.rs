//! Goal: the hybrid log-block FTLs (docs/ALGORITHMS.md §4) behave as the papers describe at device
//! level.
//! - A purely sequential whole-block overwrite costs only switch merges: WA = 1.0 in BAST, SAST
//!   and FAST.
//! - Uniform random page writes: FAST's fully associative log blocks need far fewer full merges
//!   than BAST's one-log-per-block association.
//! - Bad configurations are rejected at construction with the key at fault.
//!
//! Method: synthetic workloads through `Device` and `nandlab_core::run`; exact counts where the
//! workload makes them exact.

use nandlab_core::{Config, Device, Metrics, Synthetic};

fn run(overrides: &[&str]) -> Metrics {
    let r = Config::from_overrides(overrides).unwrap().resolve().unwrap();
    let mut device = Device::new(&r, None).unwrap();
    let items = Synthetic::new(&r.workload).map(Ok::<_, std::convert::Infallible>);
    let options = nandlab_core::RunOptions {
        check_every_requests: 50_000,
        ..nandlab_core::RunOptions::default()
    };
    let m = nandlab_core::run(&mut device, items, options, &mut |_| {}).unwrap();
    device.check();
    m
}

#[test]
fn sequential_whole_block_overwrites_are_switch_merges_only() {
    for kind in ["bast", "sast", "fast"] {
        let kind_set = format!("ftl.kind={kind}");
        let m = run(&[
            &kind_set,
            "device.blocks=256",
            "workload.kind=sequential",
            "workload.prefill=true",
            "workload.passes=3",
        ]);
        let logical_blocks = m.host_write_pages / 3 / 64;
        assert_eq!(m.write_amplification, 1.0, "{kind}");
        assert_eq!(m.gc_copied_pages, 0, "{kind}");
        assert_eq!(m.full_merges.count + m.partial_merges.count + m.migrations.count, 0, "{kind}");
        // Every measured pass switches every logical block once and erases its old data block.
        assert_eq!(m.switch_merges.erases, m.erases, "{kind}");
        let switches = m.switch_merges.count;
        assert!(
            switches + 8 >= 3 * logical_blocks && switches <= 3 * logical_blocks,
            "{kind}: {switches} switch merges for {logical_blocks} logical blocks × 3 passes"
        );
    }
}

#[test]
fn fast_needs_far_fewer_full_merges_than_bast_on_random_writes() {
    let common = ["device.blocks=256", "workload.kind=uniform", "workload.prefill=true"];
    let bast = run(&[&common[..], &["ftl.kind=bast", "workload.passes=0.5"]].concat());
    let fast = run(&[&common[..], &["ftl.kind=fast", "workload.passes=0.5"]].concat());
    eprintln!(
        "uniform random page writes, 256 blocks × 64 pages, 8 log blocks: full merges \
         BAST {} ({} copies), FAST {} ({} copies); WA BAST {:.2}, FAST {:.2}",
        bast.full_merges.count,
        bast.full_merges.copied_pages,
        fast.full_merges.count,
        fast.full_merges.copied_pages,
        bast.write_amplification,
        fast.write_amplification
    );
    assert_eq!(bast.host_write_pages, fast.host_write_pages);
    assert!(
        fast.full_merges.count * 2 < bast.full_merges.count,
        "FAST {} vs BAST {} full merges",
        fast.full_merges.count,
        bast.full_merges.count
    );
    assert!(fast.write_amplification < bast.write_amplification);
}

#[test]
fn flash_time_breakdown_sums_to_busy_time() {
    let m = run(&[
        "ftl.kind=bast",
        "ftl.recycling=optimal",
        "device.preset=mlc2007",
        "device.blocks=128",
        "workload.kind=hotcold",
        "workload.passes=0.3",
    ]);
    let t = m.flash_time_ns;
    assert_eq!(t.read + t.program + t.copy + t.erase, m.flash_busy_ns);
    let recycled: u64 = [m.switch_merges, m.partial_merges, m.full_merges, m.migrations]
        .iter()
        .chain(std::iter::once(&m.log_discards))
        .map(|s| s.busy_ns)
        .sum();
    // Recycling is all the copying and erasing there is.
    assert_eq!(recycled, t.copy + t.erase);
    assert_eq!(t.copy, m.gc_copied_pages * 1_128_000);
}

fn error(overrides: &[&str]) -> nandlab_core::ConfigError {
    Config::from_overrides(overrides).unwrap().resolve().unwrap_err()
}

#[test]
fn bad_hybrid_configs_name_the_key() {
    // 100 blocks at utilization 0.95: 95 logical blocks, 5 spare: not enough for 8 logs.
    let e = error(&["ftl.kind=bast", "device.blocks=100", "device.utilization=0.95"]);
    assert_eq!(e.key, "ftl.log_blocks", "{e}");
    assert!(e.to_string().contains("spare"), "{e}");
    // 4096-block device with 3277... logical blocks explicitly sized: groups of 4 don't divide.
    let e = error(&[
        "ftl.kind=sast",
        "device.blocks=64",
        "device.pages_per_block=4",
        "device.logical_bytes=204800",
    ]);
    assert_eq!(e.key, "ftl.group_data_blocks", "{e}");
    let e = error(&["ftl.kind=sast", "ftl.group_log_blocks=9"]);
    assert_eq!(e.key, "ftl.group_log_blocks", "{e}");
    let e = error(&["ftl.kind=fast", "ftl.recycling=optimal"]);
    assert_eq!(e.key, "ftl.recycling", "{e}");
    let e = error(&["ftl.kind=fast", "ftl.log_blocks=1"]);
    assert_eq!(e.key, "ftl.log_blocks", "{e}");
    let e = error(&["ftl.kind=bast", "ftl.placement=dac"]);
    assert_eq!(e.key, "ftl.placement", "{e}");
    let e = error(&["ftl.kind=bast", "ftl.cleaning=cat"]);
    assert_eq!(e.key, "ftl.cleaning", "{e}");
    let e = error(&["ftl.kind=bast", "ftl.group_data_blocks=2"]);
    assert_eq!(e.key, "ftl.group_data_blocks", "{e}");
    let e = error(&["ftl.log_blocks=8"]);
    assert_eq!(e.key, "ftl.log_blocks", "{e}");
    let e = error(&["ftl.kind=bast", "ftl.migration_period=3"]);
    assert_eq!(e.key, "ftl.migration_period", "{e}");
    let e = error(&["ftl.kind=dftl"]);
    assert_eq!(e.key, "ftl.kind", "{e}");
}

#[test]
fn resolved_hybrid_configs_resolve_to_themselves() {
    for o in [
        &["ftl.kind=sast"][..],
        &["ftl.kind=bast", "ftl.recycling=periodic"],
        &["ftl.kind=fast", "device.preset=mlc2007"],
    ] {
        let r = Config::from_overrides(o).unwrap().resolve().unwrap();
        // Logical size is whole groups of whole blocks.
        let granule = u64::from(r.geometry.pages_per_block)
            * r.config.value("ftl.group_data_blocks").and_then(|v| v.as_integer()).unwrap_or(1)
                as u64;
        assert_eq!(r.geometry.logical_pages % granule, 0);
        let again = r.config.resolve().unwrap();
        assert_eq!(again.config, r.config);
    }
}
