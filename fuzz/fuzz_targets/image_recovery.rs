//! Image recovery (`nandlab-store` mount + `Device::recover`) from mutated images. Once per
//! process, small images are built the way `crates/nandlab-store/tests/damage.rs` builds its
//! pristine image: 1,500 page writes of known content, two checkpoints, no clean shutdown. Each
//! execution copies one, applies the input's byte mutations, and mounts it with every recovery
//! mode (full scan, checkpoint); then reads every page, writes a few, syncs, and mounts again.
//!
//! A refused mount or an `EIO` is fine. A finding is: a panic, a hang, a page read back with
//! content it never had or an older version of it when the image got at most one damaged byte
//! (the store's stated guarantee, see damage.rs), a page written after recovery that does not
//! read back, or a recovered image that no longer mounts after a sync.
//!
//! Input: byte 0 = settings (bits 0-1: image; bit 2: battery failed (the NVRAM is dropped, so
//! older copies are expected); bit 3: change the file's length by the next u16), then 4-byte
//! mutations `[area, offset lo, offset hi, value]`: area bits 0-1 pick metadata before the page
//! data, metadata after it (checkpoint slots, NVRAM), page data, or anywhere; area bit 7 sets the
//! byte to `value`, otherwise it is XORed with it. At most 64 mutations are applied.
#![no_main]

use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use nandlab_core::{Config, Device, Dispatched, Io, Request, Resolved, Submission};
use nandlab_fuzz::{scratch_dir, Bytes};
use nandlab_store::{FileMedia, Mount};

const PAGE: u64 = 512;
const WRITES: u64 = 1500;

/// The images: the page FTL with DEB (NVRAM cells in use) and with DAC and a RAM region, FAST
/// and SAST (hybrid data blocks with holes, log blocks).
const IMAGES: [&[&str]; 4] = [
    &["ftl.placement=deb", "deb.ebr_size_bytes=4096", "ftl.cleaning=cat"],
    &["ftl.kind=fast", "ftl.log_blocks=4", "device.utilization=0.6"],
    &[
        "ftl.placement=dac",
        "ftl.regions=2",
        "dac.ram_region_bytes=2048",
        "ftl.cleaning=cost-benefit",
    ],
    &[
        "ftl.kind=sast",
        "ftl.log_blocks=4",
        "ftl.group_data_blocks=2",
        "ftl.group_log_blocks=2",
        "device.utilization=0.5",
    ],
];

struct Pristine {
    r: Resolved,
    r_battery_failed: Resolved,
    image: Vec<u8>,
    /// Per LPN: the version of its content (0 = never written).
    expected: Vec<u64>,
    /// Byte offsets of the page data area.
    data: std::ops::Range<u64>,
}

fn resolved(extra: &[&str], battery_failed: bool) -> Resolved {
    let mut o = vec![
        "device.blocks=24",
        "device.pages_per_block=16",
        "device.utilization=0.7",
        "device.page_size_bytes=512",
    ];
    o.extend_from_slice(extra);
    if battery_failed {
        o.push("serve.ram_region_battery=\"failed\"");
    }
    let mut r = Config::from_overrides(&o).unwrap().resolve().unwrap();
    r.served = true;
    r
}

fn page_of(lpn: u64, v: u64) -> Vec<u8> {
    let mut p = Vec::with_capacity(PAGE as usize);
    while (p.len() as u64) < PAGE {
        p.extend_from_slice(&lpn.to_le_bytes());
        p.extend_from_slice(&v.to_le_bytes());
    }
    p
}

fn build(index: usize) -> Pristine {
    let r = resolved(IMAGES[index], false);
    let path = scratch_dir().join(format!("pristine-{index}.img"));
    let lpns = r.geometry.logical_pages;
    let mut expected = vec![0u64; lpns as usize];
    let mut state = 42u64;
    let mut rng = move || {
        state =
            state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        state >> 33
    };
    {
        let media = FileMedia::create(&path, &r).unwrap();
        let mut d = Device::with_media(&r, Box::new(media), None).unwrap();
        for i in 1..=WRITES {
            let lpn = if rng() % 4 == 0 { rng() % lpns } else { rng() % (lpns / 8).max(1) };
            d.dispatch(
                Submission::new(&Request::write(lpn * PAGE, PAGE)).io(Io::Write(&page_of(lpn, i))),
            )
            .map(Dispatched::completion)
            .unwrap();
            expected[lpn as usize] = i;
            if i == 600 || i == 1100 {
                d.checkpoint().unwrap();
            }
        }
        d.sync().unwrap();
        // No shutdown: a crash after the last write.
    }
    let image = std::fs::read(&path).unwrap();
    let info = nandlab_store::read_image_info(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    let areas = nandlab_store::image_areas(&info);
    let data = areas.into_iter().find(|a| a.name == "page data").unwrap().bytes;
    assert!(data.end <= image.len() as u64, "the image is shorter than its layout");
    Pristine { r_battery_failed: resolved(IMAGES[index], true), r, image, expected, data }
}

fn pristine(index: usize) -> &'static Pristine {
    static IMAGES_BUILT: [OnceLock<Pristine>; 4] =
        [OnceLock::new(), OnceLock::new(), OnceLock::new(), OnceLock::new()];
    IMAGES_BUILT[index].get_or_init(|| build(index))
}

