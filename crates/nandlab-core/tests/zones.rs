//! Goal: mapping-table zones (`ftl.mapping_zone_bytes`, `ftl::zones`) load and write back
//! exactly the table pages worked out by hand, cost exactly their flash time, and leave the data
//! path's counters unchanged; bad keys are refused naming the field.
//! Method: a one-die device with generic timing (read 25 us, transfer 10.24 us, program
//! 200 us) driven request by request; then whole runs with and without zones compared.

use nandlab_core::{Config, Device, Dispatched, Request, Submission, Synthetic};

const PAGE: u64 = 4096;
/// A table page read (25 us + 10.24 us transfer) and program (10.24 us + 200 us).
const MAP_READ_NS: u64 = 35_240;
const MAP_PROGRAM_NS: u64 = 210_240;
const DATA_PROGRAM_NS: u64 = 210_240;
const DATA_READ_NS: u64 = 35_240;

fn resolve(overrides: &[&str]) -> Result<nandlab_core::Resolved, String> {
    Config::from_overrides(overrides)
        .map_err(|e| e.to_string())?
        .resolve()
        .map_err(|e| e.to_string())
}

/// 16 blocks × 4 pages, 32 logical pages in 4 zones of 8 pages (one table page each).
fn tiny(cache_zones: u32) -> Device {
    let r = resolve(&[
        "device.blocks=16",
        "device.pages_per_block=4",
        "device.logical_bytes=131072",
        "ftl.mapping_zone_bytes=32768",
        &format!("ftl.mapping_cache_zones={cache_zones}"),
    ])
    .unwrap();
    let z = r.zones.expect("zones configured");
    assert_eq!((z.pages_per_zone, z.table_pages, z.zones), (8, 1, 4));
    Device::new(&r, None).unwrap()
}

fn write(d: &mut Device, lpn: u64) -> u64 {
    d.dispatch(Submission::new(&Request::write(lpn * PAGE, PAGE)))
        .map(Dispatched::completion)
        .unwrap()
        .service_ns
}
fn read(d: &mut Device, lpn: u64) -> u64 {
    d.dispatch(Submission::new(&Request::read(lpn * PAGE, PAGE)))
        .map(Dispatched::completion)
        .unwrap()
        .service_ns
}
fn trim(d: &mut Device, lpn: u64) -> u64 {
    d.dispatch(Submission::new(&Request::trim(lpn * PAGE, PAGE)))
        .map(Dispatched::completion)
        .unwrap()
        .service_ns
}

#[test]
fn one_resident_zone_loads_on_every_zone_change_and_writes_back_changed_tables() {
    let mut d = tiny(1);
    // Write 0 (zone 0): load zone 0, then the data program.
    assert_eq!(write(&mut d, 0), MAP_READ_NS + DATA_PROGRAM_NS);
    // Write 1: zone 0 is resident.
    assert_eq!(write(&mut d, 1), DATA_PROGRAM_NS);
    // Read 8 (zone 1, unmapped: no data read): zone 0 changed, so it is written back first.
    assert_eq!(read(&mut d, 8), MAP_PROGRAM_NS + MAP_READ_NS);
    // Read 0 (zone 0): zone 1 is clean: dropped; zone 0 loaded; the data read.
    assert_eq!(read(&mut d, 0), MAP_READ_NS + DATA_READ_NS);
    // Write 16 (zone 2): zone 0 unchanged since its load.
    assert_eq!(write(&mut d, 16), MAP_READ_NS + DATA_PROGRAM_NS);
    // Trim 24 (zone 3, unmapped: the table does not change): zone 2 written back.
    assert_eq!(trim(&mut d, 24), MAP_PROGRAM_NS + MAP_READ_NS);
    // Read 25: zone 3 resident, unmapped.
    assert_eq!(read(&mut d, 25), 0);
    let m = d.metrics();
    assert_eq!((m.mapping_zone_loads, m.mapping_zone_write_backs), (5, 2));
    assert_eq!((m.mapping_read_pages, m.mapping_program_pages), (5, 2));
    // Table pages are flash operations: 3 data programs + 2 table programs.
    assert_eq!((m.flash_program_pages, m.flash_read_pages), (5, 6));
    assert!((m.write_amplification - 5.0 / 3.0).abs() < 1e-12);
    assert_eq!(m.flash_time_ns.mapping, 5 * MAP_READ_NS + 2 * MAP_PROGRAM_NS);
    assert_eq!(m.flash_busy_ns, m.flash_time_ns.mapping + 3 * DATA_PROGRAM_NS + DATA_READ_NS);
    d.check();
}

