//! Goal: no single damaged byte, and no single lost 4 KiB page, of an image's metadata makes a
//! restart serve an older version of a page (or zeros, or anything else it does not hold) as
//! good, or panic: each gives a repaired (or unaffected) image, a clear refusal, or an error for
//! exactly the pages whose data cannot be trusted — and a lost page of metadata is always
//! repaired, since no page holds two copies of one record.
//! Method: small images (DEB placement, so the NVRAM area holds RAM-region pages; FAST, whose
//! data blocks have holes; DAC with a RAM region on more blocks, so every area spans several
//! pages; two checkpoints, the newer one followed by more writes) whose every page content is
//! known, left by a crash (no shutdown) or by a clean stop. Byte flips: for each byte of the
//! metadata areas (all of them with `NANDLAB_DAMAGE_FLIPS=all`, else a seeded sample), flip it in
//! a fresh copy. Lost pages: every 4 KiB page of every metadata area, zeroed and, separately,
//! filled with random bytes (NVRAM and data pages too with `NANDLAB_DAMAGE_PAGES=all`, else a
//! sample of them). Each damaged copy is mounted (full scan and from the checkpoint), every page
//! read, and the outcome classified. The suite asserts wrong = 0 and panic = 0, and for lost
//! metadata pages refused = 0 and EIO = 0; the acceptance run prints the counts
//! (`experiments/serve/damage_matrix.sh`). Plus crafted damage: erase counts with valid CRCs, a
//! truncated file, a changed placement.

use std::os::unix::fs::FileExt;
use std::panic::AssertUnwindSafe;
use std::path::Path;

use nandlab_core::{Config, Device, Dispatched, Io, Request, Resolved, Submission};
use nandlab_store::{FileMedia, Mount};

use nandlab_testkit::Scratch;

struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 =
            self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
}

/// The images damaged: the page FTL with DEB (NVRAM in use), FAST (hybrid data blocks with
/// never-written holes, log blocks), and DAC with a RAM region on 160 blocks (every area spans
/// several pages: 10 of OOB records a copy).
const IMAGES: [&[&str]; 3] = [
    &["ftl.placement=deb", "deb.ebr_size_bytes=65536", "ftl.cleaning=cat"],
    &["ftl.kind=fast", "ftl.log_blocks=4", "device.utilization=0.6"],
    &[
        "ftl.placement=dac",
        "ftl.regions=3",
        "dac.ram_region_bytes=32768",
        "device.blocks=160",
        "ftl.cleaning=cost-benefit",
    ],
];

/// How the pristine image was left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stop {
    /// No shutdown: the image as a `kill -9` leaves it (every write synced, no stop record).
    Crash,
    /// Shutdown, a checkpoint and the clean-stop record, as `nandlab serve` stops on SIGTERM.
    Clean,
}

fn resolved_with(extra: &[&str]) -> Resolved {
    let mut o = vec![
        "device.blocks=24",
        "device.pages_per_block=16",
        "device.utilization=0.7",
        "device.page_size_bytes=4096",
    ];
    // Later settings win: an image's own block count replaces the default.
    o.retain(|k| !extra.iter().any(|e| e.split('=').next() == k.split('=').next()));
    o.extend_from_slice(extra);
    let mut r = Config::from_overrides(&o).unwrap().resolve().unwrap();
    r.served = true;
    r
}

fn resolved() -> Resolved {
    resolved_with(IMAGES[0])
}

/// A scratch directory of the caller's own, removed when it drops.
fn dir() -> Scratch {
    Scratch::new("nandlab-damage")
}

fn page_of(lpn: u64, v: u64) -> Vec<u8> {
    let mut p = Vec::with_capacity(4096);
    while p.len() < 4096 {
        p.extend_from_slice(&lpn.to_le_bytes());
        p.extend_from_slice(&v.to_le_bytes());
    }
    p
}

