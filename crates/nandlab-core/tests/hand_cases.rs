//! Goal: exact counts on tiny cases worked out by hand.
//! Method: drive a device of a few blocks with single-page writes and compare every erase,
//! copy, mapping and completion time with the numbers derived in the comments.

use nandlab_core::media::Lpn;
use nandlab_core::{Config, Device, Dispatched, Request, RequestKind, Submission};

const PAGE: u64 = 4096;

fn device(overrides: &[&str]) -> Device {
    let r = Config::from_overrides(overrides).unwrap().resolve().unwrap();
    Device::new(&r, None).unwrap()
}

fn write(d: &mut Device, lpn: u64) -> nandlab_core::Completion {
    d.dispatch(Submission::new(&Request::write(lpn * PAGE, PAGE)))
        .map(Dispatched::completion)
        .unwrap()
}

/// 8 blocks × 4 pages, 12 logical pages, one log, a reserve of 3 free blocks.
/// Where `lpn` lives: its physical page number and region.
fn locate(d: &Device, lpn: u32) -> Option<(u32, u8)> {
    d.ftl().locate(Lpn::new(lpn)).map(|(ppn, region)| (ppn.get(), region))
}

fn tiny(policy: &str) -> Device {
    device(&[
        "device.blocks=8",
        "device.pages_per_block=4",
        "device.logical_bytes=49152",
        "ftl.gc_free_blocks_min=3",
        &format!("ftl.cleaning={policy}"),
    ])
}

#[test]
fn greedy_cleans_the_emptiest_block_and_copies_its_last_valid_page() {
    let mut d = tiny("greedy");
    // Prefill: LPN 0..11 fill blocks 0, 1, 2; free: 3 4 5 6 7.
    for lpn in 0..12 {
        write(&mut d, lpn);
    }
    d.start_measurement();
    // 0 1 2 → block 3; 4 fills block 3 (0 1 2 4); 5 6 → block 4 (free: 5 6 7).
    // 8 9 → block 4 full (5 6 8 9). Valid: b0 {3}, b1 {7}, b2 {10 11}.
    // 10 → block 5 opened (free: 6 7, below the reserve of 3). b2 {11}.
    for lpn in [0, 1, 2, 4, 5, 6, 8, 9, 10] {
        write(&mut d, lpn);
    }
    assert_eq!(d.metrics().erases, 0);
    // Writing 0 finds 2 free blocks < 3: clean. b0, b1, b2 each hold one valid page; the least
    // recently modified is b0 (its last change was the rewrite of LPN 2). Copy LPN 3 into the
    // active block 5 (10 3), erase b0. Then LPN 0 → block 5 (10 3 0).
    let c = write(&mut d, 0);
    let m = d.metrics();
    assert_eq!(m.host_write_pages, 10);
    assert_eq!(m.erases, 1);
    assert_eq!(m.gc_copied_pages, 1);
    assert_eq!(m.flash_program_pages, 11);
    assert!((m.write_amplification - 1.1).abs() < 1e-12);
    assert!((m.cleaning_cost - (1.0 + 0.25 * 0.75)).abs() < 1e-12);
    assert_eq!(locate(&d, 3), Some((5 * 4 + 1, 0)));
    assert_eq!(locate(&d, 0), Some((5 * 4 + 2, 0)));
    assert_eq!(d.ftl().erase_counts()[0], 1);
    // Generic timing: copy = 25 us read + 2 × 10.24 us transfer + 200 us program = 245.48 us;
    // erase 1.5 ms; the host page 10.24 + 200 us.
    assert_eq!(c.service_ns, 245_480 + 1_500_000 + 210_240);
    let e = c.effects;
    assert_eq!(
        (e.flash_read_pages, e.flash_program_pages, e.gc_copied_pages, e.erases),
        (1, 2, 1, 1)
    );
    assert_eq!(c.complete_ns - c.start_ns, c.service_ns);
    d.check();
}

#[test]
fn fifo_cleans_in_fill_order_even_when_full() {
    let mut d = tiny("fifo");
    for lpn in 0..12 {
        write(&mut d, lpn);
    }
    d.start_measurement();
    // 0..3 → block 3 (b0 now empty; free 4 5 6 7); 4..7 → block 4 (b1 empty; free 5 6 7);
    // 8 → opens block 5 (free 6 7). Cleaning starts only at the next write.
    for lpn in 0..9 {
        write(&mut d, lpn);
    }
    assert_eq!(d.metrics().erases, 0);
    // 9: free 2 < 3 → clean the FIFO head, b0 (filled first; empty): one erase, no copy.
    write(&mut d, 9);
    let m = d.metrics();
    assert_eq!((m.erases, m.gc_copied_pages), (1, 0));
    // 10 11 fill block 5 (8 9 10 11; b2 empty). 0 opens block 6 (free 7 0 → 2 left).
    // 1: clean the FIFO head b1 (empty).
    for lpn in [10, 11, 0] {
        write(&mut d, lpn);
    }
    assert_eq!(d.metrics().erases, 1);
    write(&mut d, 1);
    let m = d.metrics();
    assert_eq!((m.erases, m.gc_copied_pages), (2, 0));
    assert_eq!(d.ftl().erase_counts()[..3], [1, 1, 0]);
    d.check();
}

