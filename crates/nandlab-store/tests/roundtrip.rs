//! Goal: the file-backed media stores every byte the host wrote, survives a restart (tables
//! rebuilt by scanning OOB records), and after a torn OOB record serves the page's previous
//! content, never garbage.
//! Method: random sector-aligned writes of random sizes through the request-level device,
//! compared with a reference model (a plain byte array); reopen the image and compare again.

use nandlab_core::{Config, Device, Dispatched, Io, Request, Submission};
use nandlab_store::{FileMedia, Mount};

use nandlab_testkit::Scratch;

fn resolved(extra: &[&str]) -> nandlab_core::Resolved {
    let mut o = vec![
        "device.blocks=64",
        "device.pages_per_block=16",
        "device.utilization=0.7",
        "ftl.placement=dac",
        "ftl.cleaning=cost-benefit",
    ];
    o.extend_from_slice(extra);
    Config::from_overrides(&o).unwrap().resolve().unwrap()
}

struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 =
            self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
}

/// The image `name` in a scratch directory of the test's own, removed when the guard drops.
fn image(name: &str) -> (Scratch, std::path::PathBuf) {
    let dir = Scratch::new("nandlab-store-test");
    let path = dir.join(name);
    (dir, path)
}

fn read_all(d: &mut Device, bytes: u64) -> Vec<u8> {
    let mut buf = vec![0u8; bytes as usize];
    d.dispatch(Submission::new(&Request::read(0, bytes)).io(Io::Read(&mut buf)))
        .map(Dispatched::completion)
        .unwrap();
    buf
}

/// Random writes; returns the reference image.
fn scribble(d: &mut Device, reference: &mut [u8], rng: &mut Lcg, writes: usize) {
    let cap = reference.len() as u64;
    for _ in 0..writes {
        let sectors = 1 + rng.next() % 24;
        let len = sectors * 512;
        let off = (rng.next() % (cap / 512 - sectors)) * 512;
        let byte = (rng.next() % 251) as u8 + 1;
        let data: Vec<u8> = (0..len).map(|i| byte.wrapping_add(i as u8)).collect();
        d.dispatch(Submission::new(&Request::write(off, len)).io(Io::Write(&data)))
            .map(Dispatched::completion)
            .unwrap();
        reference[off as usize..(off + len) as usize].copy_from_slice(&data);
    }
}

/// Reads a random range and compares it with the reference.
fn read_and_compare(d: &mut Device, reference: &[u8], rng: &mut Lcg, what: &str) {
    let cap = reference.len() as u64;
    let sectors = 1 + rng.next() % 24;
    let off = (rng.next() % (cap / 512 - sectors)) * 512;
    let mut buf = vec![0u8; (sectors * 512) as usize];
    d.dispatch(Submission::new(&Request::read(off, sectors * 512)).io(Io::Read(&mut buf)))
        .map(Dispatched::completion)
        .unwrap();
    let want = &reference[off as usize..(off + sectors * 512) as usize];
    assert!(buf == want, "{what}: read at {off} differs");
}

/// Trims 1-4 random whole pages (they read back as zeros); returns the first and the count.
fn trim_random(d: &mut Device, reference: &mut [u8], rng: &mut Lcg, page: u64) -> (u64, u64) {
    let cap = reference.len() as u64;
    let pages = 1 + rng.next() % 4;
    let first = rng.next() % (cap / page - pages);
    let (a, b) = ((first * page) as usize, ((first + pages) * page) as usize);
    d.dispatch(Submission::new(&Request::trim(a as u64, (b - a) as u64)))
        .map(Dispatched::completion)
        .unwrap();
    reference[a..b].fill(0);
    (first, pages)
}

