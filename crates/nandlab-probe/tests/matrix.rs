//! Goal: the probes hold on devices nobody tuned them for. Method: a fixed subset of the
//! seeded random device matrix (`nandlab_probe::matrix`; the whole of it, with every miss and
//! its confidence, is `experiments/geometry/matrix.sh` → `matrix.md`): the effective page of the
//! first 12 devices without a write buffer must be exact; over the first 20 devices each probe
//! must be exact at least as often as it is today — a floor that only rises — and a wrong
//! answer said with confidence ≥ 0.9 must stay as rare as it is today.

use nandlab_probe::matrix::{check, draw, MatrixDevice};
use nandlab_probe::probe::{probe, ProbeOptions, ProbeReport};
use nandlab_probe::target::SimTarget;

/// Probes matrix device `d` as the matrix does, asserts its parallel units exact, and returns
/// the report.
fn parallel_exact(d: &MatrixDevice) -> ProbeReport {
    let (outcomes, report) = check(d).unwrap();
    let o = outcomes.iter().find(|o| o.probe == "parallel").unwrap();
    let (seed, i) = (d.seed, d.index);
    assert!(o.exact(), "seed {seed} device {i} ({}): {}", d.summary, report.parallel.how);
    report
}

#[test]
fn effective_page_is_exact_on_unbuffered_devices_of_the_random_matrix() {
    let devices: Vec<_> = (0..)
        .map(|i| draw(1, i))
        .filter(|d| !d.overrides.iter().any(|o| o.starts_with("buffer.kind=")))
        .take(12)
        .collect();
    // The subset is not all powers of two (the probe searched only those once).
    assert!(devices.iter().any(|d| !d.effective_page_bytes.is_power_of_two()));
    let only_page =
        ProbeOptions { block: false, zone: false, parallel: false, ..ProbeOptions::default() };
    for d in &devices {
        let mut t = SimTarget::new(None, &d.overrides, true).unwrap();
        let r = probe(&mut t, &only_page, &mut |_| {}).unwrap();
        assert_eq!(
            r.effective_page_bytes,
            Some(d.effective_page_bytes),
            "device {} ({}): {}",
            d.index,
            d.summary,
            r.page.how
        );
        assert!(r.page.confidence >= 0.5, "device {}: confidence {}", d.index, r.page.confidence);
    }
}

#[test]
fn each_probe_is_exact_on_most_of_the_first_twenty_devices_and_rarely_sure_when_wrong() {
    // (probe, floor): exact on at least this many of devices 0–19 (today page 20, block 20,
    // zone 20, parallel units 16 of 20; the floors leave at least one of margin).
    let floors = [("page", 19), ("block", 19), ("zone", 19), ("parallel", 15)];
    let mut exact = [0; 4];
    let mut misses = Vec::new();
    // Wrong answers said with confidence >= 0.9: today none (SAST's block, read 2x on devices
    // 15 and 19, is halved or said with less confidence); at most one.
    let mut sure_and_wrong = Vec::new();
    for i in 0..20 {
        let d = draw(1, i);
        let (outcomes, _) = check(&d).unwrap_or_else(|e| panic!("device {i}: {e}"));
        for o in outcomes {
            let k = floors.iter().position(|f| f.0 == o.probe).expect("a probe with a floor");
            if o.exact() {
                exact[k] += 1;
                continue;
            }
            let line = format!(
                "device {i} {}: want {:?} got {:?} (confidence {:.2})",
                o.probe, o.want, o.got, o.confidence
            );
            if o.got.is_some() && o.confidence >= 0.9 {
                sure_and_wrong.push(line.clone());
            }
            misses.push(line);
        }
    }
    for (k, (probe, floor)) in floors.iter().enumerate() {
        assert!(
            exact[k] >= *floor,
            "{probe}: exact on {} of 20 (floor {floor}); misses: {misses:#?}",
            exact[k]
        );
    }
    assert!(sure_and_wrong.len() <= 1, "wrong with confidence >= 0.9: {sure_and_wrong:#?}");
}

