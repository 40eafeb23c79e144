//! Goal: how every FTL — page-mapped (no placement, DAC, DEB, with and without a RAM
//! region) and the hybrid BAST, SAST and FAST — reacts to the faults of real NAND: failed
//! programs, failed erases, read errors and torn writes (`flash::FaultyMedia`). Each reaction is
//! a typed error (`RequestError::Media` with the fault's I/O error kind) or a documented
//! recovery, and never wrong data returned as good: every read returns an error, the last
//! acknowledged data, or the data of a write that failed (a write that returns an error may or
//! may not have taken effect, as on any disk). The table of reactions is docs/FAULTS.md.
//!
//! Method: a `Device` over `FaultyMedia<Tracked>` (`common/tracked.rs`: every program records
//! the host write id stamped in its payload, and every operation is logged so that the image
//! can be rebuilt and remounted the way a restart reads the store's). Hand-worked cases give
//! exact outcomes ("program #5 fails: the 5th write returns `Media(Other)`, its LPN reads as
//! `InvalidData` until rewritten"); seeded random sessions with each fault at a probability
//! check the rule above on every read, in the session and after a restart from the image.

mod common;

use std::io::ErrorKind;
use std::sync::{Arc, Mutex};

use common::tracked::{origin_of, payload, Image, Op, Track, Tracked};
use nandlab_core::media::{CountingMedia, Fault, FaultKind, FaultyMedia, Injected, Lpn};
use nandlab_core::Prng;
use nandlab_core::{Config, Device, Dispatched, Io, Request, RequestError, Resolved, Submission};

const PAGE: u64 = 512;
/// Logical pages: 8 blocks' worth.
const LPNS: u32 = 64;
/// Simulated time between host requests (DAC's and DEB's time rules see pages of every age).
const STEP_NS: u64 = 20_000_000;

/// A small served device: 14 blocks of 8 pages of 512 bytes, 64 logical pages; hybrid kinds
/// keep 3 log blocks (14 ≥ 8 logical + 3 logs + 2 spare, what a served hybrid drive needs).
fn resolve(overrides: &[&str]) -> Resolved {
    let logical = format!("device.logical_bytes={}", u64::from(LPNS) * PAGE);
    let mut all = vec![
        "device.page_size_bytes=512",
        "device.pages_per_block=8",
        "device.blocks=14",
        &logical,
        "wear.endurance_cycles=0",
    ];
    all.extend_from_slice(overrides);
    let mut r = Config::from_overrides(&all).unwrap().resolve().unwrap();
    r.served = true;
    r
}

/// Every FTL kind, and the page FTL's placements with and without a RAM region.
const CONFIGS: &[(&str, &[&str])] = &[
    ("page", &["ftl.cleaning=greedy"]),
    ("page dac", &["ftl.placement=dac", "ftl.regions=3", "ftl.cleaning=cost-benefit"]),
    (
        "page dac ram",
        &["ftl.placement=dac", "ftl.regions=3", "ftl.cleaning=greedy", "dac.ram_region_bytes=2048"],
    ),
    (
        "page deb",
        &[
            "ftl.placement=deb",
            "ftl.cleaning=greedy",
            "deb.ebr_size_bytes=0",
            "deb.stable_time_intervals_s=[0.2, 0.5, 1.0]",
        ],
    ),
    (
        "page deb ebr",
        &[
            "ftl.placement=deb",
            "ftl.cleaning=cat",
            "deb.ebr_size_bytes=2048",
            "deb.stable_time_intervals_s=[0.2, 0.5, 1.0]",
        ],
    ),
    ("bast", &["ftl.kind=bast", "ftl.log_blocks=3"]),
    (
        "sast",
        &["ftl.kind=sast", "ftl.log_blocks=3", "ftl.group_data_blocks=2", "ftl.group_log_blocks=2"],
    ),
    ("fast", &["ftl.kind=fast", "ftl.log_blocks=3"]),
    // A read-caching page buffer (a failed read must not be cached as the page) and BPLRU,
    // whose block padding reads pages to rewrite them (a failed read must not be rewritten).
    ("page lru buffer", &["buffer.kind=lru", "buffer.size_bytes=4096"]),
    (
        "bast bplru buffer",
        &["ftl.kind=bast", "ftl.log_blocks=3", "buffer.kind=bplru", "buffer.size_bytes=8192"],
    ),
];

