//! Goal: a hybrid FTL (BAST, SAST, FAST) rebuilds its tables from what the flash holds
//! after a clean stop or a crash at any flash operation: every acknowledged host write is found
//! (and no older version of it is served), the tables pass `check()`, and the FTL keeps working.
//! Damaged layouts give a repaired FTL or a typed `RecoveryError`, never a panic.
//!
//! Method: the FTL runs over `Tracked` (`common/tracked.rs`), a metadata-only media that logs
//! every program, copy and erase and follows each physical page's *origin* (the seq of the host
//! write whose data it holds: a copy inherits its source's). A crash after operation k is the flash state replayed
//! up to k (an erase may also be cut: its block header counts it but only some pages' OOB are
//! cleared), rebuilt with `CountingMedia::restore` as a served drive's image scan would. After
//! recovery, the newest copy of every LPN must hold the data of its last host write before the
//! crash (origin equality: stronger than comparing seqs). Hand-worked layouts check exact
//! outcomes of the repairs.

mod common;

use std::sync::{Arc, Mutex};

use common::tracked::{Image, Last, Op, SavedCheckpoint, Track, Tracked};
use nandlab_core::media::{BlockId, CountingMedia, Lpn, Oob, Ppn, GARBAGE_LPN};
use nandlab_core::parts::{hybrid_ftl, recover_hybrid_ftl, Ftl, HybridFtl, RecycleKind};
use nandlab_core::FtlRecovery;
use nandlab_core::Prng;
use nandlab_core::Resolved;
use nandlab_core::{Config, RecoveryError};

// ---- configurations and workloads ---------------------------------------------------------

const PPB: u32 = 8;
const LOGICAL_BLOCKS: u32 = 8;
const LOG_BLOCKS: u32 = 3;

/// A small device: 8 logical blocks of 8 pages, 3 log blocks, and blocks = L + logs + 2 (the
/// served-drive minimum).
fn resolve(overrides: &[&str]) -> Resolved {
    resolve_with_spare(2, overrides)
}

/// The same with blocks = L + logs + `spare`.
fn resolve_with_spare(spare: u32, overrides: &[&str]) -> Resolved {
    let blocks = format!("device.blocks={}", LOGICAL_BLOCKS + LOG_BLOCKS + spare);
    let logical = format!("device.logical_bytes={}", LOGICAL_BLOCKS * PPB * 2048);
    let logs = format!("ftl.log_blocks={LOG_BLOCKS}");
    let mut all = vec![
        "device.page_size_bytes=2048",
        "device.pages_per_block=8",
        &blocks,
        &logical,
        &logs,
        "wear.endurance_cycles=0",
    ];
    all.extend_from_slice(overrides);
    Config::from_overrides(&all).unwrap().resolve().unwrap()
}

/// The configurations every random test runs: name and overrides.
const CONFIGS: &[(&str, &[&str])] = &[
    ("bast", &["ftl.kind=bast"]),
    ("bast cost-based", &["ftl.kind=bast", "ftl.recycling=cost-based"]),
    (
        "bast cost-based lazy",
        &["ftl.kind=bast", "ftl.recycling=cost-based", "wear.kind=lazy", "wear.delta=1"],
    ),
    ("sast 2x2", &["ftl.kind=sast", "ftl.group_data_blocks=2", "ftl.group_log_blocks=2"]),
    (
        "sast 2x2 static",
        &[
            "ftl.kind=sast",
            "ftl.group_data_blocks=2",
            "ftl.group_log_blocks=2",
            "wear.kind=static",
            "wear.threshold=2",
        ],
    ),
    ("fast", &["ftl.kind=fast"]),
    ("fast lazy", &["ftl.kind=fast", "wear.kind=lazy", "wear.delta=1"]),
    // Parallel hardware: free lists per plane.
    ("fast 2 planes", &["ftl.kind=fast", "device.planes_per_die=2", "device.blocks=14"]),
];

/// A fresh FTL over a tracking media.
fn fresh(r: &Resolved) -> (HybridFtl, Arc<Mutex<Track>>) {
    let pages = r.geometry.physical_pages() as usize;
    let (media, track) = Tracked::new(CountingMedia::new(r.geometry), vec![0; pages]);
    (hybrid_ftl(r, Box::new(media)).unwrap(), track)
}

