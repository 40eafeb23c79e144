//! Goal: DEB (LFSS thesis §4.1, docs/ALGORITHMS.md §3) behaves rule by rule on a real device: each
//! of the seven data-reorganization rules puts a page in exactly the region the rules say, the EBR
//! absorbs updates in RAM and writes back oldest first, "DAC with RAM" promotes into and demotes
//! out of its RAM region, and the config rejects what it cannot honour. Method: tiny devices driven
//! by timed single-page writes (the service time is microseconds, so every write starts at its
//! arrival second); `Ftl::locate` names each page's region (the EBR / RAM region is the index above
//! the flash regions: 4 here). Plus a random run with the invariant checker on.

use nandlab_core::media::{BlockId, Lpn};
use nandlab_core::{Config, Device, Dispatched, Request, Resolved, Submission, Workload};

const S: u64 = 1_000_000_000;
const PAGE: u64 = 4096;
/// The EBR's region index with the paper's four flash regions.
const EBR: u8 = 4;

fn resolve(overrides: &[&str]) -> Resolved {
    let mut o = vec!["device.pages_per_block=4", "device.blocks=32", "device.utilization=0.25"];
    o.extend_from_slice(overrides);
    Config::from_overrides(&o).unwrap().resolve().unwrap()
}

/// DEB with a 4-page EBR (rule 5 fires when a fifth page comes and keeps at most one).
fn deb_device() -> Device {
    let r = resolve(&["ftl.placement=deb", "deb.ebr_size_bytes=16384"]);
    assert_eq!(r.ram_region_pages(), 4);
    Device::new(&r, None).unwrap()
}

fn write(d: &mut Device, lpn: u64, at_s: u64) {
    d.dispatch(Submission::new(&Request::write(lpn * PAGE, PAGE).at(at_s * S)))
        .map(Dispatched::completion)
        .unwrap();
}

fn region(d: &Device, lpn: u32) -> u8 {
    d.ftl().locate(Lpn::new(lpn)).expect("page is mapped").1
}

/// The block holding `lpn`.
fn block_of(d: &Device, lpn: u32) -> BlockId {
    let ppn = d.ftl().locate(Lpn::new(lpn)).expect("page is mapped").0;
    d.ftl().geometry().block_of(ppn)
}

fn regions(d: &Device, lpns: &[u32]) -> Vec<u8> {
    lpns.iter().map(|&l| region(d, l)).collect()
}

#[test]
fn each_rule_puts_each_page_in_its_region() {
    let mut d = deb_device();
    // Rule 1: new pages go to the EBR.
    for lpn in 0..4 {
        write(&mut d, lpn, lpn);
    }
    assert_eq!(regions(&d, &[0, 1, 2, 3]), [EBR; 4]);
    // Rule 5: a fifth page needs a slot; the 3 oldest go back (below half of 4 remains), each
    // to the region holding its age: 4, 3 and 2 s are inside the EBR's own [0, 100] → the
    // hottest flash region.
    write(&mut d, 4, 4);
    assert_eq!(regions(&d, &[0, 1, 2, 3, 4]), [3, 3, 3, EBR, EBR]);
    let ram = d.metrics().ram_region.unwrap();
    assert_eq!((ram.counters.write_backs, ram.counters.write_back_pages), (1, 3));
    // Rule 6: an update in the EBR is in place (no flash program).
    let programs = d.metrics().flash_program_pages;
    write(&mut d, 3, 5);
    assert_eq!(region(&d, 3), EBR);
    assert_eq!(d.metrics().flash_program_pages, programs);
    assert_eq!(d.metrics().ram_region.unwrap().counters.in_place_updates, 1);
    // Rule 2: page 1 (hottest region, [100, 200] s) updated 149 s later stays.
    write(&mut d, 1, 150);
    assert_eq!(region(&d, 1), 3);
    // Rule 4: page 2 updated 498 s later is slow for [100, 200]: one colder.
    write(&mut d, 2, 500);
    assert_eq!(region(&d, 2), 2);
    // Rule 3: 10 s later is fast for region 2 ([200, 300]): one hotter ...
    write(&mut d, 2, 510);
    assert_eq!(region(&d, 2), 3);
    // ... and fast again: the EBR.
    write(&mut d, 2, 520);
    assert_eq!(region(&d, 2), EBR);
    // Rule 3 from a colder region: page 0 goes 3 → 2 → 1 by slow updates, then two fast ones
    // take it to region 2 and then into the EBR.
    write(&mut d, 0, 530);
    assert_eq!(region(&d, 0), 2);
    write(&mut d, 0, 1000);
    assert_eq!(region(&d, 0), 1);
    write(&mut d, 0, 1010);
    assert_eq!(region(&d, 0), 2);
    write(&mut d, 0, 1020);
    assert_eq!(region(&d, 0), EBR);
    d.check();
}