#[test]
fn data_survives_restart() {
    let r = resolved(&[]);
    let (_dir, path) = image("restart.img");
    let cap = r.geometry.logical_bytes();
    let mut reference = vec![0u8; cap as usize];
    let mut rng = Lcg(7);
    {
        let media = FileMedia::create(&path, &r).unwrap();
        let mut d = Device::with_media(&r, Box::new(media), None).unwrap();
        scribble(&mut d, &mut reference, &mut rng, 3000);
        assert!(d.metrics().erases > 0, "the cleaner must have run");
        d.check();
        assert!(read_all(&mut d, cap) == reference, "live read-back differs");
        d.sync().unwrap();
    }
    let media = FileMedia::open(&path, &r, Mount::Scan).unwrap().0;
    let mut d = Device::recover(&r, Box::new(media), 1_000_000_000_000).unwrap();
    d.check();
    assert!(read_all(&mut d, cap) == reference, "read-back after restart differs");
    // And it keeps working after the restart.
    scribble(&mut d, &mut reference, &mut rng, 1000);
    d.check();
    assert!(read_all(&mut d, cap) == reference);
}

/// Byte offset of the image's area `name` (`nandlab_store::image_areas`).
fn area(path: &std::path::Path, name: &str) -> u64 {
    let info = nandlab_store::read_image_info(path).unwrap();
    let areas = nandlab_store::image_areas(&info);
    areas.into_iter().find(|a| a.name == name).unwrap_or_else(|| panic!("{name}")).bytes.start
}

fn poke(path: &std::path::Path, at: u64, bytes: &[u8]) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.write_all_at(bytes, at).unwrap();
}

/// Two versions of page 0 (physical pages 0 and 1). Damage to one copy of the newer OOB record
/// is repaired (the newer version is served); both copies unreadable at the end of the block's
/// programmed pages is a write a crash cut short (the older version is served); both copies
/// unreadable with a programmed page after it cannot be a torn write: the mount is refused,
/// naming the page, rather than risking the older version.
#[test]
fn damaged_oob_records_are_repaired_torn_or_refused() {
    let r = resolved(&["ftl.placement=none", "ftl.cleaning=greedy"]);
    let page = r.geometry.page_size_bytes;
    let read0 = |path: &std::path::Path| {
        let (media, report) = FileMedia::open(path, &r, Mount::Scan)?;
        let mut d = Device::recover(&r, Box::new(media), 1).unwrap();
        d.check();
        let mut buf = vec![0u8; page as usize];
        d.dispatch(Submission::new(&Request::read(0, page)).io(Io::Read(&mut buf)))
            .map(Dispatched::completion)
            .unwrap();
        Ok::<_, nandlab_store::StoreError>((buf[0], report))
    };
    let make = |name: &str, versions: u8| {
        let (dir, path) = image(name);
        let media = FileMedia::create(&path, &r).unwrap();
        let mut d = Device::with_media(&r, Box::new(media), None).unwrap();
        for v in 1..=versions {
            d.dispatch(
                Submission::new(&Request::write(0, page))
                    .io(Io::Write(&vec![0x11 * v; page as usize])),
            )
            .map(Dispatched::completion)
            .unwrap();
        }
        (dir, path)
    };
    let (_dir, path) = make("repaired.img", 2);
    let (oob_a, oob_b) = (area(&path, "OOB records A"), area(&path, "OOB records B"));
    poke(&path, oob_a + 32 + 21, &[0xEE]); // a byte of copy A of page 1's record
    let (byte, report) = read0(&path).unwrap();
    assert_eq!((byte, report.oob_records_repaired, report.torn_pages), (0x22, 1, 0));
    assert_eq!(report.copies_rewritten, 1, "the damaged copy is rewritten");
    let (_, report) = read0(&path).unwrap();
    assert_eq!(report.oob_records_repaired, 0, "rewritten: {report:?}");
    let (_dir, path) = make("torn.img", 2);
    poke(&path, oob_a + 32, &[0x00]);
    poke(&path, oob_b + 32, &[0x00]); // both state bytes
    let (byte, report) = read0(&path).unwrap();
    assert_eq!((byte, report.torn_pages), (0x11, 1));
    let (_dir, path) = make("refused.img", 3);
    poke(&path, oob_a + 32, &[0x00]);
    poke(&path, oob_b + 32, &[0x00]);
    let e = read0(&path).err().unwrap().to_string();
    assert!(e.contains("page 1 of block 0") && e.contains("older copy"), "{e}");
}