/// Skewed random host work: most writes to two hot logical blocks, some whole-block
/// sequential runs (switch merges, FAST's sequential log), a few trims. Updates `last`.
fn host_work(
    ftl: &mut HybridFtl,
    track: &Arc<Mutex<Track>>,
    rng: &mut Prng,
    steps: u32,
    last: &mut [Last],
) {
    let lp = ftl.geometry().logical_pages as u32;
    let write = |ftl: &mut HybridFtl, lpn: u32, last: &mut [Last]| {
        ftl.write_page(Lpn::new(lpn), 0, None);
        let t = track.lock().unwrap();
        let Some(Op::Program { oob, .. }) = t.ops.last() else { panic!("a host write programs") };
        assert_eq!(oob.lpn, Lpn::new(lpn));
        last[lpn as usize] = Last::Written(oob.seq);
    };
    for _ in 0..steps {
        let lpn = if rng.below(10) < 7 {
            rng.below(2 * u64::from(PPB))
        } else {
            rng.below(u64::from(lp))
        } as u32;
        match rng.below(40) {
            0 | 1 => {
                ftl.trim_page(Lpn::new(lpn), 0);
                track.lock().unwrap().ops.push(Op::Trim { lpn: Lpn::new(lpn) });
                last[lpn as usize] = Last::Trimmed;
            }
            2..=4 => {
                let first = lpn - lpn % PPB;
                let n = 1 + rng.below(u64::from(PPB)) as u32;
                for l in first..first + n {
                    write(ftl, l, last);
                }
            }
            _ => write(ftl, lpn, last),
        }
    }
}

/// Every LPN's newest copy holds its last host write's data; never-written LPNs are unmapped.
fn verify(ftl: &HybridFtl, track: &Arc<Mutex<Track>>, last: &[Last], what: &str) {
    let t = track.lock().unwrap();
    for (lpn, &l) in last.iter().enumerate() {
        let at = ftl.locate(Lpn::new(lpn as u32)).map(|(ppn, _)| ppn);
        match l {
            Last::Never => assert_eq!(at, None, "{what}: lpn {lpn} was never written"),
            Last::Written(seq) => {
                let ppn = at.unwrap_or_else(|| panic!("{what}: lpn {lpn} (seq {seq}) lost"));
                assert_eq!(
                    t.origin[ppn.index()],
                    seq,
                    "{what}: lpn {lpn} serves the data of write {} instead of {seq}",
                    t.origin[ppn.index()]
                );
            }
            // A trim leaves no trace on flash: an old copy may come back.
            Last::Trimmed => {}
        }
    }
}

/// What a recovery did, and the FTL it gave (after the extra writes).
struct Outcome {
    ftl: HybridFtl,
    report: FtlRecovery,
    /// Full merges among its repairs (each needed a free block).
    full_repairs: u64,
    /// Its own flash operations (repairs, erases), for crashing in the middle of them.
    ops: Vec<Op>,
}

/// Recovers from `image`, checks it, verifies every LPN, keeps writing and verifies again.
fn recover_and_use(
    r: &Resolved,
    image: &Image,
    last: &[Last],
    seed: u64,
    more_steps: u32,
    what: &str,
) -> Outcome {
    try_recover_and_use(r, image, last, seed, more_steps, what)
        .unwrap_or_else(|e| panic!("{what}: {e}"))
}

fn try_recover_and_use(
    r: &Resolved,
    image: &Image,
    last: &[Last],
    seed: u64,
    more_steps: u32,
    what: &str,
) -> Result<Outcome, RecoveryError> {
    let (media, track) = image.media();
    let (mut ftl, report) = recover_hybrid_ftl(r, media, 0)?;
    let full_repairs = ftl.counters().recycles[RecycleKind::FullMerge as usize].count;
    let ops = track.lock().unwrap().ops.clone();
    ftl.check();
    verify(&ftl, &track, last, what);
    let mut last = last.to_vec();
    let mut rng = Prng::new(seed);
    host_work(&mut ftl, &track, &mut rng, more_steps, &mut last);
    ftl.check();
    verify(&ftl, &track, &last, &format!("{what}, after more writes"));
    Ok(Outcome { ftl, report, full_repairs, ops })
}

// ---- clean restarts -----------------------------------------------------------------------

/// After a run stops cleanly, recovery rebuilds the same tables: every LPN at the same physical
/// page, no repair, erase counts unchanged except blocks holding no newest copy (erased now).
#[test]
fn clean_restart_rebuilds_the_same_tables() {
    for (name, overrides) in CONFIGS {
        let r = resolve(overrides);
        let (mut ftl, track) = fresh(&r);
        let mut last = vec![Last::Never; r.geometry.logical_pages as usize];
        host_work(&mut ftl, &track, &mut Prng::new(1), 3000, &mut last);
        ftl.check();
        let counters = ftl.counters();
        let merges: u64 = counters.recycles.iter().map(|s| s.count).sum();
        assert!(merges > 50, "{name}: {merges} merges");
        if let Some(w) = ftl.wear_leveling() {
            assert!(w.remaps + w.evicted_blocks > 0, "{name}: the leveler did nothing: {w:?}");
        }
        let image = Image::of(&ftl, &track);
        // Blocks holding no newest copy of any LPN: the ones recovery erases.
        let mut newest: Vec<Option<(u64, usize)>> = vec![None; last.len()];
        for (ppn, oob) in image.pages.iter().enumerate() {
            if let Some(o) = oob.filter(|o| o.lpn.index() < last.len()) {
                if newest[o.lpn.index()].is_none_or(|(s, _)| o.seq > s) {
                    newest[o.lpn.index()] = Some((o.seq, ppn));
                }
            }
        }
        let ppb = PPB as usize;
        let holds_newest = |b: usize| newest.iter().flatten().any(|&(_, p)| p / ppb == b);
        let stale: Vec<usize> = (0..r.geometry.blocks as usize)
            .filter(|&b| image.pages[b * ppb..(b + 1) * ppb].iter().any(Option::is_some))
            .filter(|&b| !holds_newest(b))
            .collect();

        let Outcome { ftl: recovered, report, .. } = recover_and_use(&r, &image, &last, 2, 0, name);
        assert_eq!(report.repair_merges, 0, "{name}");
        assert_eq!(report.erased_blocks as usize, stale.len(), "{name}");
        for (lpn, &l) in last.iter().enumerate() {
            let before = ftl.locate(Lpn::new(lpn as u32)).map(|(p, _)| p);
            let after = recovered.locate(Lpn::new(lpn as u32)).map(|(p, _)| p);
            if l != Last::Trimmed {
                assert_eq!(after, before, "{name}: lpn {lpn}");
            }
        }
        for (b, (&now, &then)) in
            recovered.erase_counts().iter().zip(ftl.erase_counts()).enumerate()
        {
            assert_eq!(now, then + u32::from(stale.contains(&b)), "{name}: block {b}");
        }
        // And it keeps working.
        recover_and_use(&r, &image, &last, 3, 2000, name);
    }
}

