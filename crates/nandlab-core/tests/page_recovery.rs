//! Goal: the page-mapped FTL (`PageFtl`) rebuilds its tables after a crash at any flash or NVRAM
//! operation — with every placement (`none`, DAC with and without a time threshold and with a
//! RAM region, DEB with and without an EBR), with and without a wear leveler, with greedy,
//! cost-benefit and CAT cleaning — such that recovery never panics nor refuses the image, the
//! tables pass `check()`, every LPN reads the data of its last host write acknowledged before
//! the crash (a RAM-region page: the one its NVRAM entry holds), and the FTL keeps working.
//!
//! Method: the FTL runs over `Tracked` (`common/tracked.rs`): every program, copy, erase and
//! NVRAM write is recorded, NVRAM is emulated like the store's image (two cells per slot, write
//! order), and every host write carries a payload stamped with its id, so each physical page
//! and NVRAM cell knows the host write whose data it holds. A crash after operation k is the
//! image replayed up to k (also: each erase cut short, and the store's checkpoint view once a
//! checkpoint exists); it is recovered the way `Device::recover` does (`PageFtl::recover`, the
//! configuration, `restore_nvram`), then every LPN is read back. A host write is acknowledged
//! at its last operation (the program of its page, or the NVRAM write of a RAM-region page):
//! the first operation carrying its id. A trimmed LPN may come back with older content (a trim
//! leaves no record on flash), but never with another LPN's. Recovery's own operations (sealing,
//! finishing a cleaning step, restoring NVRAM) are crashed after too: the next recovery must
//! still find everything. Hand-worked layouts check exact outcomes of the repairs.

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

use common::tracked::{origin_of, payload, Image, Last, NvramCell, Op, SavedCheckpoint, Track};
use nandlab_core::media::{BlockId, Lpn, Oob, Ppn};
use nandlab_core::parts::{page_ftl, recover_page_ftl, Ftl, PageFtl};
use nandlab_core::FtlRecovery;
use nandlab_core::Prng;
use nandlab_core::Resolved;
use nandlab_core::{Config, RecoveryError};

// ---- configurations ---------------------------------------------------------------------

const PAGE: u64 = 512;
const PPB: u32 = 8;
const LOGICAL_BLOCKS: u32 = 12;
const BLOCKS: u32 = 22;

/// A small device: 22 blocks of 8 pages of 512 bytes, 12 blocks' worth of logical pages.
fn resolve(overrides: &[&str]) -> Resolved {
    let blocks = format!("device.blocks={BLOCKS}");
    let logical = format!("device.logical_bytes={}", u64::from(LOGICAL_BLOCKS * PPB) * PAGE);
    let mut all = vec![
        "device.page_size_bytes=512",
        "device.pages_per_block=8",
        &blocks,
        &logical,
        "wear.endurance_cycles=0",
    ];
    all.extend_from_slice(overrides);
    Config::from_overrides(&all).unwrap().resolve().unwrap()
}

/// The configurations of the crash sweeps: name and overrides. Times: a host step is 20 ms
/// (see `host_work`), so DAC's 0.5 s threshold and DEB's 0.2/0.5/1 s stable-time intervals
/// see pages of every age.
const CONFIGS: &[(&str, &[&str])] = &[
    ("none greedy", &["ftl.cleaning=greedy"]),
    // Parallel hardware: an open block per plane, free lists per plane.
    ("none greedy 2 planes", &["ftl.cleaning=greedy", "device.planes_per_die=2"]),
    (
        "none cost-benefit 2 gangs static",
        &["ftl.cleaning=cost-benefit", "device.gangs=2", "ftl.allocation=static"],
    ),
    ("none cat static", &["ftl.cleaning=cat", "wear.kind=static", "wear.threshold=2"]),
    ("none greedy lazy", &["ftl.cleaning=greedy", "wear.kind=lazy", "wear.delta=1"]),
    ("dac cost-benefit", &["ftl.placement=dac", "ftl.regions=3", "ftl.cleaning=cost-benefit"]),
    (
        "dac cost-benefit threshold",
        &[
            "ftl.placement=dac",
            "ftl.regions=3",
            "ftl.cleaning=cost-benefit",
            "ftl.time_threshold_s=0.5",
        ],
    ),
    (
        "dac greedy threshold lazy",
        &[
            "ftl.placement=dac",
            "ftl.regions=3",
            "ftl.cleaning=greedy",
            "ftl.time_threshold_s=0.5",
            "wear.kind=lazy",
            "wear.delta=0.5",
        ],
    ),
    (
        "dac ram greedy",
        &["ftl.placement=dac", "ftl.regions=3", "ftl.cleaning=greedy", "dac.ram_region_bytes=4096"],
    ),
    (
        "dac ram cat threshold static",
        &[
            "ftl.placement=dac",
            "ftl.regions=3",
            "ftl.cleaning=cat",
            "ftl.time_threshold_s=0.5",
            "dac.ram_region_bytes=3072",
            "dac.ram_write_back_threshold=0.7",
            "wear.kind=static",
            "wear.threshold=2",
        ],
    ),
    (
        "deb ebr greedy",
        &[
            "ftl.placement=deb",
            "ftl.cleaning=greedy",
            "deb.ebr_size_bytes=4096",
            "deb.stable_time_intervals_s=[0.2, 0.5, 1.0]",
        ],
    ),
    (
        "deb ebr cat lazy",
        &[
            "ftl.placement=deb",
            "ftl.cleaning=cat",
            "deb.ebr_size_bytes=3072",
            "deb.ebr_write_back_threshold=0.7",
            "deb.stable_time_intervals_s=[0.2, 0.5, 1.0]",
            "wear.kind=lazy",
            "wear.delta=0.5",
        ],
    ),
    (
        "deb no-ebr greedy static",
        &[
            "ftl.placement=deb",
            "ftl.cleaning=greedy",
            "deb.ebr_size_bytes=0",
            "deb.stable_time_intervals_s=[0.2, 0.5, 1.0]",
            "wear.kind=static",
            "wear.threshold=2",
        ],
    ),
    (
        "deb no-ebr cat",
        &[
            "ftl.placement=deb",
            "ftl.cleaning=cat",
            "deb.ebr_size_bytes=0",
            "deb.stable_time_intervals_s=[0.2, 0.5, 1.0]",
        ],
    ),
];