/// Builds the pristine image; returns its bytes and every page's expected content version.
fn pristine(r: &Resolved, path: &Path, stop: Stop) -> (Vec<u8>, Vec<u64>) {
    let lpns = r.geometry.logical_pages;
    let mut expected = vec![0u64; lpns as usize];
    let mut rng = Lcg(42);
    {
        let media = FileMedia::create(path, r).unwrap();
        let mut d = Device::with_media(r, Box::new(media), None).unwrap();
        // Enough writes for the cleaner to run on every image (1,500 on the small ones).
        let writes = (lpns * 3).max(1500);
        for i in 1..=writes {
            // Skewed, so that DEB keeps hot pages in its EBR.
            let lpn = if rng.next().is_multiple_of(4) {
                rng.next() % lpns
            } else {
                rng.next() % (lpns / 8)
            };
            let req = Request::write(lpn * 4096, 4096);
            d.dispatch(Submission::new(&req).io(Io::Write(&page_of(lpn, i))))
                .map(Dispatched::completion)
                .unwrap();
            expected[lpn as usize] = i;
            if i == writes * 2 / 5 || i == writes * 11 / 15 {
                d.checkpoint().unwrap();
            }
        }
        d.sync().unwrap();
        if let Some(ram) = d.metrics().ram_region {
            assert!(ram.used_pages > 0, "the EBR holds pages");
        }
        assert!(d.metrics().erases > 0, "the cleaner ran");
        if stop == Stop::Clean {
            d.shutdown().unwrap();
            d.checkpoint().unwrap();
            d.record_clean_stop().unwrap();
        }
    }
    (std::fs::read(path).unwrap(), expected)
}

#[derive(Debug, Default, Clone, Copy)]
struct Counts {
    unaffected: u64,
    repaired: u64,
    refused: u64,
    eio: u64,
    wrong: u64,
    panic: u64,
}

/// Mounts `path` and reads every page: the outcome's class.
fn classify(r: &Resolved, path: &Path, mount: Mount, expected: &[u64], c: &mut Counts) {
    let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| {
        let (media, report) = match FileMedia::open(path, r, mount) {
            Ok(x) => x,
            Err(_) => return "refused",
        };
        let mut d = match Device::recover(r, Box::new(media), 1_000_000_000_000) {
            Ok(d) => d,
            Err(_) => return "refused",
        };
        let (mut eio, mut wrong) = (0, 0);
        let mut buf = vec![0u8; 4096];
        for (lpn, &v) in expected.iter().enumerate() {
            let req = Request::read(lpn as u64 * 4096, 4096);
            match d
                .dispatch(Submission::new(&req).io(Io::Read(&mut buf)))
                .map(Dispatched::completion)
            {
                Err(_) => eio += 1,
                Ok(_) if v == 0 && buf.iter().all(|&b| b == 0) => {}
                Ok(_) if v != 0 && buf == page_of(lpn as u64, v) => {}
                Ok(_) => wrong += 1,
            }
        }
        let touched = report != report_baseline(&report) || d.recovery().sealed_blocks > 0;
        match (wrong, eio, touched) {
            (0, 0, false) => "unaffected",
            (0, 0, true) => "repaired",
            (0, _, _) => "eio",
            _ => "wrong",
        }
    }));
    match outcome {
        Ok("unaffected") => c.unaffected += 1,
        Ok("repaired") => c.repaired += 1,
        Ok("refused") => c.refused += 1,
        Ok("eio") => c.eio += 1,
        Ok(_) => c.wrong += 1,
        Err(_) => c.panic += 1,
    }
}

/// The report fields that say nothing about damage.
fn report_baseline(r: &nandlab_store::MountReport) -> nandlab_store::MountReport {
    nandlab_store::MountReport {
        from_checkpoint: r.from_checkpoint,
        checkpoint_generation: r.checkpoint_generation,
        blocks_scanned: r.blocks_scanned,
        clean_stop: r.clean_stop,
        ..Default::default()
    }
}