// ---- crashes at every flash operation -----------------------------------------------------

/// What a crash sweep covered.
#[derive(Debug, Default)]
struct Sweep {
    /// Crash points (one after each flash operation).
    points: usize,
    /// Erases cut short.
    cuts: usize,
    /// Checkpoint views recovered.
    views: usize,
    /// Crashes during a recovery's own repairs and erases.
    during_recovery: usize,
    /// Recoveries that repaired with a merge (never more than one merge each), and those whose
    /// merge was a full merge (it needed a free block).
    repaired: usize,
    full_repairs: usize,
    /// Recoveries that erased stale blocks.
    erasing: usize,
    /// Recoveries that needed a free block and found none (allowed only below the minimum).
    no_space: usize,
    no_space_allowed: bool,
}

impl Sweep {
    /// Counts one recovery; returns its flash operations.
    fn add(&mut self, outcome: Result<Outcome, RecoveryError>, what: &str) -> Vec<Op> {
        let (report, full, ops) = match outcome {
            Ok(o) => {
                assert!(o.ops.is_empty() == (o.report == FtlRecovery::default()), "{what}");
                (o.report, o.full_repairs, o.ops)
            }
            Err(RecoveryError::NoSpace { .. }) if self.no_space_allowed => {
                self.no_space += 1;
                return Vec::new();
            }
            Err(e) => panic!("{what}: {e}"),
        };
        // One block beyond the steady state at most: one merge repairs it.
        assert!(report.repair_merges <= 1, "{what}: {report:?}");
        self.repaired += usize::from(report.repair_merges > 0);
        self.full_repairs += full as usize;
        self.erasing += usize::from(report.erased_blocks > 0);
        ops
    }
}