#[test]
fn geometry_and_layout_mismatches_name_the_key() {
    let r = resolved(&[]);
    let (_dir, path) = image("mismatch.img");
    drop(FileMedia::create(&path, &r).unwrap());
    for (set, key) in [
        ("device.blocks=128", "device.blocks"),
        ("ftl.placement=none", "ftl.placement"),
        ("ftl.regions=3", "ftl.regions"),
        ("ftl.kind=fast", "ftl.kind"),
    ] {
        let other = if set == "ftl.kind=fast" {
            let bytes = format!("device.logical_bytes={}", r.geometry.logical_bytes());
            let o = ["device.blocks=64", "device.pages_per_block=16", &bytes, set];
            Config::from_overrides(&o).unwrap().resolve().unwrap()
        } else {
            resolved(&[set])
        };
        let e = FileMedia::open(&path, &other, Mount::Scan).err().unwrap();
        assert!(e.to_string().contains(key), "{set}: {e}");
    }
    std::fs::write(&path, b"not an image").unwrap();
    let e = FileMedia::open(&path, &r, Mount::Scan).err().unwrap();
    assert!(e.to_string().contains("not a nandlab image"), "{e}");
}

/// One server at a time: a second opener is refused while the first holds the image, and
/// the message names the holder; once the first closes it, the image opens again.
#[test]
fn an_open_image_is_locked() {
    let r = resolved(&[]);
    let (_dir, path) = image("locked.img");
    let first = FileMedia::create(&path, &r).unwrap();
    let e = FileMedia::open(&path, &r, Mount::Scan).err().unwrap();
    let msg = e.to_string();
    assert!(matches!(e, nandlab_store::StoreError::Locked { .. }), "{msg}");
    assert!(msg.contains(&format!("process {}", std::process::id())), "{msg}");
    // Creating over it is refused too (it would truncate the holder's image).
    assert!(matches!(
        FileMedia::create(&path, &r).err().unwrap(),
        nandlab_store::StoreError::Locked { .. }
    ));
    drop(first);
    FileMedia::open(&path, &r, Mount::Scan).unwrap();
}

/// LFSS fast mount: a checkpoint, then more writes (cleaning included), then a "crash" (no
/// final checkpoint): opening from the checkpoint with roll-forward must give the same disk as
/// a full scan, reading only the blocks that changed.
#[test]
fn checkpoint_mount_rolls_forward_to_the_same_state() {
    let r = resolved(&[]);
    let (_dir, path) = image("checkpoint.img");
    let cap = r.geometry.logical_bytes();
    let mut reference = vec![0u8; cap as usize];
    let mut rng = Lcg(11);
    {
        let media = FileMedia::create(&path, &r).unwrap();
        let mut d = Device::with_media(&r, Box::new(media), None).unwrap();
        scribble(&mut d, &mut reference, &mut rng, 2000);
        d.checkpoint().unwrap();
        // A trim before the second checkpoint is remembered by it.
        d.dispatch(Submission::new(&Request::trim(0, 8192))).map(Dispatched::completion).unwrap();
        reference[..8192].fill(0);
        d.checkpoint().unwrap();
        scribble(&mut d, &mut reference, &mut rng, 300);
    }
    let (media, report) = FileMedia::open(&path, &r, Mount::Checkpoint).unwrap();
    assert!(report.from_checkpoint);
    assert_eq!(report.checkpoint_generation, 2);
    assert!(report.blocks_scanned < u64::from(r.geometry.blocks), "{report:?}");
    let mut d = Device::recover(&r, Box::new(media), 1_000_000_000_000).unwrap();
    d.check();
    assert!(read_all(&mut d, cap) == reference, "checkpoint mount differs from the reference");
    scribble(&mut d, &mut reference, &mut rng, 500);
    d.check();
    assert!(read_all(&mut d, cap) == reference);
    d.sync().unwrap();
    drop(d);
    // A damaged newest checkpoint (generation 2, slot 0) falls back to generation 1. The trim
    // recorded only by generation 2 is then forgotten (a trim leaves nothing on flash), so the
    // first 8 KiB may hold older data; everything else must match.
    poke(&path, area(&path, "checkpoint slot 0") + 8, &[0xAB]);
    let (media, report) = FileMedia::open(&path, &r, Mount::Checkpoint).unwrap();
    assert_eq!((report.from_checkpoint, report.checkpoint_generation), (true, 1));
    let mut d = Device::recover(&r, Box::new(media), 2_000_000_000_000).unwrap();
    d.check();
    let got = read_all(&mut d, cap);
    assert!(got[8192..] == reference[8192..], "fallback checkpoint mount differs");
}