#[test]
fn rule_5_writes_back_each_page_to_the_region_of_its_age() {
    let mut d = deb_device();
    for (lpn, t) in [(0, 0), (1, 100), (2, 200), (3, 350)] {
        write(&mut d, lpn, t);
    }
    // At 420 s the ages are 420, 320, 220 (and 70): regions 0 ([400, ∞)), 1 ([300, 400]) and
    // 2 ([200, 300]); page 3 stays.
    write(&mut d, 4, 420);
    assert_eq!(regions(&d, &[0, 1, 2, 3, 4]), [0, 1, 2, EBR, EBR]);
    // At 450 s: page 3's age is exactly 100 s, the hottest region's lower bound (a shared
    // bound belongs to the colder side); pages 4 and 5 (30 and 20 s) are inside the EBR's own
    // interval: the hottest flash region too.
    write(&mut d, 5, 430);
    write(&mut d, 6, 440);
    write(&mut d, 7, 450);
    assert_eq!(regions(&d, &[3, 4, 5, 6, 7]), [3, 3, 3, EBR, EBR]);
    let c = d.metrics().ram_region.unwrap().counters;
    assert_eq!((c.write_backs, c.write_back_pages, c.host_write_pages), (2, 6, 8));
    d.check();
}

#[test]
fn rule_7_cleaning_demotes_and_no_ebr_means_the_hottest_region() {
    // No EBR, two flash regions (hottest [100, 200], coldest [200, ∞)), FIFO cleaning: the
    // first victim is the first block written.
    let r = resolve(&[
        "ftl.placement=deb",
        "deb.ebr_size_bytes=0",
        "deb.stable_time_intervals_s=[100, 200]",
        "ftl.cleaning=fifo",
        "device.blocks=8",
    ]);
    assert_eq!((r.regions, r.ram_region_pages()), (2, 0));
    let mut d = Device::new(&r, None).unwrap();
    // Rule 1 without an EBR: the hottest flash region.
    for lpn in 0..8 {
        write(&mut d, lpn, 0);
    }
    assert_eq!(regions(&d, &[0, 3, 7]), [1, 1, 1]);
    assert!(d.metrics().ram_region.is_none());
    let block_of_3 = block_of(&d, 3);
    // Fast updates of every page but 3 and 7 (they stay in the hottest region) until the
    // cleaner runs once.
    for t in 1.. {
        let lpn = [0, 1, 2, 4, 5, 6][t as usize % 6];
        write(&mut d, lpn, t);
        assert_eq!(region(&d, lpn as u32), 1);
        if d.metrics().gc_victims > 0 {
            break;
        }
    }
    // The cleaner needed two victims to restore its reserve: page 3's block, then page 7's
    // (FIFO); each held one valid page, and both went one region colder, into one new block.
    let m = d.metrics();
    assert_eq!((m.gc_victims, m.gc_copied_pages), (2, 2));
    assert_eq!(regions(&d, &[3, 7]), [0, 0]);
    let new_block = block_of(&d, 3);
    assert_ne!(new_block, block_of_3);
    assert_eq!(block_of(&d, 7), new_block);
    d.check();
}

