//! Goal: each policy picks exactly the victims its paper prescribes, on cases small enough to
//! follow by hand; the mechanism writes back exactly the dirty pages (and BPLRU's padding).
//! Method: a page-FTL device of 4-page blocks on fresh flash, so a page is mapped exactly when
//! the buffer has written it back; after each step compare which pages are buffered, dirty,
//! and on flash with the comment's derivation.

use super::fab::Fab;
use super::list::DenseMap;
use super::{BufferPolicy, Victim};
use crate::flash::Lpn;
use crate::rng::Prng;
use crate::{Config, Device, Dispatched, Request, Submission};

const PAGE: u64 = 4096;

fn device(kind: &str, pages: u64, extra: &[&str]) -> Device {
    let mut o = vec![
        "device.blocks=32".to_string(),
        "device.pages_per_block=4".into(),
        "device.logical_bytes=262144".into(), // 64 pages = 16 logical blocks
        format!("buffer.kind={kind}"),
        format!("buffer.size_bytes={}", pages * PAGE),
    ];
    o.extend(extra.iter().map(ToString::to_string));
    let r = Config::from_overrides(&o).unwrap().resolve().unwrap();
    Device::new(&r, None).unwrap()
}

fn write(d: &mut Device, lpn: u64) {
    d.dispatch(Submission::new(&Request::write(lpn * PAGE, PAGE)))
        .map(Dispatched::completion)
        .unwrap();
}

fn read(d: &mut Device, lpn: u64) {
    d.dispatch(Submission::new(&Request::read(lpn * PAGE, PAGE)))
        .map(Dispatched::completion)
        .unwrap();
}

fn flush(d: &mut Device) {
    d.dispatch(Submission::new(&Request::flush())).map(Dispatched::completion).unwrap();
}

/// Buffered pages among `lpns`.
fn buffered(d: &Device, lpns: std::ops::Range<u32>) -> Vec<u32> {
    lpns.filter(|&l| d.buffer().unwrap().state(Lpn::new(l)).is_some()).collect()
}

/// Pages among `lpns` that reached flash.
fn on_flash(d: &Device, lpns: std::ops::Range<u32>) -> Vec<u32> {
    lpns.filter(|&l| d.ftl().is_mapped(Lpn::new(l))).collect()
}

#[test]
fn lru_evicts_the_least_recently_used_page() {
    let mut d = device("lru", 3, &[]);
    for l in [0, 1, 2] {
        write(&mut d, l);
    }
    read(&mut d, 0); // hit: 0 becomes the most recent; order (MRU first) 0 2 1
    write(&mut d, 3); // full: victim 1, dirty → written back
    assert_eq!(buffered(&d, 0..8), [0, 2, 3]);
    assert_eq!(on_flash(&d, 0..8), [1]);
    write(&mut d, 2); // hit: order 2 3 0
    write(&mut d, 4); // victim 0
    assert_eq!(buffered(&d, 0..8), [2, 3, 4]);
    assert_eq!(on_flash(&d, 0..8), [0, 1]);
    let c = d.buffer().unwrap().counters();
    assert_eq!((c.write_hits, c.write_misses, c.read_hits, c.read_misses), (1, 5, 1, 0));
    assert_eq!((c.victims, c.evicted_pages, c.written_back_pages), (2, 2, 2));
    assert_eq!(c.block_nodes_max, 0);
}