/// SAST merges a group's log blocks at once: sequential writes spike once per two blocks, all
/// spikes alike, and the sequential passes read the block 2x; the halving test finds the block
/// on the matrix's SAST devices where they did (page and block probes only: the halving test
/// runs right after the passes). On BAST and FAST devices, one spike per block alike, it leaves
/// the block whole.
#[test]
fn the_block_probe_halves_sasts_double_block_and_no_other() {
    let only_block = ProbeOptions { zone: false, parallel: false, ..ProbeOptions::default() };
    // SAST: 15, 19, 31, 38, 69, 78, 86; BAST: 9, 27, 74; FAST: 48, 50.
    for i in [15, 19, 31, 38, 69, 78, 86, 9, 27, 74, 48, 50] {
        let d = draw(1, i);
        let mut t = SimTarget::new(None, &d.overrides, true).unwrap();
        let r = probe(&mut t, &only_block, &mut |_| {}).unwrap();
        assert_eq!(
            r.block_bytes,
            Some(d.block_bytes),
            "device {i} ({}): {}",
            d.summary,
            r.block.how
        );
        assert!(r.block.confidence >= 0.9, "device {i}: {}", r.block.confidence);
    }
}

/// The parallel units (the dies) on the first 10 devices of the matrix with the page FTL, no
/// write buffer and no mapping zone (1 to 48 dies, 1 to 4 planes), with a confidence of at least
/// 0.5; and on one of them the answer does not depend on what the other probes did before.
#[test]
fn parallel_units_are_exact_on_page_mapped_unbuffered_devices_of_the_random_matrix() {
    let devices: Vec<_> = (0..)
        .map(|i| draw(1, i))
        .filter(|d| {
            d.overrides.iter().any(|o| o == "ftl.kind=page")
                && !d.overrides.iter().any(|o| o.starts_with("buffer.kind="))
                && d.zone_bytes.is_none()
        })
        .take(10)
        .collect();
    assert!(devices.iter().any(|d| d.dies >= 32));
    let only_parallel =
        ProbeOptions { page: false, block: false, zone: false, ..ProbeOptions::default() };
    for d in &devices {
        let mut t = SimTarget::new(None, &d.overrides, true).unwrap();
        let r = probe(&mut t, &only_parallel, &mut |_| {}).unwrap();
        assert_eq!(
            r.parallel_units,
            Some(d.dies),
            "device {} ({}): {}",
            d.index,
            d.summary,
            r.parallel.how
        );
        assert!(r.parallel.confidence >= 0.5, "device {}: {}", d.index, r.parallel.confidence);
    }
    // After the page, block and zone probes (the device written over, its cleaner at work).
    let d = &devices[1];
    let mut t = SimTarget::new(None, &d.overrides, true).unwrap();
    let r = probe(&mut t, &ProbeOptions::default(), &mut |_| {}).unwrap();
    assert_eq!(
        r.parallel_units,
        Some(d.dies),
        "device {} after every probe: {}",
        d.index,
        r.parallel.how
    );
}

/// Behind a write buffer (LRU, which also keeps what it reads, and BPLRU, which keeps only
/// what is written): the parallel units on the first 6 page-FTL devices of the matrix with one
/// and no mapping zone, all probes run. A fresh page still in the buffer would answer from
/// RAM and seem a unit of its own, and a page a read cache still holds would make every pair
/// with it look like two units: each once counted hundreds of units here.
#[test]
fn parallel_units_are_exact_behind_lru_and_bplru_buffers() {
    let devices: Vec<_> = (0..)
        .map(|i| draw(1, i))
        .filter(|d| {
            d.overrides.iter().any(|o| o == "ftl.kind=page")
                && d.overrides.iter().any(|o| o == "buffer.kind=lru" || o == "buffer.kind=bplru")
                && d.zone_bytes.is_none()
        })
        .take(6)
        .collect();
    for kind in ["buffer.kind=lru", "buffer.kind=bplru"] {
        assert!(devices.iter().any(|d| d.overrides.iter().any(|o| o == kind)), "{kind}");
    }
    for d in &devices {
        let report = parallel_exact(d);
        assert!(
            report.parallel.confidence >= 0.5,
            "device {}: {}",
            d.index,
            report.parallel.confidence
        );
    }
}