/// A fresh FTL over a tracking media whose NVRAM holds the RAM region (as the store's image
/// has: `nvram_pages` = the region's pages).
fn fresh(r: &Resolved) -> (PageFtl, Arc<Mutex<Track>>) {
    let image = Image::with_nvram(r.geometry, r.ram_region_pages());
    let (media, track) = image.media();
    (page_ftl(r, media, None).unwrap(), track)
}

/// Recovers from `image` the way `Device::recover` does (`battery_failed`:
/// `serve.ram_region_battery = "failed"`).
fn recover(
    r: &Resolved,
    image: &Image,
    now_ns: u64,
    battery_failed: bool,
) -> Result<(PageFtl, FtlRecovery, Arc<Mutex<Track>>), RecoveryError> {
    let mut r = r.clone();
    if battery_failed {
        r.config.serve.ram_region_battery = "failed".into();
    }
    let (media, track) = image.media();
    let (ftl, report) = recover_page_ftl(&r, media, now_ns)?;
    Ok((ftl, report, track))
}

// ---- the host -----------------------------------------------------------------------------

/// Simulated time between host steps.
const STEP_NS: u64 = 20_000_000;

/// What the host did: per LPN its last action, per host write id the LPN it wrote (id 0 is
/// no write), and the simulated time.
#[derive(Clone)]
struct Host {
    last: Vec<Last>,
    writer: Vec<Lpn>,
    now_ns: u64,
}

impl Host {
    fn new(r: &Resolved) -> Self {
        Self {
            last: vec![Last::Never; r.geometry.logical_pages as usize],
            writer: vec![Lpn::NONE],
            now_ns: 0,
        }
    }

    /// Writes `lpn` with a payload stamped with a new id; checks the write's last operation
    /// carries it (that operation is the acknowledgement the crash replay looks for).
    fn write(&mut self, ftl: &mut PageFtl, track: &Arc<Mutex<Track>>, lpn: u32) {
        let id = self.writer.len() as u64;
        let lpn = Lpn::new(lpn);
        self.writer.push(lpn);
        let page = payload(id, PAGE as usize);
        ftl.write_page(lpn, self.now_ns, Some(&page));
        let t = track.lock().unwrap();
        match t.ops.last() {
            Some(Op::Program { oob, origin, .. }) => assert_eq!((oob.lpn, *origin), (lpn, id)),
            Some(Op::Nvram { value, .. }) => assert_eq!((value.lpn, value.origin), (lpn, id)),
            other => panic!("a host write ends with its program or NVRAM write, not {other:?}"),
        }
        self.last[lpn.index()] = Last::Written(id);
    }

