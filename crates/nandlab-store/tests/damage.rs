//! Goal: no single damaged byte of an image's metadata makes a restart serve an older version
//! of a page or panic: each flip gives a repaired (or unaffected) image, a clear refusal, or an
//! error for exactly the pages whose data cannot be trusted.
//! Method: a small image (DEB placement, so the NVRAM area holds RAM-region pages; two
//! checkpoints, the newer one followed by more writes; a "crash": no shutdown) whose every page
//! content is known. For each byte of the superblock copies, block headers, OOB records,
//! checkpoint slots and NVRAM cell headers (all of them with `NANDLAB_DAMAGE_FLIPS=all`, else a
//! seeded sample), flip it in a fresh copy, mount (full scan and from the checkpoint), read every
//! page, and classify. The suite asserts wrong = 0 and panic = 0; the acceptance run prints the
//! counts (`experiments/serve/damage_matrix.sh`). Plus crafted damage: erase counts with valid
//! CRCs, a truncated file, a changed placement.

use std::os::unix::fs::FileExt;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};

use nandlab_core::{Config, Device, Io, Request, Resolved};
use nandlab_store::{FileMedia, Mount};

struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 =
            self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
}

/// The images damaged: the page FTL with DEB (NVRAM in use), and FAST (hybrid data blocks
/// with never-written holes, log blocks).
const IMAGES: [&[&str]; 2] = [
    &["ftl.placement=deb", "deb.ebr_size_bytes=65536", "ftl.cleaning=cat"],
    &["ftl.kind=fast", "ftl.log_blocks=4", "device.utilization=0.6"],
];

fn resolved_with(extra: &[&str]) -> Resolved {
    let mut o = vec![
        "device.blocks=24",
        "device.pages_per_block=16",
        "device.utilization=0.7",
        "device.page_size_bytes=4096",
    ];
    o.extend_from_slice(extra);
    let mut r = Config::from_overrides(&o).unwrap().resolve().unwrap();
    r.served = true;
    r
}

fn resolved() -> Resolved {
    resolved_with(IMAGES[0])
}