#[test]
fn fab_evicts_the_block_with_most_pages_ties_by_recency() {
    // Blocks of 4 pages: block b holds LPNs 4b .. 4b+3. Buffer of 4 pages.
    let mut d = device("fab", 4, &[]);
    for l in [0, 4, 5, 8] {
        write(&mut d, l); // block 0: 1 page, block 1: 2 pages, block 2: 1 page
    }
    write(&mut d, 1); // full: block 1 has the most pages → 4 and 5 leave together
    assert_eq!(buffered(&d, 0..16), [0, 1, 8]);
    assert_eq!(on_flash(&d, 0..16), [4, 5]);
    write(&mut d, 9); // room: block 0 {0 1}, block 2 {8 9}
    read(&mut d, 0); // hit: block 0 becomes the most recent
    write(&mut d, 12); // tie at 2 pages: block 2 is the least recent → 8 and 9 leave
    assert_eq!(buffered(&d, 0..16), [0, 1, 12]);
    assert_eq!(on_flash(&d, 0..16), [4, 5, 8, 9]);
    write(&mut d, 13);
    write(&mut d, 14); // full: block 0 {0 1} (older), block 3 {12 13}: tie → block 0
    assert_eq!(buffered(&d, 0..16), [12, 13, 14]);
    let c = d.buffer().unwrap().counters();
    assert_eq!((c.victims, c.evicted_pages, c.written_back_pages), (3, 6, 6));
    assert_eq!(c.block_nodes_max, 3);
    assert_eq!(c.metadata_bytes_max, 3 * 16);
}

#[test]
fn fab_takes_a_full_block_before_an_older_fuller_looking_mix() {
    // Buffer of 6 pages: block 1 complete (4 pages) beats block 0 (2 pages, older).
    let mut d = device("fab", 6, &[]);
    for l in [0, 1, 4, 5, 6, 7] {
        write(&mut d, l);
    }
    write(&mut d, 8);
    assert_eq!(buffered(&d, 0..12), [0, 1, 8]);
    assert_eq!(on_flash(&d, 0..12), [4, 5, 6, 7]);
}

#[test]
fn fab_clean_pages_leave_without_a_write() {
    // Pages read from flash are clean: evicting them writes nothing.
    let mut d = device("fab", 4, &[]);
    for l in [0, 1, 2, 3] {
        write(&mut d, l);
    }
    flush(&mut d); // 0..3 written back, still buffered, clean
    assert_eq!(on_flash(&d, 0..8), [0, 1, 2, 3]);
    assert_eq!(d.buffer().unwrap().state(Lpn::new(2)), Some(false));
    let programs = d.ftl().flash().counters.programs;
    write(&mut d, 4); // victim: block 0 (4 clean pages) → no program
    assert_eq!(d.ftl().flash().counters.programs, programs);
    let c = d.buffer().unwrap().counters();
    assert_eq!((c.flush_written_pages, c.written_back_pages, c.evicted_pages), (4, 4, 4));
}

#[test]
fn bplru_evicts_the_least_recently_written_block_and_pads_it() {
    let mut d = device("bplru", 3, &[]);
    write(&mut d, 1);
    write(&mut d, 2); // block 0 {1 2}
    write(&mut d, 4); // block 1 {4}; order (MRU first): 1 0
    write(&mut d, 8); // full: victim block 0; 0 and 3 were never written → nothing to pad
    assert_eq!(on_flash(&d, 0..16), [1, 2]);
    write(&mut d, 0); // room: {4 8 0}; order (MRU first) 0 2 1
    read(&mut d, 8); // a read hit does not reorder (BPLRU orders by writes)
    write(&mut d, 12); // victim block 1 → 4 written; order 3 0 2
    assert_eq!(on_flash(&d, 0..16), [1, 2, 4]);
    write(&mut d, 13); // victim block 2 → 8 (had the read reordered, block 0 would go)
    assert_eq!(on_flash(&d, 0..16), [1, 2, 4, 8]);
    let programs = d.ftl().flash().counters.programs[0];
    write(&mut d, 14); // victim block 0 {0}: padded with 1 and 2 from flash (3 never written)
    assert_eq!(d.ftl().flash().counters.programs[0] - programs, 3);
    assert_eq!(on_flash(&d, 0..16), [0, 1, 2, 4, 8]);
    let c = d.buffer().unwrap().counters();
    assert_eq!((c.padding_reads, c.padding_writes), (2, 2));
    assert_eq!(c.written_back_pages, 5);
}