    /// Skewed random host work: 70 % of the writes to 16 hot LPNs, some short sequential runs,
    /// a few trims; `STEP_NS` between steps.
    fn work(&mut self, ftl: &mut PageFtl, track: &Arc<Mutex<Track>>, rng: &mut Prng, steps: u32) {
        let lp = self.last.len() as u64;
        for _ in 0..steps {
            self.now_ns += STEP_NS;
            let lpn = if rng.below(10) < 7 { rng.below(16) } else { rng.below(lp) } as u32;
            match rng.below(40) {
                0 | 1 => {
                    ftl.trim_page(Lpn::new(lpn), self.now_ns);
                    track.lock().unwrap().ops.push(Op::Trim { lpn: Lpn::new(lpn) });
                    self.last[lpn as usize] = Last::Trimmed;
                }
                2 => {
                    let n = 1 + rng.below(6) as u32;
                    for l in lpn..(lpn + n).min(lp as u32) {
                        self.write(ftl, track, l);
                    }
                }
                _ => self.write(ftl, track, lpn),
            }
        }
    }
}

/// Reads every LPN back: a written one must return its last acknowledged write's data without
/// error; a never-written one is unmapped; a trimmed one may return an older write of its own.
fn verify(ftl: &mut PageFtl, host: &Host) -> Result<(), String> {
    let mut page = vec![0u8; PAGE as usize];
    for (lpn, &last) in host.last.iter().enumerate() {
        page.fill(0xEE);
        let mapped = ftl.read_page(Lpn::new(lpn as u32), host.now_ns, Some(&mut page));
        let error = ftl.flash_mut().media_mut().take_error();
        let got = origin_of(&page);
        match last {
            Last::Never if mapped => return Err(format!("lpn {lpn} was never written")),
            Last::Never => {}
            Last::Written(id) if !mapped => return Err(format!("lpn {lpn} (write {id}) lost")),
            Last::Written(id) if error.is_some() => {
                return Err(format!("lpn {lpn} (write {id}) reads as an error: {error:?}"))
            }
            Last::Written(id) if got != id => {
                return Err(format!("lpn {lpn} serves the data of write {got} instead of {id}"))
            }
            Last::Written(_) | Last::Trimmed => {}
        }
        if last == Last::Trimmed
            && mapped
            && host.writer.get(got as usize) != Some(&Lpn::new(lpn as u32))
        {
            return Err(format!("trimmed lpn {lpn} serves write {got} (error {error:?})"));
        }
    }
    Ok(())
}

/// What one recovery did.
struct Outcome {
    ftl: PageFtl,
    report: FtlRecovery,
    /// Its own operations (sealing, finishing a cleaning step, restoring NVRAM).
    ops: Vec<Op>,
}

/// Recovers from `image`, checks and verifies it, keeps writing (`more_steps`) and verifies
/// again. A panic or a `RecoveryError` is returned as the failure's text.
fn recover_and_use(
    r: &Resolved,
    image: &Image,
    host: &Host,
    seed: u64,
    more_steps: u32,
) -> Result<Outcome, String> {
    let run = || -> Result<Outcome, String> {
        let (mut ftl, report, track) =
            recover(r, image, host.now_ns, false).map_err(|e| format!("recovery error: {e}"))?;
        let ops = track.lock().unwrap().ops.clone();
        ftl.check();
        verify(&mut ftl, host)?;
        let mut host = host.clone();
        host.work(&mut ftl, &track, &mut Prng::new(seed), more_steps);
        ftl.check();
        verify(&mut ftl, &host).map_err(|e| format!("after more writes: {e}"))?;
        Ok(Outcome { ftl, report, ops })
    };
    match catch_unwind(AssertUnwindSafe(run)) {
        Ok(result) => result,
        Err(panic) => Err(format!(
            "panic: {}",
            panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_string()))
                .unwrap_or_default()
        )),
    }
}

// ---- crashes at every operation -----------------------------------------------------------

/// What a crash sweep covered.
#[derive(Debug, Default)]
struct Sweep {
    /// Crash points after a flash operation, and after an NVRAM write.
    flash_points: usize,
    nvram_points: usize,
    /// Erases cut short.
    cuts: usize,
    /// Checkpoint views recovered.
    views: usize,
    /// Crashes after one of a recovery's own operations (erases also cut).
    during_recovery: usize,
    /// Recoveries that sealed a block, finished a cleaning step, restored NVRAM pages.
    sealing: usize,
    completing: usize,
    restoring: usize,
    /// Known limit: an erase cut short in a block holding the newest flash copy of an LPN
    /// trimmed since (the block's pages were all invalid when the FTL erased it, but a trim
    /// leaves no record, so that copy is current again) can leave no free block and no victim
    /// with room to finish the step: recovery says `NoSpace` or runs out of free blocks.
    /// Counted here, not as failures; every other cut erase must recover.
    trim_cuts: usize,
    trim_cut_example: Option<String>,
    /// Failures (the first few kept in full).
    failures: usize,
    first_failures: Vec<String>,
}