fn dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("nandlab-damage-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
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
fn pristine(r: &Resolved, path: &Path) -> (Vec<u8>, Vec<u64>) {
    let lpns = r.geometry.logical_pages;
    let mut expected = vec![0u64; lpns as usize];
    let mut rng = Lcg(42);
    {
        let media = FileMedia::create(path, r).unwrap();
        let mut d = Device::with_media(r, Box::new(media), None).unwrap();
        for i in 1..=1500u64 {
            // Skewed, so that DEB keeps hot pages in its EBR.
            let lpn = if rng.next().is_multiple_of(4) {
                rng.next() % lpns
            } else {
                rng.next() % (lpns / 8)
            };
            let req = Request::write(lpn * 4096, 4096);
            d.submit_io(&req, Io::Write(&page_of(lpn, i))).unwrap();
            expected[lpn as usize] = i;
            if i == 600 || i == 1100 {
                d.checkpoint().unwrap();
            }
        }
        d.sync().unwrap();
        if let Some(ram) = d.metrics().ram_region {
            assert!(ram.used_pages > 0, "the EBR holds pages");
        }
        assert!(d.metrics().erases > 0, "the cleaner ran");
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
            match d.submit_io(&req, Io::Read(&mut buf)) {
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
        ..Default::default()
    }
}

/// Byte ranges of the image's metadata areas, by name (format 2; see docs/IMAGE_FORMAT.md).
fn areas(r: &Resolved) -> Vec<(&'static str, std::ops::Range<u64>)> {
    let g = r.geometry;
    let phys = g.physical_pages();
    let headers = 4096;
    let oob = (headers + u64::from(g.blocks) * 32).next_multiple_of(4096);
    let data = (oob + phys * 64).next_multiple_of(4096);
    let checkpoints = data + phys * 4096;
    let slot = (4096 + u64::from(g.blocks) * 20 + 4 + g.logical_pages * 4).next_multiple_of(4096);
    let slot_used = 4096 + u64::from(g.blocks) * 20 + 4 + g.logical_pages * 4;
    let nvram = checkpoints + 2 * slot;
    let nv_pages = u64::from(r.ram_region_pages());
    vec![
        ("superblock", 0..128),
        ("superblock copy", 1024..1152),
        ("holder record", 2048..2144),
        ("block headers", headers..headers + u64::from(g.blocks) * 32),
        ("OOB records", oob..oob + phys * 64),
        ("checkpoint slot 0 header", checkpoints..checkpoints + 64),
        ("checkpoint slot 0 payload", checkpoints + 4096..checkpoints + slot_used),
        ("checkpoint slot 1 header", checkpoints + slot..checkpoints + slot + 64),
        ("checkpoint slot 1 payload", checkpoints + slot + 4096..checkpoints + slot + slot_used),
        ("NVRAM cell headers", nvram..nvram + 2 * nv_pages * 64),
    ]
}

fn damage_matrix(r: &Resolved, sample: Option<usize>) -> Vec<(String, Counts)> {
    let r = r.clone();
    let dir = dir();
    let base = dir.join(format!("pristine-{}.img", r.config.ftl.kind));
    let (image, expected) = pristine(&r, &base);
    let work = dir.join(format!("damaged-{}.img", r.config.ftl.kind));
    std::fs::write(&work, &image).unwrap();
    let file = std::fs::OpenOptions::new().write(true).open(&work).unwrap();
    let mut rng = Lcg(7);
    let mut table = Vec::new();
    // Silence the messages of panics caught below (each is counted).
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    for (name, range) in areas(&r) {
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
        let r = resolved_with(extra);
        eprintln!("image: {extra:?}");
        let table = damage_matrix(&r, sample);
        let total = print(&table);
        assert_eq!((total.wrong, total.panic), (0, 0), "{table:#?}");
        // Mirrored copies repair metadata damage; only a superblock or checkpoint damaged so
        // that no copy survives can be refused, and one byte cannot do that.
        assert_eq!(total.refused, 0, "{table:#?}");
        assert!(total.repaired > 0);
    }
}

fn crafted(r: &Resolved, what: &str, f: impl FnOnce(&std::fs::File, &Resolved)) -> String {
    let dir = dir();
    let path = dir.join(format!("crafted-{what}.img"));
    let (image, _) = pristine(r, &path);
    std::fs::write(&path, &image).unwrap();
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    f(&file, r);
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
    let e = crafted(&r, "counts", |f, r| {
        // Every block header: erase count 0xFFFFFFFF with valid CRCs in both copies.
        let mut copy = [0u8; 16];
        copy[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        let crc = crc32fast::hash(&copy[..12]);
        copy[12..].copy_from_slice(&crc.to_le_bytes());
        for b in 0..u64::from(r.geometry.blocks) {
            f.write_all_at(&copy, 4096 + b * 32).unwrap();
            f.write_all_at(&copy, 4096 + b * 32 + 16).unwrap();
        }
    });
    assert!(e.contains("4294967295 erases"), "{e}");
    let e = crafted(&r, "truncated", |f, _| f.set_len(1 << 20).unwrap());
    assert!(e.contains("truncated"), "{e}");
    let e = crafted(&r, "oob-lpn", |f, r| {
        // A record naming a page past the device, with valid CRCs in both copies.
        let oob = (4096 + u64::from(r.geometry.blocks) * 32).next_multiple_of(4096);
        let mut copy = [0u8; 32];
        copy[0] = 0x5A;
        copy[4..8].copy_from_slice(&(u32::MAX - 7).to_le_bytes());
        copy[8..16].copy_from_slice(&1u64.to_le_bytes());
        let crc = crc32fast::hash(&copy[..28]);
        copy[28..].copy_from_slice(&crc.to_le_bytes());
        f.write_all_at(&copy, oob).unwrap();
        f.write_all_at(&copy, oob + 32).unwrap();
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
    let (image, expected) = pristine(&r, &path);
    std::fs::write(&path, &image).unwrap();
    let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    let mut copy = [0u8; 16];
    copy[..4].copy_from_slice(&200_000u32.to_le_bytes());
    copy[4..8].copy_from_slice(&1u32.to_le_bytes());
    let crc = crc32fast::hash(&copy[..12]);
    copy[12..].copy_from_slice(&crc.to_le_bytes());
    for b in 0..u64::from(r.geometry.blocks) {
        f.write_all_at(&copy, 4096 + b * 32).unwrap();
        f.write_all_at(&copy, 4096 + b * 32 + 16).unwrap();
    }
    drop(f);
    let (media, _) = FileMedia::open(&path, &r, Mount::Scan).unwrap();
    let mut d = Device::recover(&r, Box::new(media), 1_000_000_000_000).unwrap();
    let mut buf = vec![0u8; 4096];
    for (lpn, &v) in expected.iter().enumerate().filter(|(_, &v)| v != 0) {
        d.submit_io(&Request::read(lpn as u64 * 4096, 4096), Io::Read(&mut buf)).unwrap();
        assert!(buf == page_of(lpn as u64, v), "LPN {lpn}");
    }
    let mut worn_out = 0;
    for i in 0..3000u64 {
        let lpn = i % r.geometry.logical_pages;
        match d.submit_io(&Request::write(lpn * 4096, 4096), Io::Write(&page_of(lpn, 9))) {
            Ok(_) => {}
            Err(nandlab_core::RequestError::WornOut { .. }) => worn_out += 1,
            Err(e) => panic!("{e}"),
        }
    }
    assert!(worn_out > 0, "a flash past its rating must end up refusing writes");
    let _ = std::fs::remove_file(&path);
}