#[test]
fn bplru_sends_a_sequentially_filled_block_to_the_lru_end() {
    let mut d = device("bplru", 6, &[]);
    write(&mut d, 16); // block 4
    for l in [4, 5, 6, 7] {
        write(&mut d, l); // block 1 filled in order: compensation moves it to the LRU end
    }
    write(&mut d, 20); // block 5; buffer full (6 pages); order: 5 4 1
    write(&mut d, 24); // victim block 1 although block 4 was written earlier
    assert_eq!(on_flash(&d, 0..32), [4, 5, 6, 7]);
    assert_eq!(buffered(&d, 0..32), [16, 20, 24]);
}

#[test]
fn bplru_does_not_cache_reads() {
    let mut d = device("bplru", 2, &[]);
    write(&mut d, 0);
    flush(&mut d);
    write(&mut d, 4);
    write(&mut d, 8); // evicts block 0 (clean: no padding, no write)
    read(&mut d, 0); // miss: served by flash, not brought in
    assert_eq!(buffered(&d, 0..12), [4, 8]);
    let c = d.buffer().unwrap().counters();
    assert_eq!((c.read_hits, c.read_misses, c.padding_reads), (0, 1, 0));
}

#[test]
fn cflru_evicts_clean_pages_inside_the_window_first() {
    // 4 pages, window 0.5 → the 2 least recent pages form the clean-first region.
    let mut d = device("cflru", 4, &[]);
    write(&mut d, 10);
    write(&mut d, 11);
    flush(&mut d); // 10, 11 on flash and clean; order (MRU first) 11 10
    write(&mut d, 0);
    write(&mut d, 1); // order 1 0 11 10
    let programs = d.ftl().flash().counters.programs[0];
    write(&mut d, 2); // window {11 10}: LRU clean is 10 → dropped, nothing written
    assert_eq!(buffered(&d, 0..12), [0, 1, 2, 11]);
    write(&mut d, 3); // order 2 1 0 11: window {0 11}: 11 is clean → dropped
    assert_eq!(buffered(&d, 0..12), [0, 1, 2, 3]);
    assert_eq!(d.ftl().flash().counters.programs[0], programs);
    write(&mut d, 4); // window {1 0}, all dirty → LRU page 0, written back
    assert_eq!(on_flash(&d, 0..12), [0, 10, 11]);
    read(&mut d, 11); // miss, brought in clean: window {2 1} dirty → 1 written back
    assert_eq!(on_flash(&d, 0..12), [0, 1, 10, 11]);
    // Order 11 4 3 2: the clean page 11 is outside the window {3 2} → 2 goes.
    write(&mut d, 5);
    assert_eq!(buffered(&d, 0..12), [3, 4, 5, 11]);
    assert_eq!(on_flash(&d, 0..12), [0, 1, 2, 10, 11]);
}

#[test]
fn trim_drops_a_buffered_page_and_flush_writes_dirty_pages_in_order() {
    let mut d = device("fab", 8, &[]);
    for l in [7, 3, 5, 1] {
        write(&mut d, l);
    }
    d.dispatch(Submission::new(&Request::trim(5 * PAGE, PAGE)))
        .map(Dispatched::completion)
        .unwrap();
    assert_eq!(buffered(&d, 0..8), [1, 3, 7]);
    flush(&mut d);
    // Page FTL on fresh flash: the write-back order is the physical order.
    let order: Vec<_> = [1, 3, 7].iter().map(|&l| d.ftl().locate(Lpn::new(l)).unwrap().0).collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
    assert_eq!(on_flash(&d, 0..8), [1, 3, 7]);
    d.check();
}