#[test]
fn dac_ram_region_is_the_hottest_region() {
    let r = resolve(&["ftl.placement=dac", "ftl.regions=2", "dac.ram_region_bytes=8192"]);
    let mut d = Device::new(&r, None).unwrap();
    // Region 0 (new), 1 (first update), 2 = RAM (second update), then in place.
    write(&mut d, 0, 0);
    assert_eq!(region(&d, 0), 0);
    write(&mut d, 0, 1);
    assert_eq!(region(&d, 0), 1);
    write(&mut d, 0, 2);
    assert_eq!(region(&d, 0), 2);
    write(&mut d, 0, 3);
    assert_eq!(region(&d, 0), 2);
    // A second page reaches RAM; a third needs room: the RAM region holds 2 (threshold 2,
    // keep below 1): both go back to the hottest flash region (DAC's demotion).
    for t in 4..7 {
        write(&mut d, 1, t);
    }
    assert_eq!(regions(&d, &[0, 1]), [2, 2]);
    for t in 7..10 {
        write(&mut d, 2, t);
    }
    assert_eq!(regions(&d, &[0, 1, 2]), [1, 1, 2]);
    let c = d.metrics().ram_region.unwrap().counters;
    assert_eq!((c.host_write_pages, c.in_place_updates, c.write_back_pages), (4, 1, 2));
    d.check();
}

#[test]
fn end_of_run_write_back_is_counted_apart_and_reads_come_from_ram() {
    let r = resolve(&[
        "ftl.placement=deb",
        "deb.ebr_size_bytes=16384",
        "workload.kind=hotcold",
        "workload.passes=4",
    ]);
    let mut d = Device::new(&r, None).unwrap();
    let items = Workload::new(&r.workload).unwrap().map(Ok::<_, std::convert::Infallible>);
    let options =
        nandlab_core::RunOptions { check_every_requests: 7, ..nandlab_core::RunOptions::of(&r) };
    let m = nandlab_core::run(&mut d, items, options, &mut |_| {}).unwrap();
    let ram = m.ram_region.unwrap();
    assert_eq!(ram.used_pages, 0, "the end of the run empties the EBR");
    assert!(ram.counters.final_write_back_pages > 0);
    assert!(ram.counters.in_place_updates > 0);
    // Every host page write either programmed flash at once or went to RAM; RAM pages reach
    // flash by write-back (or are overwritten in place, or were resident before the window).
    let c = ram.counters;
    let flash_host = m.flash_program_pages - m.gc_copied_pages;
    let from_ram = c.write_back_pages + c.final_write_back_pages;
    assert_eq!(flash_host, m.host_write_pages - c.host_write_pages + from_ram);
    assert!(c.ram_ns > 0);
    // A read of a page in RAM is served there.
    let mut d = deb_device();
    write(&mut d, 9, 1);
    d.dispatch(Submission::new(&Request::read(9 * PAGE, PAGE).at(2 * S)))
        .map(Dispatched::completion)
        .unwrap();
    let m = d.metrics();
    assert_eq!((m.flash_read_pages, m.ram_region.unwrap().counters.read_pages), (0, 1));
}

#[test]
fn config_rejects_bad_intervals_oversized_ebr_and_foreign_keys() {
    let err = |o: &[&str]| Config::from_overrides(o).unwrap().resolve().unwrap_err();
    let e = err(&["ftl.placement=deb", "deb.stable_time_intervals_s=[100, 300, 200]"]);
    assert_eq!(e.key, "deb.stable_time_intervals_s");
    assert!(e.message.contains("strictly increasing"), "{e}");
    assert!(e.message.contains("300"), "names the offending value: {e}");
    let e = err(&["ftl.placement=deb", "deb.stable_time_intervals_s=[100, 100]"]);
    assert_eq!(e.key, "deb.stable_time_intervals_s");
    let e = err(&["ftl.placement=deb", "deb.stable_time_intervals_s=[]"]);
    assert_eq!(e.key, "deb.stable_time_intervals_s");
    // A 4 MB EBR on a device with 2 MB of RAM.
    let e = err(&["ftl.placement=deb", "device.ram_bytes=2097152"]);
    assert_eq!(e.key, "deb.ebr_size_bytes");
    assert!(e.message.contains("device.ram_bytes = 2097152"), "{e}");
    // The buffer counts against the same budget.
    let e = err(&[
        "ftl.placement=dac",
        "dac.ram_region_bytes=4194304",
        "buffer.kind=lru",
        "buffer.size_bytes=4194304",
        "device.ram_bytes=6291456",
    ]);
    assert_eq!(e.key, "dac.ram_region_bytes");
    assert!(e.message.contains("8388608 bytes of RAM together"), "{e}");
    let e = err(&["ftl.placement=dac", "deb.ebr_size_bytes=4096"]);
    assert_eq!(e.key, "deb.ebr_size_bytes");
    let e = err(&["ftl.placement=deb", "dac.ram_region_bytes=4096"]);
    assert_eq!(e.key, "dac.ram_region_bytes");
    let e = err(&["ftl.placement=deb", "ftl.regions=3"]);
    assert_eq!(e.key, "ftl.regions");
    let e = err(&["ftl.placement=deb", "deb.ebr_write_back_threshold=1.5"]);
    assert_eq!(e.key, "deb.ebr_write_back_threshold");
    let e = err(&["ftl.placement=deb", "deb.ebr_size_bytes=100"]);
    assert_eq!(e.key, "deb.ebr_size_bytes");
    // Defaults: the paper's intervals, 4 MB, threshold 1.0, wear-aware on.
    let r = Config::from_overrides(&["ftl.placement=deb"]).unwrap().resolve().unwrap();
    let v = |key: &str| r.config.value(key);
    let intervals: Vec<f64> = v("deb.stable_time_intervals_s").unwrap().try_into().unwrap();
    assert_eq!(intervals, [100.0, 200.0, 300.0, 400.0]);
    assert_eq!(v("deb.ebr_size_bytes"), Some(toml::Value::Integer(4 << 20)));
    assert_eq!(v("deb.ebr_write_back_threshold"), Some(toml::Value::Float(1.0)));
    assert_eq!(v("deb.wear_aware"), Some(toml::Value::Boolean(true)));
    assert_eq!(r.regions, 4);
}