/// Replays a recorded run and recovers after every flash operation (and after every erase cut
/// short, and from the store's checkpoint view after every operation once a checkpoint exists).
/// `NoSpace` is a failure unless `no_space_allowed`.
fn crash_everywhere(name: &str, r: &Resolved, steps: u32, no_space_allowed: bool) -> Sweep {
    let r = r.clone();
    let (mut ftl, track) = fresh(&r);
    let mut last = vec![Last::Never; r.geometry.logical_pages as usize];
    let mut rng = Prng::new(11);
    // Checkpoints now and then, as a served drive writes them.
    for round in 0..12 {
        host_work(&mut ftl, &track, &mut rng, steps / 12, &mut last);
        if round > 2 {
            ftl.checkpoint(0).unwrap();
        }
    }
    ftl.check();
    let recycles = ftl.counters().recycles;
    let kinds = [RecycleKind::SwitchMerge, RecycleKind::PartialMerge, RecycleKind::FullMerge];
    assert!(kinds.iter().all(|&k| recycles[k as usize].count > 0), "{name}: {recycles:?}");
    if name.contains("cost-based") {
        assert!(recycles[RecycleKind::Migration as usize].count > 0, "{name}: no migration");
    }
    if let Some(w) = ftl.wear_leveling() {
        assert!(w.remaps + w.evicted_blocks > 0, "{name}: the leveler did nothing: {w:?}");
    }
    let ops = track.lock().unwrap().ops.clone();
    let checkpoints = track.lock().unwrap().checkpoints.clone();

    let mut image = Image::empty(r.geometry);
    let mut last = vec![Last::Never; r.geometry.logical_pages as usize];
    let mut checkpoint: Option<&SavedCheckpoint> = None;
    let mut sweep = Sweep { no_space_allowed, ..Sweep::default() };
    let mut cut_rng = Prng::new(5);
    for (k, &op) in ops.iter().enumerate() {
        match op {
            Op::Trim { lpn } => {
                last[lpn.index()] = Last::Trimmed;
                continue;
            }
            Op::Checkpoint { n } => {
                // A restart right after the checkpoint: a steady state, nothing to repair.
                let cp = &checkpoints[n];
                let what = format!("{name}: checkpoint {n} view");
                let Outcome { report, .. } =
                    recover_and_use(&r, &image.checkpoint_view(cp, false), &last, 0, 0, &what);
                assert_eq!(report.repair_merges, 0, "{what}");
                checkpoint = Some(cp);
                continue;
            }
            Op::Erase { block } => {
                // The erase cut short: some pages keep their old records.
                let mut cut = image.clone();
                let mask = cut_rng.next_u64();
                cut.cut_erase(block, |i| mask >> i & 1 == 1);
                let what = format!("{name}: erase of block {block} cut at op {k}");
                sweep.add(try_recover_and_use(&r, &cut, &last, k as u64, 30, &what), &what);
                sweep.cuts += 1;
            }
            Op::Program { .. } | Op::Copy { .. } => {}
            Op::Nvram { .. } => unreachable!("hybrid FTLs keep no RAM region"),
        }
        image.apply(op);
        if let Op::Program { oob, .. } = op {
            last[oob.lpn.index()] = Last::Written(oob.seq);
        }
        let what = format!("{name}: crash after op {k}");
        let repair = sweep.add(try_recover_and_use(&r, &image, &last, k as u64, 30, &what), &what);
        sweep.points += 1;
        // A crash during recovery's own work (after each of its operations, erases also cut):
        // the next recovery finishes it.
        let mut during = image.clone();
        for (j, &op) in repair.iter().enumerate() {
            if let Op::Erase { block } = op {
                let mut cut = during.clone();
                cut.cut_erase(block, |i| i % 2 == 0);
                let what = format!("{what}: recovery's erase {j} cut");
                sweep.add(try_recover_and_use(&r, &cut, &last, j as u64, 10, &what), &what);
                sweep.during_recovery += 1;
            }
            during.apply(op);
            let what = format!("{what}: crash after recovery's op {j}");
            sweep.add(try_recover_and_use(&r, &during, &last, j as u64, 10, &what), &what);
            sweep.during_recovery += 1;
        }
        if let Some(cp) = checkpoint {
            let view = image.checkpoint_view(cp, false);
            let what = format!("{name}: checkpoint view after op {k}");
            sweep.add(try_recover_and_use(&r, &view, &last, k as u64, 30, &what), &what);
            sweep.views += 1;
        }
    }
    sweep
}

#[test]
fn crash_at_every_flash_operation_bast() {
    for (name, overrides) in &CONFIGS[..3] {
        let sweep = crash_everywhere(name, &resolve(overrides), 1200, false);
        eprintln!("{name}: {sweep:?}");
        assert!(sweep.points > 1500 && sweep.cuts > 100 && sweep.views > 500, "{name}");
        assert!(sweep.repaired > 0 && sweep.erasing > 0, "{name}: {sweep:?}");
    }
}

#[test]
fn crash_at_every_flash_operation_sast() {
    for (name, overrides) in &CONFIGS[3..5] {
        let sweep = crash_everywhere(name, &resolve(overrides), 1200, false);
        eprintln!("{name}: {sweep:?}");
        assert!(sweep.points > 1500 && sweep.cuts > 100 && sweep.views > 500, "{name}");
        assert!(sweep.repaired > 0 && sweep.erasing > 0, "{name}: {sweep:?}");
    }
}

#[test]
fn crash_at_every_flash_operation_fast() {
    for (name, overrides) in &CONFIGS[5..] {
        let sweep = crash_everywhere(name, &resolve(overrides), 1200, false);
        eprintln!("{name}: {sweep:?}");
        assert!(sweep.points > 1500 && sweep.cuts > 100 && sweep.views > 500, "{name}");
        assert!(sweep.repaired > 0 && sweep.erasing > 0, "{name}: {sweep:?}");
    }
}

/// With one spare block fewer (blocks = L + logs + 1, today's minimum), some crash states leave
/// no free block for a repair's full merge: recovery says `NoSpace` (never panics, never loses
/// data); every other crash point still recovers. This is why a served drive needs one more.
#[test]
fn one_spare_fewer_can_leave_no_room_to_repair() {
    let mut total = 0;
    for (name, overrides) in CONFIGS {
        let sweep = crash_everywhere(name, &resolve_with_spare(1, overrides), 1200, true);
        eprintln!("{name} with L + logs + 1 blocks: {sweep:?}");
        total += sweep.no_space;
    }
    assert!(total > 0);
}

// ---- hand-worked layouts ------------------------------------------------------------------