/// Behind a FAB buffer, which keeps a page it read as long as fuller blocks are there to
/// evict, a spacer's filler reads never push a page out: filler reads within the area fill
/// the page's own block, and the pages are classified together so those reads are mostly
/// other pages' pairs. Devices 2, 7 and 44 of the matrix (14, 10 and 6 dies; no answer
/// before) are exact with a confidence of at least 0.5, and device 60 (20 dies; 178 units
/// before: the spacer's filler reads let the one page timed go early, not the others); device
/// 90 (20 dies) stays exact.
#[test]
fn parallel_units_behind_a_fab_buffer_come_from_pairs_with_filler_reads_in_the_area() {
    for i in [2, 7, 44, 60, 90] {
        let d = draw(1, i);
        assert!(d.overrides.iter().any(|o| o == "buffer.kind=fab"), "{}", d.summary);
        let report = parallel_exact(&d);
        if i != 90 {
            assert!(
                report.parallel.confidence >= 0.5,
                "device {i}: {}",
                report.parallel.confidence
            );
            assert!(
                report.parallel.how.contains("a read cache keeps pages"),
                "{}",
                report.parallel.how
            );
        }
    }
}

/// The area is one mapping zone and a write buffer holds the pages just written (every one
/// of them when the zone is smaller than the buffer: every read answered from RAM and each
/// page seemed a unit of its own, 510 and 48 units). Writes after the zone push them out,
/// and the pair classes count the dies: devices 49 and 67 of the matrix (BPLRU of 8 and
/// 2 MiB, zones of 3.98 and 3 MiB; 7 and 10 dies).
#[test]
fn parallel_units_are_exact_when_a_buffer_holds_the_zone_just_written() {
    for i in [49, 67] {
        let d = draw(1, i);
        assert!(d.overrides.iter().any(|o| o == "buffer.kind=bplru"), "{}", d.summary);
        assert!(d.zone_bytes.is_some(), "{}", d.summary);
        parallel_exact(&d);
    }
}

/// Behind a read cache whose window the spacer's filler reads show, pair classes that settled
/// stand: the stride test, which once went first, read 16 units on device 83 of the matrix
/// (LRU of 8 MiB, SAST, 6 dies).
#[test]
fn settled_pair_classes_stand_behind_a_read_cache() {
    let d = draw(1, 83);
    assert!(d.overrides.iter().any(|o| o == "buffer.kind=lru"), "{}", d.summary);
    let report = parallel_exact(&d);
    assert!(report.parallel.how.contains("classes of colliding pages"), "{}", report.parallel.how);
}

/// Behind a read cache, which keeps whole logical pages, the pairs read one page per effective
/// page even where the area holds few of them: 4 KiB reads of pages 128 KiB large found a
/// second unit on one-die devices 5 and 56 of the matrix (FAB buffers), a read of another
/// 4 KiB of a page already read being a cache hit.
#[test]
fn behind_a_read_cache_pairs_read_whole_effective_pages() {
    for i in [5, 56] {
        let d = draw(1, i);
        assert_eq!(d.dies, 1, "{}", d.summary);
        parallel_exact(&d);
    }
}

/// A write buffer that holds only the last pages the probe wrote (BPLRU of 2 MiB after a
/// 64 MiB area) may answer none of the random single reads from RAM, yet answer the pairs that
/// reach those pages: device 95 of the matrix read 13 units for 8 with confidence 0.9. The
/// last pages written are read first, and one from RAM has a spacer written.
#[test]
fn a_write_buffer_holding_the_areas_last_pages_is_found() {
    let d = draw(1, 95);
    assert!(d.overrides.iter().any(|o| o == "buffer.kind=bplru"), "{}", d.summary);
    parallel_exact(&d);
}

/// A read cache larger than the area's mapping zone keeps every page of the zone once read,
/// whatever is read within it: filler reads after the zone push the pages out, and a read of
/// a fresh page of the area then loads its table again before the pair. Device 5 of the seed-2
/// matrix (LRU of 7 MiB, zone of 1.99 MiB, 4 dies) had no answer; device 36 of the seed-5
/// matrix (LRU of 8 MiB, zone of 2.95 MiB, 8 dies) is found so too. (Device 86 of the seed-3
/// matrix, once found so, is not since the block probe's flushed passes behind a buffer left
/// its device otherwise: few pages of a zone, a fragile count.)
#[test]
fn behind_a_cache_larger_than_the_zone_the_filler_reads_go_after_it() {
    for (seed, i) in [(2, 5), (5, 36)] {
        let d = draw(seed, i);
        assert!(d.overrides.iter().any(|o| o == "buffer.kind=lru"), "{}", d.summary);
        let report = parallel_exact(&d);
        assert!(report.parallel.how.contains("after the zone"), "{}", report.parallel.how);
    }
}