/// The hybrid FTLs (BAST with every recycling policy, SAST, FAST) return the newest copy of
/// every byte through merges and migrations, sub-page writes included.
#[test]
fn hybrid_ftls_read_back_the_newest_copy() {
    let cases: &[&[&str]] = &[
        &["ftl.kind=bast"],
        &["ftl.kind=bast", "ftl.recycling=cost-based"],
        &["ftl.kind=bast", "ftl.recycling=periodic"],
        &["ftl.kind=bast", "ftl.recycling=optimal"],
        &["ftl.kind=sast", "ftl.group_data_blocks=2", "ftl.group_log_blocks=2"],
        &["ftl.kind=fast"],
    ];
    for (i, extra) in cases.iter().enumerate() {
        let mut o = vec!["device.blocks=64", "device.pages_per_block=16", "ftl.log_blocks=4"];
        o.extend_from_slice(extra);
        let r = Config::from_overrides(&o).unwrap().resolve().unwrap();
        let (_dir, path) = image(&format!("hybrid{i}.img"));
        let cap = r.geometry.logical_bytes();
        let mut reference = vec![0u8; cap as usize];
        let mut rng = Lcg(11 + i as u64);
        let media = FileMedia::create(&path, &r).unwrap();
        let mut d = Device::with_media(&r, Box::new(media), None).unwrap();
        // A small hot region rewritten often (migrations), then random writes everywhere.
        for _ in 0..400 {
            let off = (rng.next() % 24) * 512;
            let data = vec![(rng.next() % 251) as u8 + 1; 512];
            d.dispatch(Submission::new(&Request::write(off, 512)).io(Io::Write(&data)))
                .map(Dispatched::completion)
                .unwrap();
            reference[off as usize..off as usize + 512].copy_from_slice(&data);
        }
        scribble(&mut d, &mut reference, &mut rng, 1500);
        d.check();
        let m = d.metrics();
        assert!(m.full_merges.count + m.partial_merges.count > 0, "{extra:?}: no merge ran");
        assert!(read_all(&mut d, cap) == reference, "{extra:?}: read-back differs");
        std::fs::remove_file(&path).unwrap();
    }
}