/// The image's areas (`nandlab_store::image_areas`, whole pages), by name.
fn areas(path: &Path) -> Vec<nandlab_store::ImageArea> {
    nandlab_store::image_areas(&nandlab_store::read_image_info(path).unwrap())
}

/// Areas holding payloads, not metadata: their damage is an error for the pages they hold.
fn is_payload(area: &str) -> bool {
    area == "page data" || area == "NVRAM pages"
}

fn damage_matrix(r: &Resolved, stop: Stop, sample: Option<usize>) -> Vec<(String, Counts)> {
    let r = r.clone();
    let dir = dir();
    let base = dir.join(format!("pristine-{}.img", r.config.ftl.kind));
    let (image, expected) = pristine(&r, &base, stop);
    let work = dir.join(format!("damaged-{}.img", r.config.ftl.kind));
    std::fs::write(&work, &image).unwrap();
    let file = std::fs::OpenOptions::new().write(true).open(&work).unwrap();
    let mut rng = Lcg(7);
    let mut table = Vec::new();
    // Silence the messages of panics caught below (each is counted).
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    for area in areas(&base).into_iter().filter(|a| !is_payload(a.name)) {
        let (name, range) = (area.name, area.bytes);
        let mut positions: Vec<u64> = range.collect();
        if let Some(n) = sample {
            // A seeded sample, spread over the whole area.
            let keep = n.min(positions.len());
            for i in 0..keep {
                let j = i + (rng.next() as usize) % (positions.len() - i);
                positions.swap(i, j);
            }
            positions.truncate(keep);
        }
        let mut counts = Counts::default();
        for &at in &positions {
            let flip = 1 + (rng.next() % 255) as u8;
            for mount in [Mount::Scan, Mount::Checkpoint] {
                // Fresh copy each time: a mount writes (holder record, sealing, NVRAM).
                file.write_all_at(&image, 0).unwrap();
                file.write_all_at(&[image[at as usize] ^ flip], at).unwrap();
                classify(&r, &work, mount, &expected, &mut counts);
            }
        }
        table.push((name.to_string(), counts));
    }
    std::panic::set_hook(hook);
    let _ = std::fs::remove_file(&base);
    let _ = std::fs::remove_file(&work);
    table
}

fn print(table: &[(String, Counts)]) -> Counts {
    let mut total = Counts::default();
    eprintln!(
        "{:<28} {:>10} {:>9} {:>8} {:>6} {:>6} {:>6}",
        "area (x2 mounts)", "unaffected", "repaired", "refused", "EIO", "wrong", "panic"
    );
    for (name, c) in table {
        eprintln!(
            "{name:<28} {:>10} {:>9} {:>8} {:>6} {:>6} {:>6}",
            c.unaffected, c.repaired, c.refused, c.eio, c.wrong, c.panic
        );
        total.unaffected += c.unaffected;
        total.repaired += c.repaired;
        total.refused += c.refused;
        total.eio += c.eio;
        total.wrong += c.wrong;
        total.panic += c.panic;
    }
    eprintln!(
        "{:<28} {:>10} {:>9} {:>8} {:>6} {:>6} {:>6}",
        "total",
        total.unaffected,
        total.repaired,
        total.refused,
        total.eio,
        total.wrong,
        total.panic
    );
    total
}

#[test]
fn single_byte_damage_never_serves_an_older_version_or_panics() {
    let sample = match std::env::var("NANDLAB_DAMAGE_FLIPS").ok().as_deref() {
        Some("all") => None,
        Some(n) => Some(n.parse().expect("NANDLAB_DAMAGE_FLIPS: a number or all")),
        None => Some(60),
    };
    for extra in IMAGES {
        for stop in [Stop::Crash, Stop::Clean] {
            let r = resolved_with(extra);
            eprintln!("image: {extra:?}, {stop:?}");
            let table = damage_matrix(&r, stop, sample);
            let total = print(&table);
            assert_eq!((total.wrong, total.panic), (0, 0), "{table:#?}");
            // Mirrored copies repair metadata damage; only a superblock or checkpoint damaged
            // so that no copy survives can be refused, and one byte cannot do that.
            assert_eq!(total.refused, 0, "{table:#?}");
            assert!(total.repaired > 0);
        }
    }
}