impl Sweep {
    /// Counts one recovery; returns its operations.
    fn add(&mut self, outcome: Result<Outcome, String>, what: &str) -> Vec<Op> {
        match outcome {
            Ok(o) => {
                self.sealing += usize::from(o.report.sealed_blocks > 0);
                self.completing += usize::from(o.report.cleanings_completed > 0);
                self.restoring += usize::from(o.report.nvram_pages_restored > 0);
                drop(o.ftl);
                o.ops
            }
            Err(e) => {
                self.failures += 1;
                if self.first_failures.len() < 6 {
                    self.first_failures.push(format!("{what}: {e}"));
                }
                Vec::new()
            }
        }
    }
}

/// Whether `block` of `image` holds the newest flash copy of an LPN the host trimmed since
/// its last write (a copy a trim could not erase: it is current again after a restart).
fn resurrects_trimmed(image: &Image, block: BlockId, host: &Host) -> bool {
    let mut newest: Vec<Option<(u64, usize)>> = vec![None; host.last.len()];
    for (ppn, oob) in image.pages.iter().enumerate() {
        if let Some(o) = oob.filter(|o| o.lpn.index() < host.last.len()) {
            if newest[o.lpn.index()].is_none_or(|(s, _)| o.seq > s) {
                newest[o.lpn.index()] = Some((o.seq, ppn));
            }
        }
    }
    newest.iter().zip(&host.last).any(|(n, &l)| {
        let in_block = |ppn: usize| image.geometry.block_of(Ppn::new(ppn as u32)) == block;
        l == Last::Trimmed && n.is_some_and(|(_, ppn)| in_block(ppn))
    })
}

/// Runs a configuration's workload (checkpoints now and then, as a served drive writes them),
/// then replays it and recovers after every flash and NVRAM operation, after every erase cut
/// short, from the checkpoint view after every operation once a checkpoint exists, and after
/// each operation of those recoveries.
fn crash_everywhere(name: &str, r: &Resolved, steps: u32) -> Sweep {
    let (mut ftl, track) = fresh(r);
    let mut live = Host::new(r);
    let mut rng = Prng::new(11);
    for round in 0..10 {
        live.work(&mut ftl, &track, &mut rng, steps / 10);
        if round > 2 {
            ftl.checkpoint(live.now_ns).unwrap();
        }
    }
    ftl.check();
    assert!(ftl.counters().gc_victims > 30, "{name}: {} cleaning steps", ftl.counters().gc_victims);
    if let Some(w) = ftl.wear_leveling() {
        if w.remaps + w.evicted_blocks == 0 {
            eprintln!("{name}: the leveler did nothing: {w:?}");
        }
    }
    if r.ram_region_pages() > 0 {
        let ram = ftl.counters().ram;
        assert!(ram.write_back_pages > 0 && ram.in_place_updates > 0, "{name}: {ram:?}");
    }
    let ops = track.lock().unwrap().ops.clone();
    let checkpoints = track.lock().unwrap().checkpoints.clone();
    drop(ftl);

    let mut image = Image::with_nvram(r.geometry, r.ram_region_pages());
    // Recoveries resume at the run's end time.
    let mut host = Host { now_ns: live.now_ns, ..Host::new(r) };
    host.writer = live.writer.clone();
    let mut acked = 0u64;
    let mut checkpoint: Option<&SavedCheckpoint> = None;
    let mut sweep = Sweep::default();
    let mut cut_rng = Prng::new(5);
    for (k, &op) in ops.iter().enumerate() {
        match op {
            Op::Trim { lpn } => {
                host.last[lpn.index()] = Last::Trimmed;
                continue;
            }
            Op::Checkpoint { n } => {
                let cp = &checkpoints[n];
                let what = format!("{name}: checkpoint {n} view");
                let view = image.checkpoint_view(cp, false);
                sweep.add(recover_and_use(r, &view, &host, k as u64, 0), &what);
                sweep.views += 1;
                checkpoint = Some(cp);
                continue;
            }
            Op::Erase { block } => {
                let mut cut = image.clone();
                let mask = cut_rng.next_u64();
                cut.cut_erase(block, |i| mask >> i & 1 == 1);
                let what = format!("{name}: erase of block {block} cut at op {k}");
                let outcome = recover_and_use(r, &cut, &host, k as u64, 20);
                match outcome {
                    // The known limit (see `Sweep::trim_cuts`).
                    Err(e)
                        if resurrects_trimmed(&cut, block, &host)
                            && e.contains("recovery cannot finish") =>
                    {
                        sweep.trim_cuts += 1;
                        sweep.trim_cut_example.get_or_insert(format!("{what}: {e}"));
                    }
                    outcome => drop(sweep.add(outcome, &what)),
                }
                sweep.cuts += 1;
            }
            Op::Program { .. } | Op::Copy { .. } | Op::Nvram { .. } => {}
        }
        image.apply(op);
        // A host write is acknowledged at the first operation carrying its id.
        let written = match op {
            Op::Program { oob, origin, .. } => Some((oob.lpn, origin)),
            Op::Nvram { value, .. } => Some((value.lpn, value.origin)),
            _ => None,
        };
        if let Some((lpn, id)) = written.filter(|&(_, id)| id > acked) {
            acked = id;
            host.last[lpn.index()] = Last::Written(id);
        }
        if matches!(op, Op::Nvram { .. }) {
            sweep.nvram_points += 1;
        } else {
            sweep.flash_points += 1;
        }
        let what = format!("{name}: crash after op {k} ({op:?})");
        let repair = sweep.add(recover_and_use(r, &image, &host, k as u64, 20), &what);
        let mut during = image.clone();
        for (j, &op) in repair.iter().enumerate() {
            if let Op::Erase { block } = op {
                let mut cut = during.clone();
                cut.cut_erase(block, |i| i % 2 == 0);
                let what = format!("{what}: recovery's erase {j} cut");
                sweep.add(recover_and_use(r, &cut, &host, j as u64, 10), &what);
                sweep.during_recovery += 1;
            }
            during.apply(op);
            let what = format!("{what}: crash after recovery's op {j} ({op:?})");
            sweep.add(recover_and_use(r, &during, &host, j as u64, 10), &what);
            sweep.during_recovery += 1;
        }
        if let Some(cp) = checkpoint {
            let view = image.checkpoint_view(cp, false);
            let what = format!("{name}: checkpoint view after op {k}");
            sweep.add(recover_and_use(r, &view, &host, k as u64, 20), &what);
            sweep.views += 1;
        }
    }
    sweep
}