/// With any buffer kind in front of the page FTL and FAST, a random mix of reads,
/// writes (partial pages included), trims and flushes returns the last written data for every
/// byte, and the flash alone holds it once the buffer is written back.
#[test]
fn buffers_return_the_last_written_data() {
    for (i, kind) in ["lru", "fab", "bplru", "cflru"].iter().enumerate() {
        for ftl in ["page", "fast"] {
            let mut o = vec![
                "device.blocks=64".to_string(),
                "device.pages_per_block=16".into(),
                format!("ftl.kind={ftl}"),
                format!("buffer.kind={kind}"),
                // 24 pages: far smaller than the device, so evictions are constant.
                "buffer.size_bytes=98304".into(),
            ];
            if ftl == "fast" {
                o.push("ftl.log_blocks=4".into());
            }
            let r = Config::from_overrides(&o).unwrap().resolve().unwrap();
            let (_dir, path) = image(&format!("buffer-{kind}-{ftl}.img"));
            let cap = r.geometry.logical_bytes();
            let page = r.geometry.page_size_bytes;
            let mut reference = vec![0u8; cap as usize];
            let mut rng = Lcg(101 + i as u64);
            let media = FileMedia::create(&path, &r).unwrap();
            let mut d = Device::with_media(&r, Box::new(media), None).unwrap();
            for step in 0..4000 {
                match rng.next() % 10 {
                    0..=4 => scribble(&mut d, &mut reference, &mut rng, 1),
                    5..=7 => {
                        let what = format!("{kind}/{ftl}: step {step}");
                        read_and_compare(&mut d, &reference, &mut rng, &what);
                    }
                    8 => {
                        trim_random(&mut d, &mut reference, &mut rng, page);
                    }
                    _ => {
                        d.dispatch(Submission::new(&Request::flush()))
                            .map(Dispatched::completion)
                            .unwrap();
                    }
                }
            }
            d.check();
            assert!(read_all(&mut d, cap) == reference, "{kind}/{ftl}: read-back differs");
            let m = d.metrics();
            assert!(m.buffer.victims > 0 && m.buffer.read_hits > 0, "{kind}/{ftl}: {:?}", m.buffer);
            // Once written back, the flash alone holds the data: with the buffer removed after
            // a sync, the device reads the same.
            d.sync().unwrap();
            let mut b = vec![0u8; cap as usize];
            drop_buffer(&mut d);
            d.dispatch(Submission::new(&Request::read(0, cap)).io(Io::Read(&mut b)))
                .map(Dispatched::completion)
                .unwrap();
            assert!(b == reference, "{kind}/{ftl}: flash contents differ after write-back");
            std::fs::remove_file(&path).unwrap();
        }
    }
}

/// Removes the device's buffer (after a sync it holds no dirty page).
fn drop_buffer(d: &mut Device) {
    d.take_buffer();
    assert!(d.buffer().is_none());
}

/// With a RAM region (DEB's EBR, DAC's RAM region), every byte reads back the last
/// written data whether it sits in RAM or on flash (partial-page writes merge with RAM pages
/// too), trims drop RAM pages, and after a shutdown (the RAM region written back) a restart
/// from the image alone returns everything (but trimmed pages: a trim leaves no record on
/// flash, so an old copy may come back, as without a RAM region).
#[test]
fn ram_regions_return_the_last_written_data_and_survive_shutdown() {
    for (i, extra) in [
        &["ftl.placement=deb", "deb.ebr_size_bytes=65536"][..],
        &["ftl.placement=dac", "dac.ram_region_bytes=65536", "ftl.cleaning=greedy"][..],
    ]
    .iter()
    .enumerate()
    {
        let r = resolved(extra);
        let (_dir, path) = image(&format!("ram-region-{i}.img"));
        let cap = r.geometry.logical_bytes();
        let page = r.geometry.page_size_bytes;
        let mut reference = vec![0u8; cap as usize];
        let mut trimmed = vec![false; (cap / page) as usize];
        let mut rng = Lcg(31 + i as u64);
        {
            let media = FileMedia::create(&path, &r).unwrap();
            let mut d = Device::with_media(&r, Box::new(media), None).unwrap();
            for step in 0..3000 {
                match rng.next() % 8 {
                    0..=4 => scribble(&mut d, &mut reference, &mut rng, 1),
                    5 | 6 => {
                        let what = format!("{extra:?}: step {step}");
                        read_and_compare(&mut d, &reference, &mut rng, &what);
                    }
                    _ => {
                        let (first, pages) = trim_random(&mut d, &mut reference, &mut rng, page);
                        trimmed[first as usize..(first + pages) as usize].fill(true);
                    }
                }
            }
            d.check();
            assert!(read_all(&mut d, cap) == reference, "{extra:?}: read-back differs");
            let ram = d.metrics().ram_region.unwrap();
            assert!(ram.counters.read_pages > 0 && ram.counters.write_back_pages > 0, "{ram:?}");
            assert!(ram.used_pages > 0);
        }
        // A crash (no shutdown): the RAM region comes back from NVRAM.
        let media = FileMedia::open(&path, &r, Mount::Scan).unwrap().0;
        let mut d = Device::recover(&r, Box::new(media), 1_000_000_000_000).unwrap();
        d.check();
        let restored = d.recovery().nvram_pages_restored;
        assert!(restored > 0, "{extra:?}: {:?}", d.recovery());
        assert_eq!(d.metrics().ram_region.unwrap().used_pages, restored, "{extra:?}");
        let back = read_all(&mut d, cap);
        let p = page as usize;
        for (n, _) in trimmed.iter().enumerate().filter(|(_, t)| !**t) {
            let (a, b) = (n * p, (n + 1) * p);
            assert!(back[a..b] == reference[a..b], "{extra:?}: page {n} differs after a crash");
        }
        {
            d.shutdown().unwrap();
            let ram = d.metrics().ram_region.unwrap();
            assert_eq!(ram.used_pages, 0);
            assert!(ram.counters.shutdown_write_back_pages > 0);
        }
        drop(d);
        let media = FileMedia::open(&path, &r, Mount::Scan).unwrap().0;
        let mut d = Device::recover(&r, Box::new(media), 1_000_000_000_000).unwrap();
        d.check();
        let back = read_all(&mut d, cap);
        let p = page as usize;
        for (n, _) in trimmed.iter().enumerate().filter(|(_, t)| !**t) {
            let (a, b) = (n * p, (n + 1) * p);
            assert!(back[a..b] == reference[a..b], "{extra:?}: page {n} differs after restart");
        }
        std::fs::remove_file(&path).unwrap();
    }
}