#[test]
fn dac_promotes_on_update_and_demotes_on_cleaning() {
    // 10 blocks × 4 pages, 12 logical pages, 2 DAC regions, reserve 4 blocks.
    let mut d = device(&[
        "device.blocks=10",
        "device.pages_per_block=4",
        "device.logical_bytes=49152",
        "ftl.placement=dac",
        "ftl.regions=2",
    ]);
    for lpn in 0..12 {
        write(&mut d, lpn);
        assert_eq!(locate(&d, lpn as u32).unwrap().1, 0, "new data enters the Bottom");
    }
    // Update LPN 0: promoted to region 1 (block 3, the first free block).
    write(&mut d, 0);
    assert_eq!(locate(&d, 0), Some((12, 1)));
    // Updates of hot LPNs 0 and 1 stay in the Top region; fill region 1's blocks.
    // Free after block 3 opened: 4..9 (6). Writes: 1 → b3; 0 1 → b3 full (0 1 0 1).
    for lpn in [1, 0, 1] {
        write(&mut d, lpn);
    }
    // b3 has 2 valid (the last 0 and 1). Keep rewriting 0 and 1 until cleaning starts.
    let mut erased = 0;
    let mut rounds = 0;
    while erased == 0 {
        write(&mut d, rounds % 2);
        erased = d.metrics().erases;
        rounds += 1;
        assert!(rounds < 100);
    }
    // Every victim so far is a Top block of stale copies; any valid page copied out of one
    // is demoted to region 0. The hot pages were just written: they are in the Top region.
    assert_eq!(locate(&d, 0).unwrap().1, 1);
    assert_eq!(locate(&d, 1).unwrap().1, 1);
    d.check();
}

#[test]
fn trim_invalidates_and_reads_of_unmapped_pages_touch_no_flash() {
    let mut d = tiny("greedy");
    write(&mut d, 5);
    d.dispatch(Submission::new(&Request::trim(5 * PAGE, PAGE)))
        .map(Dispatched::completion)
        .unwrap();
    assert!(!d.ftl().is_mapped(Lpn::new(5)));
    // A partial-page trim discards nothing.
    write(&mut d, 6);
    d.dispatch(Submission::new(&Request::trim(6 * PAGE + 512, 1024)))
        .map(Dispatched::completion)
        .unwrap();
    assert!(d.ftl().is_mapped(Lpn::new(6)));
    let before = d.metrics();
    let c = d
        .dispatch(Submission::new(&Request::read(5 * PAGE, PAGE)))
        .map(Dispatched::completion)
        .unwrap();
    let m = d.metrics();
    assert_eq!(c.service_ns, 0);
    assert_eq!(m.unmapped_read_pages - before.unmapped_read_pages, 1);
    assert_eq!(m.flash_read_pages, before.flash_read_pages);
    d.check();
}

#[test]
fn partial_page_write_reads_the_old_page_first() {
    let mut d = tiny("greedy");
    // First partial write of a fresh page: nothing to merge.
    d.dispatch(Submission::new(&Request::write(2 * PAGE + 512, 512)))
        .map(Dispatched::completion)
        .unwrap();
    // Second: the page holds data, so one flash read (25 us + 10.24 us) precedes the program.
    let c = d
        .dispatch(Submission::new(&Request::write(2 * PAGE, 1024)))
        .map(Dispatched::completion)
        .unwrap();
    assert_eq!(c.service_ns, 35_240 + 210_240);
    let m = d.metrics();
    assert_eq!((m.rmw_read_pages, m.host_write_pages, m.host_write_bytes), (1, 2, 1536));
}

#[test]
fn open_loop_arrivals_queue_behind_busy_flash() {
    let mut d = tiny("greedy");
    // Two writes arriving at t = 0 and t = 100 ns: the second waits for the first.
    let a = d
        .dispatch(Submission::new(&Request::write(0, PAGE).at(0)))
        .map(Dispatched::completion)
        .unwrap();
    let b = d
        .dispatch(Submission::new(&Request::write(PAGE, PAGE).at(100)))
        .map(Dispatched::completion)
        .unwrap();
    assert_eq!(a.complete_ns, 210_240);
    assert_eq!(b.start_ns, 210_240);
    assert_eq!(b.latency_ns(), 2 * 210_240 - 100);
    let m = d.metrics();
    assert_eq!(m.write_latency_ns.count, 2);
    assert_eq!(m.write_latency_ns.max, 2 * 210_240 - 100);
    // A later request may not arrive earlier than an earlier one.
    let e = d
        .dispatch(Submission::new(&Request::write(0, PAGE).at(50)))
        .map(Dispatched::completion)
        .unwrap_err();
    assert!(e.to_string().contains("earlier"));
}