#[test]
fn crash_at_every_operation() {
    let mut failed = Vec::new();
    let (mut points, mut trim_cuts) = (0, 0);
    for (name, overrides) in CONFIGS {
        let r = resolve(overrides);
        let start = std::time::Instant::now();
        let sweep = crash_everywhere(name, &r, 3000);
        eprintln!("{name} ({:.1} s): {sweep:?}", start.elapsed().as_secs_f64());
        if sweep.failures > 0 {
            failed.push(*name);
        }
        assert!(sweep.flash_points > 3000 && sweep.cuts > 300 && sweep.views > 2000, "{name}");
        assert!(sweep.sealing > 100, "{name}: {sweep:?}");
        if r.config.ftl.placement != "none" {
            assert!(sweep.completing > 20 && sweep.during_recovery > 100, "{name}: {sweep:?}");
        }
        if r.ram_region_pages() > 0 {
            assert!(sweep.nvram_points > 400 && sweep.restoring > 5000, "{name}: {sweep:?}");
        }
        trim_cuts += sweep.trim_cuts;
        points += sweep.flash_points + sweep.nvram_points + sweep.cuts + sweep.views;
        points += sweep.during_recovery;
    }
    eprintln!("{points} crash states recovered; {trim_cuts} cut erases hit the trim limit");
    assert!(failed.is_empty(), "failures in {failed:?}");
    assert!(trim_cuts < 20, "the trim limit is rare: {trim_cuts}");
}

// ---- hand-worked layouts ------------------------------------------------------------------

/// A device of 8 blocks of 4 pages, 16 logical pages (`none` placement, greedy cleaning,
/// `gc_free_blocks_min` 2) plus `overrides`.
fn hand_config(overrides: &[&str]) -> Resolved {
    let mut all = vec![
        "device.page_size_bytes=512",
        "device.pages_per_block=4",
        "device.blocks=8",
        "device.logical_bytes=8192",
        "wear.endurance_cycles=0",
        "ftl.cleaning=greedy",
    ];
    all.extend_from_slice(overrides);
    Config::from_overrides(&all).unwrap().resolve().unwrap()
}

/// DAC with one flash region and a RAM region of 4 pages (region 1).
const RAM4: &[&str] = &["ftl.placement=dac", "ftl.regions=1", "dac.ram_region_bytes=2048"];

/// `layout[b]` = block b's pages as (lpn, seq), region 0; each page's origin is its seq.
fn hand_image(r: &Resolved, layout: &[&[(u32, u64)]]) -> Image {
    let mut image = Image::with_nvram(r.geometry, r.ram_region_pages());
    let ppb = r.geometry.pages_per_block as usize;
    for (b, pages) in layout.iter().enumerate() {
        for (i, &(lpn, seq)) in pages.iter().enumerate() {
            image.pages[b * ppb + i] = Some(Oob { lpn: Lpn::new(lpn), seq, region: 0 });
            image.origin[b * ppb + i] = seq;
        }
    }
    image
}