/// A device of 4 logical blocks of 4 pages, `blocks` blocks, with `layout[b]` = block b's pages
/// as (lpn, seq); each page's origin is its seq.
fn hand_image(r: &Resolved, layout: &[&[(u32, u64)]]) -> Image {
    let mut image = Image::empty(r.geometry);
    let ppb = r.geometry.pages_per_block as usize;
    for (b, pages) in layout.iter().enumerate() {
        for (i, &(lpn, seq)) in pages.iter().enumerate() {
            image.pages[b * ppb + i] = Some(Oob { lpn: Lpn::new(lpn), seq, region: 0 });
            image.origin[b * ppb + i] = seq;
        }
    }
    image
}

fn hand_config(overrides: &[&str], blocks: u32) -> Resolved {
    let blocks = format!("device.blocks={blocks}");
    let mut all = vec![
        "device.page_size_bytes=2048",
        "device.pages_per_block=4",
        "device.logical_bytes=32768",
        "wear.endurance_cycles=0",
        &blocks,
    ];
    all.extend_from_slice(overrides);
    Config::from_overrides(&all).unwrap().resolve().unwrap()
}

/// Recovers a hand layout; every LPN must be served from its newest copy in the layout.
fn hand_recover(
    r: &Resolved,
    layout: &[&[(u32, u64)]],
) -> (HybridFtl, FtlRecovery, Arc<Mutex<Track>>) {
    let image = hand_image(r, layout);
    let mut last = vec![Last::Never; 16];
    for oob in image.pages.iter().flatten() {
        let l = &mut last[oob.lpn.index()];
        if !matches!(*l, Last::Written(s) if s > oob.seq) {
            *l = Last::Written(oob.seq);
        }
    }
    let (media, track) = image.media();
    let (ftl, report) = recover_hybrid_ftl(r, media, 0).unwrap();
    ftl.check();
    verify(&ftl, &track, &last, "hand layout");
    (ftl, report, track)
}

fn block_oob(ftl: &HybridFtl, block: u32) -> Vec<(u32, u64)> {
    ftl.geometry()
        .pages_of(BlockId::new(block))
        .filter_map(|p| ftl.flash().media().oob(p).map(|o| (o.lpn.get(), o.seq)))
        .collect()
}

/// The data block of logical block `lbn`.
fn data_block(ftl: &HybridFtl, lbn: u32) -> Option<u32> {
    ftl.data_block(lbn).map(BlockId::get)
}

/// The log blocks in use: `(block, owner, write pointer)`.
fn log_blocks(ftl: &HybridFtl) -> Vec<(u32, Option<u32>, u32)> {
    ftl.log_blocks().into_iter().map(|(b, owner, wp)| (b.get(), owner, wp)).collect()
}

/// Where `lpn` lives: its physical page number and region.
fn locate(ftl: &HybridFtl, lpn: u32) -> Option<(u32, u8)> {
    ftl.locate(Lpn::new(lpn)).map(|(ppn, region)| (ppn.get(), region))
}

fn cleaner(ftl: &HybridFtl) -> (u64, u64) {
    let c = &ftl.flash().counters;
    (
        c.copies[nandlab_core::media::Source::Cleaner as usize],
        c.erases[nandlab_core::media::Source::Cleaner as usize],
    )
}

fn recycled(ftl: &HybridFtl, kind: RecycleKind) -> (u64, u64, u64) {
    let s = ftl.counters().recycles[kind as usize];
    (s.count, s.copied_pages, s.erases)
}

/// BAST migration cut after its first copy: block 1 is logical block 0's log (valid: page 2 at
/// offset 2, page 1 at offset 3: not in place); the migration copied page 2 into block 2 (seq
/// 9). Both logs belong to logical block 0, which may own one: the newer (block 2) cannot be
/// adopted, and no block holds an in-place prefix, so logical block 0 is fully merged into the
/// first free block (3): copies of 0, 1, 2, 3 with seqs 10..13 (numbering continues after the
/// newest page on flash, 9); blocks 0 (old data), 1 and 2 (emptied logs) are erased.
#[test]
fn interrupted_bast_migration_is_repaired_by_a_full_merge() {
    let r = hand_config(&["ftl.kind=bast", "ftl.recycling=cost-based", "ftl.log_blocks=2"], 8);
    let (ftl, report, _) = hand_recover(
        &r,
        &[&[(0, 1), (1, 2), (2, 3), (3, 4)], &[(1, 5), (1, 6), (2, 7), (1, 8)], &[(2, 9)]],
    );
    assert_eq!((report.repair_merges, report.erased_blocks), (1, 0));
    assert_eq!(data_block(&ftl, 0), Some(3));
    assert_eq!(log_blocks(&ftl), []);
    assert_eq!(block_oob(&ftl, 3), [(0, 10), (1, 11), (2, 12), (3, 13)]);
    assert_eq!(ftl.erase_counts(), [1, 1, 1, 0, 0, 0, 0, 0]);
    assert_eq!(cleaner(&ftl), (4, 3));
    assert_eq!(recycled(&ftl, RecycleKind::FullMerge), (1, 4, 2));
    assert_eq!(ftl.free_blocks(), 7);
}