/// The configurations whose host writes program flash at once (no RAM region or buffer in
/// front): the n-th host write of a fresh device is its n-th program.
fn direct_configs() -> impl Iterator<Item = (&'static str, &'static [&'static str])> {
    CONFIGS.iter().copied().filter(|(name, _)| {
        !name.ends_with("ram") && !name.ends_with("ebr") && !name.ends_with("buffer")
    })
}

/// The configurations without a RAM buffer in front of the FTL. A power cut loses nothing they
/// acknowledged (a buffer's dirty pages are lost at a cut until a FLUSH writes them back, as on
/// any drive with a volatile write cache: outside what a torn write may break); and what the
/// FTL maps is what the host reads (a buffer serves its pages from RAM).
fn unbuffered() -> impl Iterator<Item = (&'static str, &'static [&'static str])> {
    CONFIGS.iter().copied().filter(|(name, _)| !name.ends_with("buffer"))
}

// ---- the host and its model ------------------------------------------------------------------

/// What a read of one LPN may return: its last acknowledged write (0: never written, reads as
/// zeros), or a write since then that returned an error (it may have taken effect).
#[derive(Clone, Debug, Default)]
struct Expect {
    acked: u64,
    unacked: Vec<u64>,
}

/// A device over `FaultyMedia<Tracked>` and what the host expects of it.
struct Host {
    r: Resolved,
    device: Device,
    track: Arc<Mutex<Track>>,
    log: Arc<Mutex<Vec<Injected>>>,
    expect: Vec<Expect>,
    next_id: u64,
    now_ns: u64,
    /// Reads that returned an error (allowed; counted to show the faults were hit).
    read_errors: u64,
    write_errors: u64,
}

impl Host {
    fn new(r: &Resolved, faults: &[Fault], seed: u64) -> Self {
        let g = r.geometry;
        let nvram = vec![[None; 2]; r.ram_region_pages() as usize];
        let pages = g.physical_pages() as usize;
        let (tracked, track) = Tracked::with_nvram(CountingMedia::new(g), vec![0; pages], nvram);
        let mut media = FaultyMedia::new(tracked, seed);
        for &f in faults {
            media = media.with_fault(f);
        }
        let log = media.log();
        let device = Device::with_media(r, Box::new(media), None).unwrap();
        Self {
            r: r.clone(),
            device,
            track,
            log,
            expect: vec![Expect::default(); LPNS as usize],
            next_id: 1,
            now_ns: 0,
            read_errors: 0,
            write_errors: 0,
        }
    }

    fn tick(&mut self) -> u64 {
        self.now_ns += STEP_NS;
        self.now_ns
    }

    /// Writes `lpn` whole with a payload stamped with a new id; returns the id and the result.
    fn write(&mut self, lpn: u32) -> (u64, Result<(), RequestError>) {
        let id = self.next_id;
        self.next_id += 1;
        let req = Request::write(u64::from(lpn) * PAGE, PAGE).at(self.tick());
        let result = self
            .device
            .dispatch(Submission::new(&req).io(Io::Write(&payload(id, PAGE as usize))))
            .map(Dispatched::completion);
        let e = &mut self.expect[lpn as usize];
        match &result {
            Ok(_) => *e = Expect { acked: id, unacked: Vec::new() },
            Err(RequestError::Media(_)) => {
                e.unacked.push(id);
                self.write_errors += 1;
            }
            Err(other) => panic!("write of LPN {lpn}: {other}"),
        }
        (id, result.map(|_| ()))
    }

    /// Writes the second half of `lpn` (read-modify-write: the page's first bytes, its id,
    /// come from the old content, so a merge into bytes a failed read returned would show as a
    /// wrong id).
    fn write_half(&mut self, lpn: u32) {
        let req = Request::write(u64::from(lpn) * PAGE + PAGE / 2, PAGE / 2).at(self.tick());
        match self
            .device
            .dispatch(Submission::new(&req).io(Io::Write(&[0xFF; PAGE as usize / 2])))
            .map(Dispatched::completion)
        {
            Ok(_) | Err(RequestError::Media(_)) => {}
            Err(other) => panic!("half write of LPN {lpn}: {other}"),
        }
    }

    /// Reads `lpn`: the id its data carries, or the error.
    fn read(&mut self, lpn: u32) -> Result<u64, RequestError> {
        let mut page = vec![0xEE; PAGE as usize];
        let req = Request::read(u64::from(lpn) * PAGE, PAGE).at(self.tick());
        self.device
            .dispatch(Submission::new(&req).io(Io::Read(&mut page)))
            .map(Dispatched::completion)?;
        Ok(origin_of(&page))
    }

    /// Reads `lpn` and checks it against the model: an error, or data the host may see.
    fn check(&mut self, lpn: u32) -> Result<(), String> {
        let got = match self.read(lpn) {
            Ok(id) => id,
            Err(RequestError::Media(_)) => {
                self.read_errors += 1;
                return Ok(());
            }
            Err(other) => return Err(format!("LPN {lpn}: unexpected error {other}")),
        };
        let e = &mut self.expect[lpn as usize];
        if got == e.acked {
            return Ok(());
        }
        if e.unacked.contains(&got) {
            // A failed write took effect: from now on it is what the page holds.
            *e = Expect { acked: got, unacked: Vec::new() };
            return Ok(());
        }
        Err(format!("LPN {lpn} returns write {got} as good; expected {e:?}"))
    }

    fn check_all(&mut self) -> Result<(), String> {
        (0..LPNS).try_for_each(|lpn| self.check(lpn))
    }

    fn injected(&self) -> Vec<Injected> {
        self.log.lock().unwrap().clone()
    }

    /// The image the inner media holds (replayed from its log) and a device recovered from it,
    /// as a restart after a power cut would get. The new device has no faults.
    fn restart(&mut self) -> Result<(), String> {
        let g = self.r.geometry;
        let mut image = Image::with_nvram(g, self.r.ram_region_pages());
        for &op in &self.track.lock().unwrap().ops {
            image.apply(op);
        }
        let (media, track) = image.media();
        self.now_ns += 1_000_000_000;
        self.device = Device::recover(&self.r, media, self.now_ns)
            .map_err(|e| format!("recovery refused the image: {e}"))?;
        self.track = track;
        self.device.check();
        Ok(())
    }
}

fn media_kind(result: &Result<(), RequestError>) -> Option<ErrorKind> {
    match result {
        Err(RequestError::Media(e)) => Some(e.kind()),
        _ => None,
    }
}

fn read_kind(result: Result<u64, RequestError>) -> Result<u64, Option<ErrorKind>> {
    result.map_err(|e| match e {
        RequestError::Media(m) => Some(m.kind()),
        _ => None,
    })
}

/// Writes ids 1..=4 to LPNs 0..=3 (a fresh device programs them as programs #1..=#4: no
/// cleaning, merge or read happens yet).
fn four_writes(h: &mut Host, name: &str) {
    for lpn in 0..4 {
        let (id, result) = h.write(lpn);
        assert_eq!((id, result), (u64::from(lpn) + 1, Ok(())), "{name}");
    }
}

// ---- hand-worked cases ---------------------------------------------------------------------

/// Program #5 fails. The 5th write (LPN 1) returns `Media(Other)`; the FTL has already mapped
/// LPN 1 to the failed page (no FTL checks a program's status), so LPN 1 reads as
/// `Media(InvalidData)` — never as data — until it is written again; the other LPNs are intact.
/// The restart reads the page as the inner media holds it: the failed write's data.
#[test]
fn program_5_fails_every_ftl_returns_the_error_and_reads_of_its_page_fail_until_rewritten() {
    for (name, overrides) in direct_configs() {
        let r = resolve(overrides);
        let mut h = Host::new(&r, &[Fault::at(FaultKind::Program, 5)], 1);
        four_writes(&mut h, name);
        let (id, result) = h.write(1);
        assert_eq!((id, media_kind(&result)), (5, Some(ErrorKind::Other)), "{name}");
        let log = h.injected();
        assert_eq!(log.len(), 1, "{name}");
        assert_eq!((log[0].kind, log[0].index), (FaultKind::Program, 5), "{name}");
        let at = h.device.ftl().locate(Lpn::new(1)).map(|l| l.0.get());
        assert_eq!(at, Some(log[0].target), "{name}");
        assert_eq!(read_kind(h.read(1)), Err(Some(ErrorKind::InvalidData)), "{name}");
        assert_eq!(read_kind(h.read(1)), Err(Some(ErrorKind::InvalidData)), "{name}: lost stays");
        for (lpn, id) in [(0, 1), (2, 3), (3, 4)] {
            assert_eq!(read_kind(h.read(lpn)), Ok(id), "{name}: LPN {lpn}");
        }
        let (id, result) = h.write(1);
        assert_eq!((id, result), (6, Ok(())), "{name}");
        assert_eq!(read_kind(h.read(1)), Ok(6), "{name}");
        h.device.check();
        // Before the rewrite, a restart would have found write 5 (its program reached the
        // media); after it, write 6.
        h.restart().unwrap();
        for (lpn, id) in [(0, 1), (1, 6), (2, 3), (3, 4)] {
            assert_eq!(read_kind(h.read(lpn)), Ok(id), "{name} after restart: LPN {lpn}");
        }
    }
}

/// Read #1 fails: that read returns `Media(Other)`, the next read of the same page returns its
/// data (the page is intact: an uncorrectable read is not a lost page).
#[test]
fn read_1_fails_once_and_the_retry_returns_the_data() {
    for (name, overrides) in direct_configs() {
        let r = resolve(overrides);
        let mut h = Host::new(&r, &[Fault::at(FaultKind::Read, 1)], 1);
        four_writes(&mut h, name);
        assert_eq!(read_kind(h.read(2)), Err(Some(ErrorKind::Other)), "{name}");
        assert_eq!(read_kind(h.read(2)), Ok(3), "{name}");
        assert_eq!(h.injected()[0].kind, FaultKind::Read, "{name}");
    }
}

/// A read fault under a partial-page write: the device must not merge the new half into the
/// bytes the failed read returned (that would store zeros as the page's first half, as good
/// data). The write returns the error and the page keeps its old content.
#[test]
fn a_failed_read_modify_write_read_leaves_the_page_as_it_was() {
    for (name, overrides) in direct_configs() {
        let r = resolve(overrides);
        let mut h = Host::new(&r, &[Fault::at(FaultKind::Read, 1)], 1);
        four_writes(&mut h, name);
        let req = Request::write(2 * PAGE + PAGE / 2, PAGE / 2).at(h.tick());
        let e = h
            .device
            .dispatch(Submission::new(&req).io(Io::Write(&[0xFF; PAGE as usize / 2])))
            .map(Dispatched::completion)
            .unwrap_err();
        assert!(matches!(&e, RequestError::Media(m) if m.kind() == ErrorKind::Other), "{e}");
        let mut page = vec![0u8; PAGE as usize];
        let req = Request::read(2 * PAGE, PAGE).at(h.tick());
        h.device
            .dispatch(Submission::new(&req).io(Io::Read(&mut page)))
            .map(Dispatched::completion)
            .unwrap();
        assert_eq!(origin_of(&page), 3, "{name}");
        assert!(page[PAGE as usize / 2..].iter().all(|&b| b == 0), "{name}: half not merged");
    }
}

/// Erase #1 fails (block B). The request during which it happened returns `Media(Other)`.
/// The FTL does not retire B: until B is erased again, every page programmed into it is lost —
/// a write whose page lands there returns an error, and every LPN mapped into B reads as
/// `Media(InvalidData)`; writes elsewhere succeed and read back.
#[test]
fn erase_1_fails_and_writes_into_that_block_fail_until_it_is_erased_again() {
    for (name, overrides) in unbuffered() {
        let r = resolve(overrides);
        let mut h = Host::new(&r, &[Fault::at(FaultKind::Erase, 1)], 1);
        let mut rng = Prng::new(7);
        let mut weak: Option<u32> = None;
        let mut lost_reads = 0;
        for step in 0..1500 {
            let lpn = if rng.below(4) < 3 { rng.below(12) } else { rng.below(u64::from(LPNS)) };
            let lpn = lpn as u32;
            let ops_before = h.track.lock().unwrap().ops.len();
            let (_, result) = h.write(lpn);
            let Some(b) = weak else {
                if let Some(f) = h.injected().first() {
                    assert_eq!(media_kind(&result), Some(ErrorKind::Other), "{name}");
                    assert_eq!(f.kind, FaultKind::Erase);
                    weak = Some(f.target);
                }
                continue;
            };
            // Erased again (by the cleaner or a merge) during this write: B is good again.
            let erased = h.track.lock().unwrap().ops[ops_before..]
                .iter()
                .any(|op| matches!(op, Op::Erase { block } if block.get() == b));
            if erased {
                break;
            }
            let in_b = |h: &Host, l: u32| {
                let ftl = h.device.ftl();
                ftl.locate(Lpn::new(l)).is_some_and(|(p, _)| ftl.geometry().block_of(p).get() == b)
            };
            assert!(
                result.is_err() || !in_b(&h, lpn),
                "{name}: step {step}: a write into {b} succeeded"
            );
            for l in 0..LPNS {
                if in_b(&h, l) {
                    lost_reads += 1;
                    let got = read_kind(h.read(l));
                    assert_eq!(got, Err(Some(ErrorKind::InvalidData)), "{name}: step {step}");
                }
            }
            if result.is_ok() {
                h.check(lpn).unwrap_or_else(|e| panic!("{name}: {e}"));
            }
        }
        assert!(weak.is_some() || !h.injected().is_empty(), "{name}: no erase failed");
        assert!(lost_reads > 0, "{name}: nothing was programmed into the block whose erase failed");
        h.check_all().unwrap_or_else(|e| panic!("{name}: {e}"));
        h.device.check();
    }
}

/// A torn write at program #5 (the power is cut while the 5th write programs its page). That
/// write returns `Media(Other)`, and so does every request after it (the drive is gone). After
/// the restart LPN 1 reads its previous data (write 2: the torn page is garbage), the other
/// LPNs theirs, and the device works again.
#[test]
fn a_torn_5th_write_comes_back_as_the_previous_copy_after_the_restart() {
    for (name, overrides) in direct_configs() {
        let r = resolve(overrides);
        let mut h = Host::new(&r, &[Fault::at(FaultKind::TornWrite, 5)], 1);
        four_writes(&mut h, name);
        let (id, result) = h.write(1);
        assert_eq!((id, media_kind(&result)), (5, Some(ErrorKind::Other)), "{name}");
        assert_eq!(h.injected()[0].kind, FaultKind::TornWrite, "{name}");
        let (_, after) = h.write(2);
        assert_eq!(media_kind(&after), Some(ErrorKind::Other), "{name}: the power is off");
        assert!(h.read(0).is_err(), "{name}: reads fail too");
        assert!(h.device.sync().is_err(), "{name}");
        h.restart().unwrap_or_else(|e| panic!("{name}: {e}"));
        for (lpn, id) in [(0, 1), (1, 2), (2, 3), (3, 4)] {
            assert_eq!(read_kind(h.read(lpn)), Ok(id), "{name} after restart: LPN {lpn}");
        }
        let (id, result) = h.write(1);
        assert_eq!(result, Ok(()), "{name}");
        assert_eq!(read_kind(h.read(1)), Ok(id), "{name}");
        h.device.check();
    }
}

// ---- seeded random sessions ----------------------------------------------------------------

/// Skewed host work: 3/4 of the writes to 12 hot LPNs, some second-half writes, reads checked
/// against the model.
fn work(h: &mut Host, rng: &mut Prng, steps: u32) -> Result<(), String> {
    for _ in 0..steps {
        let lpn = if rng.below(4) < 3 { rng.below(12) } else { rng.below(u64::from(LPNS)) } as u32;
        match rng.below(10) {
            0..=5 => {
                let _ = h.write(lpn);
            }
            6 => h.write_half(lpn),
            _ => h.check(lpn)?,
        }
    }
    Ok(())
}

/// One session with `faults`: host work checked read by read, every LPN read back, then a
/// restart from the image and every LPN read back again (with no fault left: no errors). After
/// a torn write the host stops (every request fails) and the restart must give every LPN its
/// last acknowledged data exactly (nothing that failed reached the media after the cut).
fn session(name: &str, faults: &[Fault], seed: u64) -> (u64, u64, usize) {
    let r = resolve(CONFIGS.iter().find(|c| c.0 == name).expect("a config").1);
    let mut h = Host::new(&r, faults, seed);
    let mut rng = Prng::for_stream(seed, "host");
    let fail = |e: String| -> ! { panic!("{name}, seed {seed}, faults {faults:?}: {e}") };
    work(&mut h, &mut rng, 800).unwrap_or_else(|e| fail(e));
    let torn = h.injected().iter().any(|i| i.kind == FaultKind::TornWrite);
    if !torn {
        h.check_all().unwrap_or_else(|e| fail(e));
        h.device.check();
        // A clean stop: the buffer's and the RAM region's pages are written back (this may
        // hit faults too: the failures are reported, the data stays readable or an error).
        let _ = h.device.shutdown();
    }
    let counts = (h.read_errors, h.write_errors, h.injected().len());
    h.restart().unwrap_or_else(|e| fail(e));
    if torn {
        for e in &mut h.expect {
            e.unacked.clear();
        }
    }
    let errors_before = h.read_errors;
    h.check_all().unwrap_or_else(|e| fail(format!("after restart: {e}")));
    assert_eq!(h.read_errors, errors_before, "{name}: a restarted image reads without errors");
    work(&mut h, &mut rng, 200).unwrap_or_else(|e| fail(format!("after restart: {e}")));
    h.check_all().unwrap_or_else(|e| fail(format!("after restart: {e}")));
    h.device.check();
    counts
}

fn sweep(faults: &[Fault], seeds: u64) {
    for &(name, _) in CONFIGS {
        let (mut hit, mut read_errors, mut write_errors, mut injected) = (0, 0, 0, 0);
        for seed in 1..=seeds {
            let (r, w, i) = session(name, faults, seed);
            hit += usize::from(i > 0);
            (read_errors, write_errors, injected) =
                (read_errors + r, write_errors + w, injected + i);
        }
        eprintln!(
            "{name:>13}: {injected:>3} faults in {hit}/{seeds} sessions; {write_errors:>3} \
             writes and {read_errors:>3} reads returned an error"
        );
        assert!(hit > 0, "{name}: no fault fired in {seeds} sessions");
    }
}

#[test]
fn random_failed_programs_never_return_wrong_data() {
    sweep(&[Fault::with_probability(FaultKind::Program, 0.02)], 6);
}

#[test]
fn random_failed_erases_never_return_wrong_data() {
    sweep(&[Fault::with_probability(FaultKind::Erase, 0.1)], 6);
}

#[test]
fn random_read_errors_never_return_wrong_data() {
    sweep(&[Fault::with_probability(FaultKind::Read, 0.05)], 6);
}

/// Torn writes at programs spread over the session (a probability would cut most sessions
/// early: the first tear ends one).
#[test]
fn random_torn_writes_lose_nothing_acknowledged() {
    for (name, _) in unbuffered() {
        for seed in 1..=24u64 {
            let at = 10 + Prng::for_stream(seed, "tear").below(400);
            let (_, _, injected) = session(name, &[Fault::at(FaultKind::TornWrite, at)], seed);
            assert_eq!(injected, 1, "{name}: seed {seed}: the tear at program #{at} fired");
        }
    }
}

#[test]
fn all_faults_together_never_return_wrong_data() {
    let faults = [
        Fault::with_probability(FaultKind::Program, 0.01),
        Fault::with_probability(FaultKind::Erase, 0.05),
        Fault::with_probability(FaultKind::Read, 0.02),
    ];
    sweep(&faults, 6);
}