/// Behind a cache that absorbs writes the paper's read variant decides the page, but it tries
/// only powers of two and what the cache keeps fools it: where the writes' search finds a
/// different step, that step is the page, said with little confidence (devices 5, 29 and 51
/// of the matrix: the reads found 6, 21 and 8 KiB for pages of 128, 4 and 4 KiB).
#[test]
fn behind_an_absorbing_cache_the_writes_step_overrules_the_read_variant() {
    for i in [5, 29, 51] {
        let d = draw(1, i);
        let (outcomes, report) = check(&d).unwrap();
        let o = outcomes.iter().find(|o| o.probe == "page").unwrap();
        assert!(o.exact(), "device {i} ({}): {}", d.summary, report.page.how);
        assert!(o.confidence < 0.9, "device {i}: {}", o.confidence);
        assert!(report.page.how.contains("over the read variant's"), "{}", report.page.how);
    }
}

/// Behind a buffer whose passes spike several times per period (its destages among the
/// erases), passes that flush every write show the FTL's own rhythm: the block of BPLRU and
/// FAB devices (page FTL: 29, 51, 67; BAST: 16). Where that block is a whole multiple of the
/// buffered passes' period, the period is the block (SAST behind BPLRU, 62 and 75: its merges
/// span a group of two blocks, the buffer destages one at a time), said with at most 0.5, as
/// every answer of passes that disagree.
#[test]
fn behind_a_buffer_the_flushed_passes_tell_the_block() {
    for i in [16, 29, 51, 67, 62, 75] {
        let d = draw(1, i);
        let (_, r) = check(&d).unwrap_or_else(|e| panic!("device {i}: {e}"));
        let how = &r.block.how;
        assert_eq!(r.block_bytes, Some(d.block_bytes), "device {i} ({}): {how}", d.summary);
        assert!(how.contains("every write flushed"), "device {i}: {how}");
        if [62, 75].contains(&i) {
            assert!(how.contains("of the buffered passes' periods"), "device {i}: {how}");
            // Unless where pages stop sharing a die says the same block.
            let confirmed = how.contains("the same block");
            assert!(confirmed || r.block.confidence <= 0.5, "device {i}: {how}");
        }
    }
}

/// A write size a sector short of the page may step on all pairs but one by chance: device 69
/// of the seed-2 matrix (64 KiB × 3 channels) stepped so at 191 KiB. Found so, the page is not
/// said with confidence 0.9 or more.
#[test]
fn a_page_stepped_on_all_pairs_but_one_is_not_sure() {
    let d = draw(2, 69);
    let only_page =
        ProbeOptions { block: false, zone: false, parallel: false, ..ProbeOptions::default() };
    let mut t = SimTarget::new(None, &d.overrides, true).unwrap();
    let r = probe(&mut t, &only_page, &mut |_| {}).unwrap();
    assert!(r.page.how.contains("7 of 8 shifted"), "{}: {}", d.summary, r.page.how);
    assert!(r.page.confidence <= 0.85, "{}: {}", r.page.confidence, r.page.how);
}

/// SAST out of step with its groups reads twice its block in the passes, and the halving test
/// then finds the first halves as cheap as whole blocks but the straddling ones little dearer:
/// unsure, so not said with confidence (seed-3 devices 8 and 75 and seed-5 device 90 said
/// their doubled blocks with 1.0).
#[test]
fn a_halving_test_that_cannot_tell_leaves_the_block_unsure() {
    for (seed, i) in [(3, 8), (3, 75), (5, 90)] {
        let d = draw(seed, i);
        let (_, r) = check(&d).unwrap_or_else(|e| panic!("seed {seed} device {i}: {e}"));
        let how = &r.block.how;
        assert!(how.contains("straddling halves"), "seed {seed} device {i}: {how}");
        let wrong = r.block_bytes != Some(d.block_bytes);
        assert!(!wrong || r.block.confidence <= 0.5, "seed {seed} device {i}: {how}");
    }
}