/// An NVRAM cell holding `lpn` at `seq`, written `order`-th, with the data of write `origin`.
fn cell(lpn: u32, seq: u64, order: u64, origin: u64) -> Option<NvramCell> {
    Some(NvramCell { lpn: Lpn::new(lpn), seq, order, origin, damaged: false })
}

/// The data a page reads (its origin) and the error the read reported; `None`: unmapped.
fn read(ftl: &mut PageFtl, lpn: u32) -> Option<(u64, bool)> {
    let mut page = vec![0u8; PAGE as usize];
    let mapped = ftl.read_page(Lpn::new(lpn), 0, Some(&mut page));
    let error = ftl.flash_mut().media_mut().take_error().is_some();
    mapped.then(|| (origin_of(&page), error))
}

fn block_oob(ftl: &PageFtl, block: u32) -> Vec<(u32, u64)> {
    ftl.geometry()
        .pages_of(BlockId::new(block))
        .filter_map(|p| ftl.flash().media().oob(p).map(|o| (o.lpn.get(), o.seq)))
        .collect()
}

/// Where `lpn` lives: its physical page number and region.
fn locate(ftl: &PageFtl, lpn: u32) -> Option<(u32, u8)> {
    ftl.locate(Lpn::new(lpn)).map(|(ppn, region)| (ppn.get(), region))
}

/// A cleaning step cut in the middle, every block used: victim block 0 held LPNs 0, 2, 3
/// valid (LPN 1 newer in block 3); the step copied LPN 0 into the last page of the active
/// block 6 (seq 28, closing it), opened the last free block, 7, and copied LPN 2 there (seq
/// 29). No block is free and none is garbage (each holds a valid page), so recovery finishes
/// the step: the page programmed last (LPN 2, seq 29) has its previous copy in block 0, the
/// victim; its remaining valid page, LPN 3, is copied to block 7 (seq 30) and block 0 erased.
const CUT_STEP: &[&[(u32, u64)]] = &[
    &[(0, 1), (1, 2), (2, 3), (3, 4)],
    &[(4, 5), (5, 6), (6, 7), (7, 8)],
    &[(8, 9), (9, 10), (10, 11), (11, 12)],
    &[(1, 13), (12, 14), (13, 15), (14, 16)],
    &[(15, 17), (4, 18), (5, 19), (8, 20)],
    &[(9, 21), (12, 22), (13, 23), (6, 24)],
    &[(14, 25), (15, 26), (9, 27), (0, 28)],
    &[(2, 29)],
];