#[test]
fn a_run_ends_with_the_buffer_written_back() {
    let r = Config::from_overrides(&[
        "device.blocks=64",
        "device.pages_per_block=8",
        "workload.kind=hotcold",
        "workload.passes=2",
        "buffer.kind=fab",
        "buffer.size_bytes=65536",
    ])
    .unwrap()
    .resolve()
    .unwrap();
    let mut d = Device::new(&r, None).unwrap();
    let items = crate::Workload::new(&r.workload).unwrap().map(Ok::<_, std::convert::Infallible>);
    let opts = crate::sim::RunOptions { check_every_requests: 97, ..Default::default() };
    let m = crate::sim::run(&mut d, items, opts, &mut |_| {}).unwrap();
    let b = m.buffer;
    assert!(b.final_written_pages > 0);
    assert_eq!(m.buffer_pages, 16);
    assert_eq!(m.buffer_kind, "fab");
    // Every host page write is absorbed by a hit or becomes a dirty page that is written back
    // exactly once (by eviction or at the end): nothing is left dirty.
    assert!((0..r.geometry.logical_pages)
        .all(|l| d.buffer().unwrap().state(Lpn::from_u64(l)) != Some(true)));
    assert_eq!(b.write_hits + b.write_misses, m.host_write_pages);
    // Writes reaching the FTL are exactly the written-back pages.
    let host_programs = m.flash_program_pages - m.gc_copied_pages;
    assert_eq!(host_programs, b.written_back_pages);
    assert!(m.exec_time_ns.buffer == m.host_write_pages * r.timing.ram_page_ns);
}

/// FAB's bucketed O(1) choice equals Fig. 5's scan from the tail, on random histories.
#[test]
fn fab_victim_matches_the_papers_scan() {
    let ppb = 4;
    let cap = 24;
    let mut fab = Fab::<DenseMap>::new(cap, ppb, 64 / u64::from(ppb));
    let mut rng = Prng::new(3);
    let mut slot_of = std::collections::BTreeMap::<Lpn, u32>::new();
    let mut free: Vec<u32> = (0..cap).collect();
    for _ in 0..50_000 {
        let lpn = Lpn::from_u64(rng.below(64));
        match (slot_of.get(&lpn).copied(), rng.below(10)) {
            (Some(s), 0) => {
                fab.removed(s, lpn);
                slot_of.remove(&lpn);
                free.push(s);
            }
            (Some(s), k) => fab.hit(s, lpn, k % 2 == 0),
            (None, _) => {
                if free.is_empty() {
                    let expected = fab.victim_by_scan().unwrap();
                    let Victim::Block { lbn, pages } = fab.victim() else { panic!("page victim") };
                    assert_eq!(lbn, expected);
                    let gone: Vec<Lpn> =
                        slot_of.keys().copied().filter(|l| l.get() / ppb == lbn).collect();
                    assert_eq!(pages as usize, gone.len(), "the victim's page count");
                    for l in gone {
                        free.push(slot_of.remove(&l).unwrap());
                    }
                }
                let s = free.pop().unwrap();
                fab.inserted(s, lpn, true);
                slot_of.insert(lpn, s);
            }
        }
    }
}

#[test]
fn bad_buffer_configs_name_the_key() {
    for (overrides, key) in [
        (&["buffer.kind=arc"][..], "buffer.kind"),
        (&["buffer.kind=lru", "buffer.size_bytes=100"][..], "buffer.size_bytes"),
        (&["buffer.kind=lru", "buffer.cflru_window=0.5"][..], "buffer.cflru_window"),
        (&["buffer.kind=cflru", "buffer.cflru_window=0"][..], "buffer.cflru_window"),
    ] {
        let e = Config::from_overrides(overrides).unwrap().resolve().unwrap_err();
        assert_eq!(e.key, key, "{overrides:?}: {e}");
    }
}

/// A sweep over `buffer.kind` (none, lru, fab) shares one `buffer.size_bytes`: `none` takes the
/// size and drops it (its resolved config records none), and builds no buffer.
#[test]
fn no_buffer_takes_a_size_and_drops_it() {
    let o = ["buffer.size_bytes=1048576", "device.blocks=64", "device.pages_per_block=16"];
    let r = Config::from_overrides(&o).unwrap().resolve().unwrap();
    assert_eq!(r.config.buffer.size_bytes, None);
    assert!(r.buffer.is_none());
    // The kinds' own keys are still refused without their kind.
    let o = ["buffer.cflru_window=0.5"];
    let e = Config::from_overrides(&o).unwrap().resolve().unwrap_err();
    assert_eq!(e.key, "buffer.cflru_window");
}