/// A page whose two halves of a shifted write run on units of their own adds only a read and a
/// transfer to the program: device 59 of the seed-1 matrix (192 KiB pages on 6 lock-stepped
/// channels, 3 gangs) stepped by 2-3 % at its page, under the 10 % a step needs, and the search
/// went on to twice the page, where it said 384 KiB with confidence 1.0. Quiet sizes below let
/// such a weak step count, said with confidence 0.7 at most.
#[test]
fn a_weak_step_below_quiet_sizes_is_the_page() {
    let d = draw(1, 59);
    let only_page =
        ProbeOptions { block: false, zone: false, parallel: false, ..ProbeOptions::default() };
    let mut t = SimTarget::new(None, &d.overrides, true).unwrap();
    let r = probe(&mut t, &only_page, &mut |_| {}).unwrap();
    assert_eq!(r.effective_page_bytes, Some(d.effective_page_bytes), "{}", r.page.how);
    assert!(r.page.how.contains("a weak step"), "{}", r.page.how);
    assert!(r.page.confidence <= 0.7, "{}: {}", r.page.confidence, r.page.how);
}

/// The period of a block's spikes, taken from one spike's distance to the first, is off by
/// their jitter: device 72 of the seed-1 matrix (357-page blocks) read 357.7 pages and said
/// 358. Chains of spikes a period apart give it to a fraction of a write.
#[test]
fn the_block_period_comes_from_chains_of_spikes() {
    let d = draw(1, 72);
    let (_, r) = check(&d).unwrap();
    assert_eq!(r.block_bytes, Some(d.block_bytes), "{}: {}", d.summary, r.block.how);
}

/// Where the dies clean a few writes out of step, no lag holds to a write or two: device 94 of
/// the seed-1 matrix (8 dies) showed no period and was found only by its erase count (with
/// little confidence), devices 85 and 88 (4 and 6 dies) were wrong — 88 counted 16 spikes of
/// the 18 a period has. A period that holds to 2 % of itself, its spikes counted per period
/// cut mid-gap, finds all three, said with 0.8 at most.
#[test]
fn a_period_that_holds_only_loosely_gives_the_block() {
    for i in [94, 85, 88] {
        let d = draw(1, i);
        let (_, r) = check(&d).unwrap();
        assert_eq!(r.block_bytes, Some(d.block_bytes), "{i} {}: {}", d.summary, r.block.how);
        assert!(r.block.confidence <= 0.8, "{i}: {}: {}", r.block.confidence, r.block.how);
    }
}

/// SAST's merges span its groups' log blocks, so the passes' spikes repeat every two blocks and
/// halves of two blocks cost alike: device 97 of the seed-1 matrix (48 dies) said twice its
/// block. After a sequential pass a block-mapped FTL keeps each block on one die: page s read
/// together with page 0 takes two reads up to the block and one from there on.
#[test]
fn where_pages_stop_sharing_a_die_is_the_block_of_a_block_mapped_ftl() {
    let d = draw(1, 97);
    let (_, r) = check(&d).unwrap();
    assert_eq!(r.block_bytes, Some(d.block_bytes), "{}: {}", d.summary, r.block.how);
    assert!(r.block.how.contains("shares its die"), "{}", r.block.how);
}

/// A block-mapped FTL keeps each logical block on one die, and the dies its blocks happen to
/// lie on may be fewer than it has: the block moves rewrite blocks one at a time until the
/// count settles. BAST without a buffer (12 dies, 16 blocks), BAST behind a BPLRU buffer (48
/// dies, 54 blocks: a block is classified once the buffer let it go) and SAST, whose block
/// the passes read doubled, read in halves (18 dies, 20 blocks).
#[test]
fn block_moves_find_the_dies_a_block_mapped_ftl_left_empty() {
    for i in [21, 26, 19] {
        let r = parallel_exact(&draw(1, i));
        assert!(r.parallel.how.contains("blocks rewritten one at a time"), "device {i}");
    }
}

/// A page FTL's small mapping zone holds few pages, and the dies they lie on may be fewer than
/// it has: the pages are moved as blocks are (a page FTL with 36 dies and a zone of 48 pages).
/// A page that is no whole number of 4 KiB is read one read per page (a 4 KiB read at a 4 KiB
/// boundary may span two pages, on two dies): 14 KiB pages over 15 dies once read as 21.
#[test]
fn page_moves_and_whole_page_reads_count_the_dies_of_a_small_zone() {
    let r = parallel_exact(&draw(4, 21));
    assert!(
        r.parallel.how.contains("effective pages rewritten one at a time"),
        "{}",
        r.parallel.how
    );
    parallel_exact(&draw(3, 84));
}