#[test]
fn two_resident_zones_replace_the_least_recently_used() {
    let mut d = tiny(2);
    assert_eq!(write(&mut d, 0), MAP_READ_NS + DATA_PROGRAM_NS); // load z0
    assert_eq!(write(&mut d, 1), DATA_PROGRAM_NS);
    assert_eq!(read(&mut d, 8), MAP_READ_NS); // load z1 (a free slot)
    assert_eq!(read(&mut d, 0), DATA_READ_NS); // z0 resident
                                               // Write 16 (z2): the least recently used is z1 (clean).
    assert_eq!(write(&mut d, 16), MAP_READ_NS + DATA_PROGRAM_NS);
    // Trim 1 (z0, mapped: the table changes): resident.
    assert_eq!(trim(&mut d, 1), 0);
    // Read 24 (z3): the least recently used is z2 (written: changed) — not z0, used later.
    assert_eq!(read(&mut d, 24), MAP_PROGRAM_NS + MAP_READ_NS);
    // Read 9 (z1): evicts z0, changed by the trim.
    assert_eq!(read(&mut d, 9), MAP_PROGRAM_NS + MAP_READ_NS);
    let m = d.metrics();
    assert_eq!((m.mapping_zone_loads, m.mapping_zone_write_backs), (5, 2));
    d.check();
}

#[test]
fn without_zones_nothing_changes_and_zone_keys_are_checked() {
    let r = resolve(&["device.blocks=16", "device.pages_per_block=4", "device.utilization=0.5"])
        .unwrap();
    assert!(r.zones.is_none());
    let e = resolve(&["ftl.mapping_cache_zones=2"]).unwrap_err();
    assert!(e.contains("ftl.mapping_cache_zones"), "{e}");
    let e = resolve(&["ftl.mapping_zone_bytes=6000"]).unwrap_err();
    assert!(e.contains("ftl.mapping_zone_bytes") && e.contains("4096"), "{e}");
    let e = resolve(&["ftl.mapping_zone_bytes=0"]).unwrap_err();
    assert!(e.contains("ftl.mapping_zone_bytes"), "{e}");
    // The hybrid kinds map blocks: a zone is whole blocks (64 pages × 4 KiB by default).
    let e = resolve(&["ftl.kind=bast", "ftl.mapping_zone_bytes=65536"]).unwrap_err();
    assert!(e.contains("block"), "{e}");
    let r = resolve(&["ftl.kind=bast", "ftl.mapping_zone_bytes=16777216"]).unwrap();
    // 64 blocks of 4-byte entries: one table page.
    assert_eq!(r.zones.unwrap().table_pages, 1);
    // The page FTL: 4,096 pages of 4-byte entries per 16 MiB zone = 4 table pages.
    let r = resolve(&["ftl.mapping_zone_bytes=16777216"]).unwrap();
    assert_eq!((r.zones.unwrap().table_pages, r.config.ftl.mapping_cache_zones), (4, Some(1)));
}

/// A whole run with zones against one without: the data path is the same (its programs,
/// copies, erases); table pages come on top.
fn compare(kind: &str) {
    let base = [
        "device.blocks=256",
        "device.pages_per_block=16",
        "workload.kind=hotcold",
        "workload.passes=2",
        "workload.read_fraction=0.3",
    ];
    let mut zoned = base.to_vec();
    let k = format!("ftl.kind={kind}");
    zoned.push(&k);
    let plain = zoned.clone();
    // 32 blocks' worth of logical space per zone, two resident.
    zoned.extend(["ftl.mapping_zone_bytes=2097152", "ftl.mapping_cache_zones=2"]);
    let run = |o: &[&str]| {
        let r = resolve(o).unwrap();
        let mut device = Device::new(&r, None).unwrap();
        let items = Synthetic::new(&r.workload).map(Ok::<_, std::convert::Infallible>);
        let options =
            nandlab_core::RunOptions { check_every_requests: 20_000, ..Default::default() };
        let m = nandlab_core::run(&mut device, items, options, &mut |_| {}).unwrap();
        device.check();
        m
    };
    let (a, b) = (run(&plain), run(&zoned));
    assert_eq!(a.mapping_zone_loads, 0);
    assert!(b.mapping_zone_loads > 10, "{kind}: {}", b.mapping_zone_loads);
    assert!(b.mapping_zone_write_backs > 0 && b.mapping_zone_write_backs <= b.mapping_zone_loads);
    assert_eq!(b.flash_program_pages - b.mapping_program_pages, a.flash_program_pages, "{kind}");
    assert_eq!(b.flash_read_pages - b.mapping_read_pages, a.flash_read_pages, "{kind}");
    assert_eq!((b.erases, b.gc_copied_pages), (a.erases, a.gc_copied_pages), "{kind}");
    assert!(b.write_amplification > a.write_amplification);
    assert!(b.write_latency_ns.mean > a.write_latency_ns.mean);
}

#[test]
fn zones_add_table_pages_and_leave_the_data_path_unchanged_for_every_ftl_kind() {
    for kind in ["page", "bast", "sast", "fast"] {
        compare(kind);
    }
}