#[test]
fn requests_past_the_end_are_rejected() {
    let mut d = tiny("greedy");
    let e = d
        .dispatch(Submission::new(&Request::write(11 * PAGE, 2 * PAGE)))
        .map(Dispatched::completion)
        .unwrap_err();
    assert!(matches!(e, nandlab_core::RequestError::OutOfRange { .. }), "{e}");
    let e = d
        .dispatch(Submission::new(&Request::read(u64::MAX - 1, 4)))
        .map(Dispatched::completion)
        .unwrap_err();
    assert!(e.to_string().contains("capacity"));
    let flush =
        Request { kind: RequestKind::Flush, offset_bytes: 0, length_bytes: 0, arrival_ns: None };
    d.dispatch(Submission::new(&flush)).map(Dispatched::completion).unwrap();
    assert_eq!(d.metrics().host_flush_requests, 1);
}

/// Recovery (docs/ALGORITHMS.md §2.5): run a random workload, throw the RAM tables away, rebuild
/// them from the flash's OOB, and compare with the live tables page by page.
#[test]
fn tables_rebuilt_from_flash_match_the_live_ones() {
    use nandlab_core::media::CountingMedia;
    use nandlab_core::parts::{page_ftl, recover_page_ftl, Ftl};

    let r = Config::from_overrides(&[
        "device.blocks=40",
        "device.pages_per_block=8",
        "device.utilization=0.6",
        "ftl.placement=dac",
        "ftl.regions=3",
        "ftl.cleaning=cost-benefit",
    ])
    .unwrap()
    .resolve()
    .unwrap();
    let mut ftl = page_ftl(&r, Box::new(CountingMedia::new(r.geometry)), None).unwrap();
    let lp = r.geometry.logical_pages as u32;
    let mut x: u32 = 12345;
    for i in 0..5000u64 {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
        // Skewed: 80 % of writes to the first 20 % of pages.
        let lpn = if x % 10 < 8 { (x >> 8) % (lp / 5) } else { (x >> 8) % lp };
        ftl.write_page(Lpn::new(lpn), i * 1000, None);
    }
    ftl.check();
    let live: Vec<_> = (0..lp).map(|l| ftl.locate(Lpn::new(l))).collect();
    let erases: Vec<u32> = ftl.erase_counts().to_vec();
    let free = ftl.free_blocks();
    let mut recovered = recover_page_ftl(&r, ftl.into_media(), 5_000_000).unwrap().0;
    recovered.check();
    let rebuilt: Vec<_> = (0..lp).map(|l| recovered.locate(Lpn::new(l))).collect();
    assert_eq!(rebuilt, live);
    assert_eq!(recovered.erase_counts(), &erases[..]);
    assert_eq!(recovered.free_blocks(), free);
    // The rebuilt FTL keeps working.
    for i in 0..3000u32 {
        recovered.write_page(Lpn::new((i * 7) % lp), 5_000_000 + u64::from(i), None);
    }
    recovered.check();
}

/// SepBIT through the page FTL's write clock (docs/ALGORITHMS.md §11.1): the FTL counts host
/// writes, keeps each page's last one and the mapped pages, and the placement splits host writes
/// by min(ℓ, window) (ℓ still unknown: no class-0 block collected). Class 1 is region 4, class 0
/// region 5. Window after each write: 0, 1, 2, 3, 4, then held at 4 (the mapped pages).
#[test]
fn sepbit_splits_host_writes_by_the_write_clock() {
    let mut d = device(&[
        "device.blocks=20",
        "device.pages_per_block=4",
        "device.logical_bytes=98304",
        "ftl.placement=sepbit",
    ]);
    // Writes 1-4: LPNs 0-3, new → class 1.
    for lpn in 0..4 {
        write(&mut d, lpn);
    }
    write(&mut d, 3); // 5: last written at 4, 1 ago < min(∞, 3) → class 0
    write(&mut d, 0); // 6: 5 ago ≥ 4 → class 1
    write(&mut d, 2); // 7: 4 ago ≥ 4 → class 1
    write(&mut d, 5); // 8: new → class 1
    write(&mut d, 5); // 9: 1 ago → class 0
    let regions: Vec<u8> = [0, 1, 2, 3, 5].iter().map(|&l| locate(&d, l).unwrap().1).collect();
    assert_eq!(regions, vec![4, 4, 4, 5, 5]);
    assert_eq!(d.metrics().erases, 0);
}