/// An erase a crash cut short (its block header rewritten — count up, "programmed since erase"
/// flag clear — but its OOB records not yet zeroed) is finished at mount: what the block held
/// was superseded or trimmed and must not come back. Here the block held the only copy of a
/// trimmed page: without the rule it would read its old content again.
#[test]
fn an_interrupted_erase_is_finished_at_mount() {
    let r = resolved(&["ftl.placement=none", "ftl.cleaning=greedy"]);
    let page = r.geometry.page_size_bytes;
    let (_dir, path) = image("cut-erase.img");
    {
        let media = FileMedia::create(&path, &r).unwrap();
        let mut d = Device::with_media(&r, Box::new(media), None).unwrap();
        d.dispatch(
            Submission::new(&Request::write(0, page)).io(Io::Write(&vec![0x11; page as usize])),
        )
        .map(Dispatched::completion)
        .unwrap();
        d.dispatch(Submission::new(&Request::trim(0, page))).map(Dispatched::completion).unwrap();
    }
    // Block 0's header as the erase writes it: count 1, flags 0 (both copies).
    let mut copy = [0u8; 16];
    copy[0] = 1;
    let crc = crc32fast::hash(&copy[..12]);
    copy[12..].copy_from_slice(&crc.to_le_bytes());
    poke(&path, area(&path, "block headers A"), &copy);
    poke(&path, area(&path, "block headers B"), &copy);
    for mount in [Mount::Scan, Mount::Checkpoint] {
        let (media, report) = FileMedia::open(&path, &r, mount).unwrap();
        assert_eq!(report.erases_completed, u64::from(mount == Mount::Scan), "{mount:?}");
        let mut d = Device::recover(&r, Box::new(media), 1).unwrap();
        d.check();
        assert_eq!(d.ftl().erase_counts()[0], 1);
        let mut buf = vec![0xFFu8; page as usize];
        d.dispatch(Submission::new(&Request::read(0, page)).io(Io::Read(&mut buf)))
            .map(Dispatched::completion)
            .unwrap();
        assert!(buf.iter().all(|&b| b == 0), "{mount:?}: the trimmed page came back");
    }
}