/// What a lost page holds.
#[derive(Clone, Copy, Debug)]
enum Fill {
    Zeros,
    Random,
}

/// Every 4 KiB page of every metadata area, zeroed and (separately) filled with random bytes,
/// one page at a time, after a crash and after a clean stop, each mounted both ways. Payload
/// areas (page data, NVRAM pages) are sampled unless `NANDLAB_DAMAGE_PAGES=all`.
fn lost_page_matrix(r: &Resolved, stop: Stop, all_pages: bool) -> Vec<(String, Counts)> {
    let dir = dir();
    let base = dir.join(format!("pristine-pages-{}.img", r.config.ftl.kind));
    let (image, expected) = pristine(r, &base, stop);
    let work = dir.join(format!("damaged-pages-{}.img", r.config.ftl.kind));
    std::fs::write(&work, &image).unwrap();
    let file = std::fs::OpenOptions::new().write(true).open(&work).unwrap();
    let mut rng = Lcg(11);
    let mut table = Vec::new();
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    for area in areas(&base) {
        let pages: Vec<u64> = area.bytes.clone().step_by(4096).collect();
        let pages: Vec<u64> = if is_payload(area.name) && !all_pages {
            // Every 16th page: payload damage is an error for the pages it holds.
            pages.into_iter().step_by(16).collect()
        } else {
            pages
        };
        let mut counts = Counts::default();
        for &at in &pages {
            for fill in [Fill::Zeros, Fill::Random] {
                let lost: Vec<u8> = match fill {
                    Fill::Zeros => vec![0; 4096],
                    Fill::Random => (0..4096).map(|_| rng.next() as u8).collect(),
                };
                for mount in [Mount::Scan, Mount::Checkpoint] {
                    file.write_all_at(&image, 0).unwrap();
                    file.write_all_at(&lost, at).unwrap();
                    classify(r, &work, mount, &expected, &mut counts);
                }
            }
        }
        table.push((area.name.to_string(), counts));
    }
    std::panic::set_hook(hook);
    let _ = std::fs::remove_file(&base);
    let _ = std::fs::remove_file(&work);
    table
}

#[test]
fn a_lost_page_of_metadata_is_always_repaired_and_never_serves_wrong_data() {
    let all = std::env::var("NANDLAB_DAMAGE_PAGES").is_ok_and(|v| v == "all");
    for extra in IMAGES {
        for stop in [Stop::Crash, Stop::Clean] {
            let r = resolved_with(extra);
            eprintln!("image: {extra:?}, {stop:?}: lost pages (zeroed, random), x2 mounts");
            let table = lost_page_matrix(&r, stop, all);
            let total = print(&table);
            assert_eq!((total.wrong, total.panic), (0, 0), "{table:#?}");
            for (area, c) in &table {
                if !is_payload(area) {
                    // No page holds two copies of a record: the other copy repairs it.
                    assert_eq!((c.refused, c.eio), (0, 0), "{area}: {c:?}");
                }
            }
        }
    }
}

fn area_start(path: &Path, name: &str) -> u64 {
    areas(path).into_iter().find(|a| a.name == name).unwrap().bytes.start
}

/// Writes `copy` as both copies of every block's header.
fn write_headers(f: &std::fs::File, path: &Path, r: &Resolved, copy: &[u8; 16]) {
    for name in ["block headers A", "block headers B"] {
        let at = area_start(path, name);
        for b in 0..u64::from(r.geometry.blocks) {
            f.write_all_at(copy, at + b * 16).unwrap();
        }
    }
}