/// A full merge of logical block 0 cut after two copies: block 2 holds pages 0 and 1 in place
/// (copied from the data block 0 and the log block 1). The older pure block (0) stays the data
/// block, block 1 is adopted as the log, and block 2 — a second log of a BAST logical block —
/// is completed by a partial merge: pages 2 (from the log) and 3 (from the data block) are
/// copied in; blocks 0 and 1 are erased. No free block is used.
#[test]
fn interrupted_full_merge_completes_as_a_partial_merge() {
    let r = hand_config(&["ftl.kind=bast", "ftl.log_blocks=2"], 8);
    let (ftl, report, _) = hand_recover(
        &r,
        &[&[(0, 1), (1, 2), (2, 3), (3, 4)], &[(2, 5), (1, 6)], &[(0, 7), (1, 8)]],
    );
    assert_eq!((report.repair_merges, report.erased_blocks), (1, 0));
    assert_eq!(data_block(&ftl, 0), Some(2));
    assert_eq!(log_blocks(&ftl), []);
    assert_eq!(block_oob(&ftl, 2), [(0, 7), (1, 8), (2, 9), (3, 10)]);
    assert_eq!(ftl.erase_counts(), [1, 1, 0, 0, 0, 0, 0, 0]);
    assert_eq!(recycled(&ftl, RecycleKind::PartialMerge), (1, 2, 2));
    assert_eq!(ftl.free_blocks(), 7);
}

/// A partial merge cut after one copy: log block 1 held pages 0, 1 in place and page 2 was
/// copied in from data block 0. Block 0 (still holding page 3) stays the data block; block 1 is
/// logical block 0's log with write pointer 3 — a consistent state, nothing to repair. The next
/// write to another logical block evicts it: a partial merge copies page 3 only.
#[test]
fn interrupted_partial_merge_stays_a_log_and_completes_later() {
    let r = hand_config(&["ftl.kind=bast", "ftl.log_blocks=1"], 8);
    let (mut ftl, report, track) =
        hand_recover(&r, &[&[(0, 1), (1, 2), (2, 3), (3, 4)], &[(0, 5), (1, 6), (2, 7)]]);
    assert_eq!(report, FtlRecovery::default());
    assert_eq!(data_block(&ftl, 0), Some(0));
    assert_eq!(log_blocks(&ftl), [(1, Some(0), 3)]);
    ftl.write_page(Lpn::new(8), 0, None);
    ftl.check();
    assert_eq!(recycled(&ftl, RecycleKind::PartialMerge), (1, 1, 1));
    assert_eq!(data_block(&ftl, 0), Some(1));
    assert_eq!(block_oob(&ftl, 1), [(0, 5), (1, 6), (2, 7), (3, 8)]);
    // The new log is the first free block, 2.
    assert_eq!(log_blocks(&ftl), [(2, Some(2), 1)]);
    let mut last = vec![Last::Never; 16];
    for (lpn, seq) in [(0, 5), (1, 6), (2, 7), (3, 4), (8, 9)] {
        last[lpn] = Last::Written(seq);
    }
    verify(&ftl, &track, &last, "after the merge");
}

/// FAST: logical blocks 0 and 1 have data blocks 0 and 1; block 2 is a random log (page 1,
/// page 6); block 3 holds pages 4, 5 of logical block 1 in place from offset 0: the sequential
/// log. It is restored as the sequential log: writes of pages 6 and 7 append to it, and a write
/// at offset 0 of another logical block switch-merges it (no copy, the old data block erased).
#[test]
fn fast_sequential_log_is_restored_as_sequential() {
    let r = hand_config(&["ftl.kind=fast", "ftl.log_blocks=3"], 8);
    let (mut ftl, report, _) = hand_recover(
        &r,
        &[
            &[(0, 1), (1, 2), (2, 3), (3, 4)],
            &[(4, 5), (5, 6), (6, 7), (7, 8)],
            &[(1, 9), (6, 10)],
            &[(4, 11), (5, 12)],
        ],
    );
    assert_eq!(report, FtlRecovery::default());
    assert_eq!((data_block(&ftl, 0), data_block(&ftl, 1)), (Some(0), Some(1)));
    assert_eq!(ftl.sequential_log(), Some(BlockId::new(3)));
    assert_eq!(log_blocks(&ftl), [(2, None, 2), (3, Some(1), 2)]);
    ftl.write_page(Lpn::new(6), 0, None);
    ftl.write_page(Lpn::new(7), 0, None);
    assert_eq!(locate(&ftl, 6), Some((3 * 4 + 2, 1)));
    assert_eq!(locate(&ftl, 7), Some((3 * 4 + 3, 1)));
    ftl.write_page(Lpn::new(8), 0, None);
    ftl.check();
    assert_eq!(recycled(&ftl, RecycleKind::SwitchMerge), (1, 0, 1));
    assert_eq!(data_block(&ftl, 1), Some(3));
    assert_eq!(ftl.erase_counts()[1], 1);
    assert_eq!(ftl.sequential_log(), Some(BlockId::new(4)), "the first free block");
}