/// More dies than blocks on a block-mapped FTL (FAST, 30 dies, 16 blocks; BAST, 32 dies, 16
/// blocks): every block holds a die of its own, and one block rewritten again and again comes
/// back to one die every 30 (32) rewrites, its blocks allocated over the dies in turn. Behind
/// a BPLRU buffer that holds the block just written, two blocks take turns (FAST, 42 dies, a
/// zone of 11 blocks).
#[test]
fn a_block_rewritten_again_and_again_counts_more_dies_than_blocks() {
    for (seed, i) in [(1, 48), (2, 1), (2, 71)] {
        let r = parallel_exact(&draw(seed, i));
        assert!(r.parallel.how.contains("came back to one die"), "{}", r.parallel.how);
        assert!(r.parallel.confidence <= 0.6, "seed {seed} device {i}");
    }
}

/// Behind a read cache, block moves read no page twice while the cache may hold it (filler
/// reads push each rewritten block out, and each pair reads pages not read since): devices 33
/// (FAST, FAB of 2 MiB, 28 dies, the pairs 13 before) and 54 (BAST, FAB of 4 MiB, 30 dies,
/// 29 before) of the matrix.
#[test]
fn block_moves_behind_a_read_cache_reach_every_die() {
    for i in [33, 54] {
        let d = draw(1, i);
        assert!(d.overrides.iter().any(|o| o == "buffer.kind=fab"), "{}", d.summary);
        let report = parallel_exact(&d);
        assert!(report.parallel.how.contains("rewritten one at a time"), "{}", report.parallel.how);
    }
}

/// A period as long as a pass is the passes' own repeat, and whole pages per spike in it say
/// nothing: device 88 of the seed-4 matrix (SAST, 855-page blocks, 56 dies) repeated every pass
/// of 16 blocks with its 8 merges weighed as 304 erases, 45 pages each, and said so with 1.0.
/// Such a period is said with 0.5 at most, and the die check then finds the block. Device 90
/// (715-page blocks, 3 dies) found 715.01 pages per spike but halved from the lag's 2142 ÷ 3
/// = 714, and said 714 with 0.956: the halving starts from the block found.
#[test]
fn a_period_of_whole_passes_is_not_sure_and_halving_starts_from_the_block_found() {
    for i in [88, 90] {
        let d = draw(4, i);
        let (_, r) = check(&d).unwrap();
        assert_eq!(r.block_bytes, Some(d.block_bytes), "{i} {}: {}", d.summary, r.block.how);
    }
    let (_, r) = check(&draw(4, 88)).unwrap();
    assert!(r.block.how.contains("the passes' own"), "{}", r.block.how);
    assert!(r.block.how.contains("shares its die"), "{}", r.block.how);
}

/// SAST whose mapping zone is its block (device 4 of the seed-1 matrix: one zone's table
/// resident): every pair reaching past page 0's block also loads the other zone's table, about
/// two reads on two dies, so the die check took every pair for one die's. Across zones a pair
/// shares a die from three reads on.
#[test]
fn the_die_check_allows_for_a_table_load_in_pairs_across_zones() {
    let d = draw(1, 4);
    let (_, r) = check(&d).unwrap();
    assert_eq!(r.block_bytes, Some(d.block_bytes), "{}: {}", d.summary, r.block.how);
    assert!(r.block.how.contains("shares its die"), "{}", r.block.how);
}

/// A hybrid FTL whose mapping zone is one block shows one die within the zone, and table
/// loads only the dies holding tables: one block rewritten again and again comes back to the
/// same zones' table loads every N rewrites, N the dies (BAST, 14 dies, table loads 5 before;
/// FAST, 40 dies, 4 before; FAST, 35 dies on the seed-4 matrix, whose earlier probes' log
/// blocks fill some dies until the blocks are rewritten twice). A zone of two blocks may show
/// a log block's die besides theirs: table loads tell the dies apart even so (SAST, 7 dies on
/// the seed-2 matrix, 3 units within the zone).
#[test]
fn a_block_rewritten_again_and_again_counts_the_dies_behind_table_loads() {
    for (seed, i) in [(1, 18), (1, 76), (4, 3)] {
        let r = parallel_exact(&draw(seed, i));
        assert!(r.parallel.how.contains("same zones' table loads"), "{}", r.parallel.how);
        assert!(r.parallel.confidence <= 0.5, "seed {seed} device {i}");
    }
    let r = parallel_exact(&draw(2, 52));
    assert!(r.parallel.how.contains("pairs showed only 3 units"), "{}", r.parallel.how);
}