fn crafted(r: &Resolved, what: &str, f: impl FnOnce(&std::fs::File, &Path, &Resolved)) -> String {
    let dir = dir();
    let path = dir.join(format!("crafted-{what}.img"));
    let (image, _) = pristine(r, &path, Stop::Crash);
    std::fs::write(&path, &image).unwrap();
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    f(&file, &path, r);
    drop(file);
    let e = FileMedia::open(&path, r, Mount::Scan).err().map(|e| e.to_string());
    let _ = std::fs::remove_file(&path);
    e.unwrap_or_else(|| panic!("{what}: the mount should have been refused"))
}

/// Damage that keeps every CRC valid, and damage to the file's size, is refused with a
/// message saying what is wrong.
#[test]
fn crafted_damage_is_refused_with_a_reason() {
    let r = resolved();
    let e = crafted(&r, "counts", |f, path, r| {
        // Every block header: erase count 0xFFFFFFFF with valid CRCs in both copies.
        let mut copy = [0u8; 16];
        copy[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        let crc = crc32fast::hash(&copy[..12]);
        copy[12..].copy_from_slice(&crc.to_le_bytes());
        write_headers(f, path, r, &copy);
    });
    assert!(e.contains("4294967295 erases"), "{e}");
    let e = crafted(&r, "truncated", |f, _, _| f.set_len(1 << 20).unwrap());
    assert!(e.contains("truncated"), "{e}");
    let e = crafted(&r, "oob-lpn", |f, path, _| {
        // A record naming a page past the device, with valid CRCs in both copies.
        let mut copy = [0u8; 32];
        copy[0] = 0x5A;
        copy[4..8].copy_from_slice(&(u32::MAX - 7).to_le_bytes());
        copy[8..16].copy_from_slice(&1u64.to_le_bytes());
        let crc = crc32fast::hash(&copy[..28]);
        copy[28..].copy_from_slice(&crc.to_le_bytes());
        for name in ["OOB records A", "OOB records B"] {
            f.write_all_at(&copy, area_start(path, name)).unwrap();
        }
    });
    assert!(e.contains("page 0 of block 0") || e.contains("unreadable"), "{e}");
}

/// Plausible but extreme wear with valid CRCs (every block past its rated endurance): the mount
/// succeeds, writes fail with the worn-out error, reads still work — no panic, no hang.
#[test]
fn an_image_worn_past_its_rating_refuses_writes_without_panicking() {
    let r = resolved();
    let dir = dir();
    let path = dir.join("worn.img");
    let (image, expected) = pristine(&r, &path, Stop::Crash);
    std::fs::write(&path, &image).unwrap();
    let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    let mut copy = [0u8; 16];
    copy[..4].copy_from_slice(&200_000u32.to_le_bytes());
    copy[4..8].copy_from_slice(&1u32.to_le_bytes());
    let crc = crc32fast::hash(&copy[..12]);
    copy[12..].copy_from_slice(&crc.to_le_bytes());
    write_headers(&f, &path, &r, &copy);
    drop(f);
    let (media, _) = FileMedia::open(&path, &r, Mount::Scan).unwrap();
    let mut d = Device::recover(&r, Box::new(media), 1_000_000_000_000).unwrap();
    let mut buf = vec![0u8; 4096];
    for (lpn, &v) in expected.iter().enumerate().filter(|(_, &v)| v != 0) {
        d.dispatch(Submission::new(&Request::read(lpn as u64 * 4096, 4096)).io(Io::Read(&mut buf)))
            .map(Dispatched::completion)
            .unwrap();
        assert!(buf == page_of(lpn as u64, v), "LPN {lpn}");
    }
    let mut worn_out = 0;
    for i in 0..3000u64 {
        let lpn = i % r.geometry.logical_pages;
        match d
            .dispatch(
                Submission::new(&Request::write(lpn * 4096, 4096)).io(Io::Write(&page_of(lpn, 9))),
            )
            .map(Dispatched::completion)
        {
            Ok(_) => {}
            Err(nandlab_core::RequestError::WornOut { .. }) => worn_out += 1,
            Err(e) => panic!("{e}"),
        }
    }
    assert!(worn_out > 0, "a flash past its rating must end up refusing writes");
    let _ = std::fs::remove_file(&path);
}