fn work_path() -> &'static PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| scratch_dir().join("damaged.img"))
}

/// Mounts, checks every page, writes and syncs some, then mounts again and checks those.
fn mount_and_check(p: &Pristine, r: &Resolved, path: &Path, mount: Mount, strict: bool) {
    let Ok((media, _report)) = FileMedia::open(path, r, mount) else { return };
    let Ok(mut d) = Device::recover(r, Box::new(media), 1_000_000_000_000) else { return };
    let mut buf = vec![0u8; PAGE as usize];
    for (lpn, &v) in p.expected.iter().enumerate() {
        let lpn = lpn as u64;
        if d.dispatch(Submission::new(&Request::read(lpn * PAGE, PAGE)).io(Io::Read(&mut buf)))
            .map(Dispatched::completion)
            .is_err()
            || !strict
        {
            continue;
        }
        let right = if v == 0 { buf.iter().all(|&b| b == 0) } else { buf == page_of(lpn, v) };
        assert!(right, "LPN {lpn} reads wrong content after one damaged byte ({mount:?} mount)");
    }
    // The recovered drive takes writes, which read back, and survive another mount.
    let version = WRITES + 1;
    let mut written = Vec::new();
    for lpn in (0..p.expected.len() as u64).step_by(7).take(16) {
        if d.dispatch(
            Submission::new(&Request::write(lpn * PAGE, PAGE))
                .io(Io::Write(&page_of(lpn, version))),
        )
        .map(Dispatched::completion)
        .is_ok()
        {
            written.push(lpn);
        }
    }
    for &lpn in &written {
        if d.dispatch(Submission::new(&Request::read(lpn * PAGE, PAGE)).io(Io::Read(&mut buf)))
            .map(Dispatched::completion)
            .is_ok()
        {
            assert!(
                buf == page_of(lpn, version),
                "LPN {lpn}: a write after recovery reads back wrong"
            );
        }
    }
    if d.sync().is_err() {
        return;
    }
    drop(d);
    // The next start-up has a working battery (a dead one would drop the NVRAM's pages again,
    // by design).
    let r = &p.r;
    // The same mount mode: a checkpoint mount does not read the OOB records of blocks the
    // checkpoint vouches for, so damage there that a scan would refuse stays out of sight.
    let (media, _) = FileMedia::open(path, r, mount)
        .unwrap_or_else(|e| panic!("a recovered and synced image no longer mounts: {e}"));
    let mut d = Device::recover(r, Box::new(media), 2_000_000_000_000)
        .unwrap_or_else(|e| panic!("a recovered and synced image no longer recovers: {e}"));
    for &lpn in &written {
        if d.dispatch(Submission::new(&Request::read(lpn * PAGE, PAGE)).io(Io::Read(&mut buf)))
            .map(Dispatched::completion)
            .is_ok()
        {
            assert!(
                buf == page_of(lpn, version),
                "LPN {lpn}: a synced write was lost at the next mount"
            );
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let mut input = Bytes::new(data);
    let settings = input.u8();
    let p = pristine(usize::from(settings & 3));
    let battery_failed = settings & 4 != 0;
    let resize = (settings & 8 != 0).then(|| input.u16());
    let len = p.image.len() as u64;
    let (data_start, data_end) = (p.data.start, p.data.end);
    let mut image = p.image.clone();
    let mut changed = 0usize;
    for _ in 0..64 {
        if input.is_empty() {
            break;
        }
        let area = input.u8();
        let offset = u64::from(input.u16());
        let value = input.u8();
        let at = match area & 3 {
            0 => offset % data_start,
            1 => data_end + offset % (len - data_end).max(1),
            2 => data_start + (offset * PAGE / 8) % (data_end - data_start),
            _ => offset * len / 65536,
        }
        .min(len - 1) as usize;
        let old = image[at];
        image[at] = if area & 0x80 != 0 { value } else { old ^ value };
        if image[at] != old {
            changed += 1;
        }
    }
    let path = work_path();
    // One damaged byte must never give wrong data (damage.rs); more may (both copies of a
    // record), and a dead battery loses the NVRAM's newer copies by design.
    let strict = changed <= 1 && !battery_failed && resize.is_none();
    let r = if battery_failed { &p.r_battery_failed } else { &p.r };
    for mount in [Mount::Scan, Mount::Checkpoint] {
        std::fs::write(path, &image).unwrap();
        if let Some(n) = resize {
            let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
            let delta = u64::from(n) * 64;
            let new_len = if n & 1 == 0 { len.saturating_sub(delta) } else { len + delta };
            f.set_len(new_len).unwrap();
            let _ = f.write_all_at(&[], 0);
        }
        mount_and_check(p, r, path, mount, strict);
    }
});