/// SAST, N = 2, K = 2, three log blocks in the pool: group 0 (logical blocks 0, 1) holds three
/// logs, one over its limit. The newest cannot be adopted.
/// - It holds pages 0, 1 of logical block 0 in place (the newest copies): a partial merge
///   completes logical block 0 into it (pages 2, 3 copied from the logs / old data block 5,
///   which is erased): one repair, no free block.
/// - It holds pages 0 and 4 (two logical blocks): neither it nor another log holds an in-place
///   prefix, so each of logical blocks 0 and 1 is fully merged into a free block (3, then 4):
///   two repairs; the three emptied logs are erased.
#[test]
fn sast_group_over_its_log_limit_is_repaired() {
    let sast =
        ["ftl.kind=sast", "ftl.group_data_blocks=2", "ftl.group_log_blocks=2", "ftl.log_blocks=3"];
    let r = hand_config(&sast, 9);
    let (ftl, report, _) = hand_recover(
        &r,
        &[
            &[(4, 5), (0, 6), (5, 7), (1, 8)],
            &[(6, 9), (2, 10), (7, 11), (4, 12)],
            &[(0, 13), (1, 14)],
            &[],
            &[],
            &[(0, 1), (1, 2), (2, 3), (3, 4)],
        ],
    );
    assert_eq!((report.repair_merges, report.erased_blocks), (1, 0));
    assert_eq!(data_block(&ftl, 0), Some(2));
    assert_eq!(block_oob(&ftl, 2), [(0, 13), (1, 14), (2, 15), (3, 16)]);
    assert_eq!(log_blocks(&ftl), [(0, Some(0), 4), (1, Some(0), 4)]);
    assert_eq!(ftl.erase_counts()[5], 1);
    assert_eq!(recycled(&ftl, RecycleKind::PartialMerge), (1, 2, 1));

    let (ftl, report, _) = hand_recover(
        &r,
        &[&[(0, 1), (4, 2), (1, 3), (5, 4)], &[(2, 5), (6, 6), (3, 7), (7, 8)], &[(0, 9), (4, 10)]],
    );
    assert_eq!((report.repair_merges, report.erased_blocks), (2, 0));
    assert_eq!((data_block(&ftl, 0), data_block(&ftl, 1)), (Some(3), Some(4)));
    assert_eq!(block_oob(&ftl, 3), [(0, 11), (1, 12), (2, 13), (3, 14)]);
    assert_eq!(block_oob(&ftl, 4), [(4, 15), (5, 16), (6, 17), (7, 18)]);
    assert_eq!(log_blocks(&ftl), []);
    assert_eq!(ftl.erase_counts(), [1, 1, 1, 0, 0, 0, 0, 0, 0]);
    assert_eq!(recycled(&ftl, RecycleKind::FullMerge), (2, 8, 2));
}

/// The checkpoint of a recovered FTL: the newest copy of every LPN, data blocks and full logs
/// closed (2), a log that may still be programmed open (1), free blocks 0 in allocation order.
#[test]
fn checkpoint_records_the_tables() {
    let r = hand_config(&["ftl.kind=fast", "ftl.log_blocks=3"], 8);
    let (mut ftl, _, track) = hand_recover(
        &r,
        &[
            &[(0, 1), (1, 2), (2, 3), (3, 4)],
            &[(4, 5), (5, 6), (6, 7), (7, 8)],
            &[(1, 9), (6, 10), (9, 11), (13, 12)],
            &[(4, 13), (5, 14)],
        ],
    );
    ftl.checkpoint(7).unwrap();
    let t = track.lock().unwrap();
    let cp = t.checkpoints.last().unwrap();
    assert_eq!(cp.seq, 14);
    let states: Vec<u8> = cp.blocks.iter().map(|b| b.state).collect();
    assert_eq!(states, [2, 2, 2, 1, 0, 0, 0, 0]);
    let valid: Vec<u32> = cp.blocks.iter().map(|b| b.valid_pages).collect();
    assert_eq!(valid, [3, 1, 4, 2, 0, 0, 0, 0]);
    let mut l2p = vec![Ppn::NONE; 16];
    for (lpn, ppn) in
        [(0, 0), (1, 8), (2, 2), (3, 3), (4, 12), (5, 13), (6, 9), (7, 7), (9, 10), (13, 11)]
    {
        l2p[lpn] = Ppn::new(ppn);
    }
    assert_eq!(cp.l2p, l2p);
    assert_eq!(cp.free_order, [4, 5, 6, 7].map(BlockId::new));
}

// ---- damaged images -----------------------------------------------------------------------