#[test]
fn cleaning_cut_with_no_free_block_is_finished() {
    let r = hand_config(&[]);
    assert_eq!(r.gc_free_blocks_min, 2);
    let (mut ftl, report, _) = recover(&r, &hand_image(&r, CUT_STEP), 0, false).unwrap();
    ftl.check();
    let expect = FtlRecovery { cleanings_completed: 1, ..FtlRecovery::default() };
    assert_eq!(report, expect);
    assert_eq!(block_oob(&ftl, 7), [(2, 29), (3, 30)]);
    assert_eq!(locate(&ftl, 3), Some((29, 0)));
    assert_eq!(ftl.erase_counts(), [1, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(ftl.free_blocks(), 1);
    assert_eq!(ftl.counters().gc_victims, 1);
    // Every LPN serves its newest copy; the FTL keeps working.
    for (lpn, seq) in [(0, 28), (1, 13), (2, 29), (3, 4), (7, 8), (10, 11), (14, 25)] {
        assert_eq!(read(&mut ftl, lpn), Some((seq, false)), "lpn {lpn}");
    }
    for i in 0..200 {
        ftl.write_page(Lpn::new(i % 16), 0, Some(&payload(1000 + u64::from(i), PAGE as usize)));
    }
    ftl.check();
}

/// The same step cut after its last copy (LPN 3 copied too, seq 30): the victim holds no valid
/// page; it is erased as the step would have done (`erased_blocks`), nothing is copied. Cut
/// during that erase instead (the erase counted, pages 1 and 3 cleared): block 0 is a partly
/// programmed block of region 0 holding garbage, older than block 7: it is sealed (its page 3
/// programmed as garbage, seq 31), then erased (erase count 2).
#[test]
fn cleaning_cut_before_its_erase() {
    let r = hand_config(&[]);
    let mut layout = CUT_STEP.to_vec();
    layout[7] = &[(2, 29), (3, 30)];
    let image = hand_image(&r, &layout);
    let (ftl, report, _) = recover(&r, &image, 0, false).unwrap();
    ftl.check();
    assert_eq!(report, FtlRecovery { erased_blocks: 1, ..FtlRecovery::default() });
    assert_eq!(block_oob(&ftl, 7), [(2, 29), (3, 30)]);
    assert_eq!((ftl.erase_counts()[0], ftl.free_blocks()), (1, 1));

    let mut cut = image.clone();
    cut.cut_erase(BlockId::new(0), |i| i % 2 == 1);
    let (mut ftl, report, track) = recover(&r, &cut, 0, false).unwrap();
    ftl.check();
    let expect = FtlRecovery {
        erased_blocks: 1,
        sealed_blocks: 1,
        sealing_pages: 1,
        ..FtlRecovery::default()
    };
    assert_eq!(report, expect);
    let ops = track.lock().unwrap().ops.clone();
    assert!(
        matches!(
            ops[..],
            [
                Op::Program {
                    ppn,
                    oob: Oob { lpn: nandlab_core::media::GARBAGE_LPN, seq: 31, .. },
                    ..
                },
                Op::Erase { block }
            ] if ppn == Ppn::new(3) && block == BlockId::new(0)
        ),
        "{ops:?}"
    );
    assert_eq!((ftl.erase_counts()[0], ftl.free_blocks()), (2, 1));
    assert_eq!(read(&mut ftl, 3), Some((30, false)));
}

/// With a RAM region: LPN 3's newest copy is in NVRAM (written into RAM at seq 25 with the
/// data of write 99, after its flash copy in the victim, seq 4). Finishing the cut step must
/// not copy that flash copy (a copy at seq 30 would beat the entry): it is no page's current
/// copy, so the victim holds no valid page and is erased; LPN 3 is restored into RAM slot 2,
/// where its entry was found.
#[test]
fn cleaning_cut_with_a_page_superseded_in_nvram() {
    let r = hand_config(RAM4);
    assert_eq!((r.gc_free_blocks_min, r.ram_region_pages()), (2, 4));
    let mut image = hand_image(&r, CUT_STEP);
    image.nvram[2] = [cell(3, 25, 1, 99), None];
    let (mut ftl, report, track) = recover(&r, &image, 0, false).unwrap();
    ftl.check();
    let expect =
        FtlRecovery { erased_blocks: 1, nvram_pages_restored: 1, ..FtlRecovery::default() };
    assert_eq!(report, expect);
    assert_eq!(block_oob(&ftl, 7), [(2, 29)]);
    assert_eq!(locate(&ftl, 3), Some((32 + 2, 1)));
    assert_eq!(read(&mut ftl, 3), Some((99, false)));
    // Restoring in place writes nothing to NVRAM; recovery's only operation is the erase.
    let ops = track.lock().unwrap().ops.clone();
    assert!(matches!(ops[..], [Op::Erase { block }] if block == BlockId::new(0)));
}

/// Two partly programmed blocks in region 0: block 1 (newest page seq 5) stays active, block 0
/// (seq 3) is sealed: its last page programmed as garbage (seq 6). The next write goes to
/// block 1's page 2 with seq 7.
#[test]
fn two_partly_programmed_blocks_in_a_region() {
    let r = hand_config(&[]);
    let image = hand_image(&r, &[&[(0, 1), (1, 2), (2, 3)], &[(3, 4), (4, 5)]]);
    let (mut ftl, report, _) = recover(&r, &image, 0, false).unwrap();
    ftl.check();
    let expect = FtlRecovery { sealed_blocks: 1, sealing_pages: 1, ..FtlRecovery::default() };
    assert_eq!(report, expect);
    assert_eq!(
        ftl.flash().media().oob(Ppn::new(3)),
        Some(Oob { lpn: nandlab_core::media::GARBAGE_LPN, seq: 6, region: 0 })
    );
    assert_eq!(ftl.free_blocks(), 6);
    ftl.write_page(Lpn::new(5), 0, Some(&payload(7, PAGE as usize)));
    assert_eq!(locate(&ftl, 5), Some((6, 0)));
    assert_eq!(ftl.flash().media().oob(Ppn::new(6)).map(|o| o.seq), Some(7));
    ftl.check();
}

/// NVRAM entries against flash copies: LPN 5's entry (seq 7) is older than its flash copy
/// (seq 10): ignored, the flash copy is served. LPN 6's entry has its flash copy's seq (11):
/// written into RAM after that program, so it wins. LPN 7 has two entries of equal seq: the
/// later written (order 5, data of write 71) wins. Each goes back into its own slot (1, 3).
#[test]
fn nvram_entries_older_than_flash_are_ignored() {
    let r = hand_config(RAM4);
    let mut image = hand_image(&r, &[&[(5, 10), (6, 11), (7, 12)]]);
    image.nvram[0] = [cell(5, 7, 1, 77), None];
    image.nvram[1] = [None, cell(6, 11, 2, 88)];
    image.nvram[2] = [cell(7, 12, 3, 70), None];
    image.nvram[3] = [cell(7, 12, 5, 71), cell(9, 1, 4, 90)];
    let (mut ftl, report, track) = recover(&r, &image, 0, false).unwrap();
    ftl.check();
    assert_eq!(report, FtlRecovery { nvram_pages_restored: 2, ..FtlRecovery::default() });
    assert_eq!(locate(&ftl, 5), Some((0, 0)));
    assert_eq!(read(&mut ftl, 5), Some((10, false)));
    assert_eq!(locate(&ftl, 6), Some((32 + 1, 1)));
    assert_eq!(read(&mut ftl, 6), Some((88, false)));
    assert_eq!(locate(&ftl, 7), Some((32 + 3, 1)));
    assert_eq!(read(&mut ftl, 7), Some((71, false)));
    assert_eq!(locate(&ftl, 9), None);
    assert!(track.lock().unwrap().ops.is_empty(), "restoring in place writes nothing");
    // An update of LPN 6 goes to its slot's other cell (slot 1, cell 0) with the next order.
    ftl.write_page(Lpn::new(6), 0, Some(&payload(100, PAGE as usize)));
    let ops = track.lock().unwrap().ops.clone();
    assert!(
        matches!(
            ops[..],
            [Op::Nvram { slot: 1, cell: 0, value: NvramCell { lpn, order: 6, origin: 100, .. } }]
                if lpn == Lpn::new(6)
        ),
        "{ops:?}"
    );
    ftl.check();
}

/// A damaged NVRAM entry newer than the flash copy (LPN 2: flash seq 5, entry seq 20 failing
/// its CRC): LPN 2 stays mapped to RAM and a read reports an error (`take_error`), never the
/// older flash copy; the entry is marked lost in its slot (poisoned) so a later restart says
/// the same. A new write of LPN 2 reads fine again.
#[test]
fn damaged_nvram_entry_reads_as_an_error() {
    let r = hand_config(RAM4);
    let mut image = hand_image(&r, &[&[(1, 4), (2, 5)]]);
    image.nvram[0] =
        [Some(NvramCell { lpn: Lpn::new(2), seq: 20, order: 1, origin: 0, damaged: true }), None];
    let (mut ftl, report, track) = recover(&r, &image, 0, false).unwrap();
    ftl.check();
    assert_eq!(report, FtlRecovery { nvram_pages_restored: 1, ..FtlRecovery::default() });
    assert_eq!(locate(&ftl, 2), Some((32, 1)));
    assert!(matches!(read(&mut ftl, 2), Some((_, true))), "the read reports the loss");
    assert_eq!(read(&mut ftl, 1), Some((4, false)));
    let ops = track.lock().unwrap().ops.clone();
    assert!(
        matches!(
            ops[..],
            [Op::Nvram { slot: 0, cell: 1, value: NvramCell { lpn, seq: 20, damaged: true, .. } }]
                if lpn == Lpn::new(2)
        ),
        "{ops:?}"
    );
    // After another restart the page still reads as an error.
    let (mut again, _, _) = recover(&r, &Image::of(&ftl, &track), 0, false).unwrap();
    assert!(matches!(read(&mut again, 2), Some((_, true))));
    ftl.write_page(Lpn::new(2), 0, Some(&payload(50, PAGE as usize)));
    assert_eq!(read(&mut ftl, 2), Some((50, false)));
    ftl.check();
}

/// `serve.ram_region_battery = "failed"`: the winning entries (LPNs 6 and 7) are dropped and
/// counted as lost; LPN 6 reads its older flash copy, LPN 7 (never on flash) is unmapped.
#[test]
fn failed_battery_drops_the_entries() {
    let r = hand_config(RAM4);
    let mut image = hand_image(&r, &[&[(5, 10), (6, 11)]]);
    image.nvram[0] = [cell(5, 7, 1, 77), None];
    image.nvram[1] = [cell(6, 12, 2, 88), None];
    image.nvram[2] = [cell(7, 12, 3, 70), None];
    let (mut ftl, report, _) = recover(&r, &image, 0, true).unwrap();
    ftl.check();
    assert_eq!(report, FtlRecovery { nvram_pages_lost: 2, ..FtlRecovery::default() });
    assert_eq!(read(&mut ftl, 6), Some((11, false)));
    assert_eq!(read(&mut ftl, 7), None);
    assert_eq!(ftl.ram_region().map(|i| i.used_pages), Some(0));
}