#[test]
fn deb_keeps_its_invariants_and_beats_dac_on_a_skewed_workload() {
    let base = [
        "device.blocks=256",
        "device.pages_per_block=32",
        "device.utilization=0.9",
        "workload.kind=hotcold",
        "workload.hot_access_fraction=0.9",
        "workload.hot_data_fraction=0.1",
        "workload.passes=2",
        "ftl.cleaning=cat",
        // 1 MB EBR on 32 MB: the hot tenth (2.9 MB) does not fit, as in the paper's setting.
        "deb.ebr_size_bytes=1048576",
    ];
    let run = |placement: &str| {
        let mut o: Vec<&str> = base.to_vec();
        if placement == "dac" {
            o.retain(|s| !s.starts_with("deb."));
        }
        let p = format!("ftl.placement={placement}");
        o.push(&p);
        let r = Config::from_overrides(&o).unwrap().resolve().unwrap();
        let mut d = Device::new(&r, None).unwrap();
        let items = Workload::new(&r.workload).unwrap().map(Ok::<_, std::convert::Infallible>);
        let options = nandlab_core::RunOptions {
            check_every_requests: 997,
            ..nandlab_core::RunOptions::of(&r)
        };
        let m = nandlab_core::run(&mut d, items, options, &mut |_| {}).unwrap();
        d.check();
        m
    };
    let (dac, deb) = (run("dac"), run("deb"));
    assert!(
        (deb.erases as f64) < 0.9 * dac.erases as f64,
        "DEB {} erases vs DAC {}",
        deb.erases,
        dac.erases
    );
}

/// DEB's wear-aware region moves: hotter regions take less worn free blocks, colder ones more
/// worn blocks, which evens wear under a cleaner (greedy) that ignores it.
#[test]
fn wear_aware_allocation_evens_wear() {
    let run = |aware: &str| {
        let o = [
            "device.blocks=256",
            "device.pages_per_block=32",
            "device.utilization=0.9",
            "workload.kind=hotcold",
            "workload.hot_access_fraction=0.9",
            "workload.hot_data_fraction=0.1",
            "workload.passes=20",
            "ftl.placement=deb",
            "ftl.cleaning=greedy",
            aware,
        ];
        let r = Config::from_overrides(&o).unwrap().resolve().unwrap();
        let mut d = Device::new(&r, None).unwrap();
        let items = Workload::new(&r.workload).unwrap().map(Ok::<_, std::convert::Infallible>);
        nandlab_core::run(&mut d, items, nandlab_core::RunOptions::of(&r), &mut |_| {}).unwrap()
    };
    let (on, off) = (run("deb.wear_aware=true"), run("deb.wear_aware=false"));
    assert!(
        on.wear_stddev < 0.75 * off.wear_stddev,
        "std dev {} with, {} without",
        on.wear_stddev,
        off.wear_stddev
    );
    assert!(on.wear_max < off.wear_max);
}