/// Arbitrary OOB (pages of many logical blocks scattered, equal seqs, torn pages, more logs
/// than the pool holds, no free block, a foreign region, absurd seqs): recovery gives a
/// consistent FTL serving every LPN's newest copy, or a typed error — never a panic.
#[test]
fn arbitrary_layouts_are_repaired_or_refused() {
    let kinds: [&[&str]; 4] = [
        &["ftl.kind=bast", "ftl.log_blocks=2"],
        &["ftl.kind=bast", "ftl.log_blocks=2", "ftl.recycling=cost-based"],
        &["ftl.kind=sast", "ftl.group_data_blocks=2", "ftl.group_log_blocks=2", "ftl.log_blocks=3"],
        &["ftl.kind=fast", "ftl.log_blocks=3"],
    ];
    let configs: Vec<Resolved> = kinds.iter().map(|k| hand_config(k, 9)).collect();
    let (mut ok, mut no_space, mut damaged, mut repairs) = (0, 0, 0, 0);
    let mut rng = Prng::new(2024);
    for seed in 0..4000u64 {
        let r = &configs[(seed % 4) as usize];
        let mut image = Image::empty(r.geometry);
        let ppb = 4;
        for b in 0..9 {
            image.erase_counts[b] = rng.below(5) as u32;
            if rng.below(10) < 3 {
                continue;
            }
            let programmed = 1 + rng.below(ppb as u64) as usize;
            for i in 0..programmed {
                let lpn = match rng.below(20) {
                    0 => None,
                    1 => Some(GARBAGE_LPN),
                    2 => Some(Lpn::new(16 + rng.below(8) as u32)),
                    3..=9 => Some(Lpn::new((rng.below(4) * 4) as u32 + i as u32)), // in place
                    _ => Some(Lpn::new(rng.below(16) as u32)),
                };
                let seq = match rng.below(200) {
                    0 => u64::MAX - 1,
                    _ => 1 + rng.below(40),
                };
                let region = u8::from(rng.below(300) == 0);
                image.pages[b * ppb + i] = lpn.map(|lpn| Oob { lpn, seq, region });
                image.origin[b * ppb + i] = seq;
            }
        }
        // The newest seq on flash of each LPN (origins are seqs here).
        let mut newest: Vec<Option<u64>> = vec![None; 16];
        for oob in image.pages.iter().flatten().filter(|o| o.lpn < Lpn::new(16)) {
            let n = &mut newest[oob.lpn.index()];
            *n = Some(n.map_or(oob.seq, |s| s.max(oob.seq)));
        }
        let last: Vec<Last> = newest.iter().map(|n| n.map_or(Last::Never, Last::Written)).collect();
        match try_recover_and_use(r, &image, &last, seed, 100, &format!("seed {seed}")) {
            Ok(Outcome { report, .. }) => {
                ok += 1;
                repairs += report.repair_merges;
            }
            Err(RecoveryError::NoSpace { .. }) => no_space += 1,
            Err(RecoveryError::Damaged { .. }) => damaged += 1,
            Err(e) => panic!("seed {seed}: {e}"),
        }
    }
    eprintln!("4000 layouts: {ok} recovered ({repairs} repair merges), {no_space} NoSpace, {damaged} Damaged");
    assert!(ok > 1000 && repairs > 1000 && no_space > 10 && damaged > 100);
}

/// The store's roll-forward (`FileMedia::open_with_checkpoint`) stops at the first block of the
/// checkpoint's free order whose first page is erased. A hybrid merge skips pages that have no
/// copy, so the block it fills after the checkpoint may start with an erased page: here BAST's
/// full merge of logical block 1 (pages 5, 6 only, in a log not in place) fills block 1 from
/// offset 1, erases the log, and the new log (block 2) takes page 8. Read with the first-page
/// rule, the view loses pages 5, 6 and 8; reading every page of a free-at-checkpoint block
/// finds them. (Documents the store change hybrid drives need.)
#[test]
fn checkpoint_roll_forward_must_read_past_an_erased_first_page() {
    let r = hand_config(&["ftl.kind=bast", "ftl.log_blocks=1"], 8);
    let (mut ftl, track) = fresh(&r);
    let mut last = vec![Last::Never; 16];
    for lpn in [5, 6] {
        ftl.write_page(Lpn::new(lpn), 0, None);
    }
    ftl.checkpoint(0).unwrap();
    ftl.write_page(Lpn::new(8), 0, None);
    assert_eq!(recycled(&ftl, RecycleKind::FullMerge), (1, 2, 1));
    assert_eq!(block_oob(&ftl, 1), [(5, 3), (6, 4)]);
    assert_eq!(ftl.flash().media().oob(Ppn::new(4)), None, "block 1 starts with an erased page");
    for (lpn, seq) in [(5, 1), (6, 2), (8, 5)] {
        last[lpn] = Last::Written(seq);
    }
    let image = Image::of(&ftl, &track);
    let cp = track.lock().unwrap().checkpoints[0].clone();
    recover_and_use(&r, &image.checkpoint_view(&cp, false), &last, 1, 50, "every page read");
    let (media, _) = image.checkpoint_view(&cp, true).media();
    let (lossy, _) = recover_hybrid_ftl(&r, media, 0).unwrap();
    assert!([5, 6, 8].iter().all(|&l| lossy.locate(Lpn::new(l)).is_none()));
}
