//! Goal: how the store (`FileMedia`, the served drive's NAND image) reacts to faults:
//! - a torn write (`FaultyMedia`: the power is cut in the middle of a program; `FileMedia::tear`
//!   leaves half the data and an OOB record failing its CRC) is found by the next mount as a
//!   torn page, and every LPN reads its last acknowledged data — the torn write's LPN its
//!   previous copy — with every FTL kind and both mounts;
//! - a failed program reads as an error for the rest of the session; the image holds what was
//!   programmed, so after a restart the page reads as the (unacknowledged) write left it;
//! - a page whose data fails its CRC stays an error when the cleaner moves it (the copy carries
//!   the CRC rather than re-sealing damaged bytes), and the cleaning does not fail the host
//!   write that triggered it;
//! - real I/O errors of the image file reach the host with their `std::io::ErrorKind` and the
//!   `io::Error` as their source.
//!
//! Method: a `Device` over `FaultyMedia<FileMedia>` with payloads naming (LPN, version), a
//! reference of the last acknowledged version per LPN, "crash" by dropping the device, and a
//! restart with `FileMedia::open` + `Device::recover`.

use std::error::Error as _;
use std::io::ErrorKind;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;

use nandlab_core::media::{Fault, FaultKind, FaultyMedia, Lpn, Ppn};
use nandlab_core::{Config, Device, Dispatched, Io, Request, RequestError, Resolved, Submission};
use nandlab_store::{FileMedia, Mount};

use nandlab_testkit::Scratch;

const PAGE: u64 = 4096;

fn resolved(extra: &[&str]) -> Resolved {
    let mut o = vec![
        "device.blocks=24",
        "device.pages_per_block=16",
        "device.utilization=0.6",
        "device.page_size_bytes=4096",
    ];
    o.extend_from_slice(extra);
    let mut r = Config::from_overrides(&o).unwrap().resolve().unwrap();
    r.served = true;
    r
}

const CONFIGS: &[(&str, &[&str])] = &[
    ("page", &[]),
    ("page dac ram", &["ftl.placement=dac", "ftl.regions=3", "dac.ram_region_bytes=16384"]),
    ("page deb ebr", &["ftl.placement=deb", "deb.ebr_size_bytes=16384"]),
    ("bast", &["ftl.kind=bast"]),
    ("sast", &["ftl.kind=sast", "ftl.log_blocks=4", "ftl.group_data_blocks=2"]),
    ("fast", &["ftl.kind=fast"]),
];

/// The image `name` in a scratch directory of the test's own, removed when the guard drops.
fn image(name: &str) -> (Scratch, PathBuf) {
    let dir = Scratch::new("nandlab-faults");
    let path = dir.join(name.replace(' ', "-"));
    (dir, path)
}

/// A page naming its LPN and version (0 = never written: zeros).
fn page_of(lpn: u64, v: u64) -> Vec<u8> {
    if v == 0 {
        return vec![0; PAGE as usize];
    }
    let mut p = Vec::with_capacity(PAGE as usize);
    while (p.len() as u64) < PAGE {
        p.extend_from_slice(&lpn.to_le_bytes());
        p.extend_from_slice(&v.to_le_bytes());
    }
    p
}

fn write(d: &mut Device, lpn: u64, v: u64) -> Result<(), RequestError> {
    d.dispatch(Submission::new(&Request::write(lpn * PAGE, PAGE)).io(Io::Write(&page_of(lpn, v))))
        .map(Dispatched::completion)
        .map(|_| ())
}

fn read(d: &mut Device, lpn: u64) -> Result<Vec<u8>, RequestError> {
    let mut buf = vec![0u8; PAGE as usize];
    d.dispatch(Submission::new(&Request::read(lpn * PAGE, PAGE)).io(Io::Read(&mut buf)))
        .map(Dispatched::completion)?;
    Ok(buf)
}

fn kind_of(e: &RequestError) -> Option<ErrorKind> {
    match e {
        RequestError::Media(m) => Some(m.kind()),
        _ => None,
    }
}

fn media_kind<T>(result: &Result<T, RequestError>) -> Option<ErrorKind> {
    result.as_ref().err().and_then(kind_of)
}

/// Byte offset of page `ppn`'s data in the image at `path`.
fn data_at(path: &std::path::Path, ppn: Ppn) -> u64 {
    let info = nandlab_store::read_image_info(path).unwrap();
    let areas = nandlab_store::image_areas(&info);
    let data = areas.into_iter().find(|a| a.name == "page data").unwrap().bytes.start;
    data + u64::from(ppn) * PAGE
}

/// Skewed writes (3/4 to the first 12 LPNs) until the `FaultyMedia`'s torn write cuts the
/// power; returns the last acknowledged version per LPN. A checkpoint is written once (so the
/// checkpoint mount has one to start from) and the host flushes now and then.
fn write_until_the_cut(d: &mut Device, r: &Resolved, expected: &mut [u64]) -> u64 {
    let lpns = r.geometry.logical_pages;
    let mut rng = nandlab_core::Prng::new(5);
    for v in 1..20_000u64 {
        let lpn = if rng.below(4) < 3 { rng.below(12) } else { rng.below(lpns) };
        match write(d, lpn, v) {
            Ok(()) => expected[lpn as usize] = v,
            Err(e) => {
                assert_eq!(kind_of(&e), Some(ErrorKind::Other), "{e}");
                assert!(e.to_string().contains("torn write"), "{e}");
                // The drive is gone: every later request fails, nothing reaches the image.
                assert!(write(d, lpn, v + 1).is_err());
                assert!(read(d, 0).is_err());
                return lpn;
            }
        }
        if v == 40 {
            d.checkpoint().unwrap();
        }
        if v % 25 == 0 {
            d.sync().unwrap();
        }
    }
    panic!("the torn write never happened");
}

/// Tears program `at`, restarts with `mount`, and checks every LPN reads its last acknowledged
/// version exactly; then the drive keeps working.
fn torn_then_restarted(name: &str, extra: &[&str], mount: Mount, at: u64) {
    let r = resolved(extra);
    let (_dir, path) = image(&format!("torn-{name}-{mount:?}-{at}.img"));
    let mut expected = vec![0u64; r.geometry.logical_pages as usize];
    let torn_lpn = {
        let media = FaultyMedia::new(FileMedia::create(&path, &r).unwrap(), 1)
            .with_fault(Fault::at(FaultKind::TornWrite, at));
        let log = media.log();
        let mut d = Device::with_media(&r, Box::new(media), None).unwrap();
        let lpn = write_until_the_cut(&mut d, &r, &mut expected);
        assert_eq!(log.lock().unwrap()[0].index, at);
        lpn
    };
    let what = format!("{name}, {mount:?}, tear at program #{at} (LPN {torn_lpn})");
    let (media, report) =
        FileMedia::open(&path, &r, mount).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(report.torn_pages, 1, "{what}: {report:?}");
    let mut d = Device::recover(&r, Box::new(media), 1_000_000_000_000)
        .unwrap_or_else(|e| panic!("{what}: recovery: {e}"));
    for (lpn, &v) in expected.iter().enumerate() {
        let got = read(&mut d, lpn as u64).unwrap_or_else(|e| panic!("{what}: LPN {lpn}: {e}"));
        assert!(got == page_of(lpn as u64, v), "{what}: LPN {lpn} is not version {v}");
    }
    write(&mut d, torn_lpn, 99_999).unwrap();
    assert_eq!(read(&mut d, torn_lpn).unwrap(), page_of(torn_lpn, 99_999), "{what}");
    d.check();
    let _ = std::fs::remove_file(&path);
}

#[test]
fn a_torn_write_is_a_torn_page_at_the_next_mount_and_its_lpn_reads_the_previous_copy() {
    for &(name, extra) in CONFIGS {
        for mount in [Mount::Scan, Mount::Checkpoint] {
            // Early (before the checkpoint), during the first cleaning or merges, and later.
            for at in [7, 45, 130, 333] {
                torn_then_restarted(name, extra, mount, at);
            }
        }
    }
}

/// Program #5 fails (page FTL, fresh image: the 5th write is the 5th program): the write
/// returns `Media(Other)`, its LPN reads as `Media(InvalidData)` for the rest of the session,
/// other LPNs are intact. The image got the program: after a restart the LPN reads as the
/// failed write left it — a write that fails may or may not take effect, as on any disk.
#[test]
fn a_failed_program_is_an_error_in_the_session_and_the_image_keeps_what_was_programmed() {
    let r = resolved(&[]);
    let (_dir, path) = image("failed-program.img");
    {
        let media = FaultyMedia::new(FileMedia::create(&path, &r).unwrap(), 1)
            .with_fault(Fault::at(FaultKind::Program, 5));
        let mut d = Device::with_media(&r, Box::new(media), None).unwrap();
        for lpn in 0..4 {
            write(&mut d, lpn, lpn + 1).unwrap();
        }
        let failed = write(&mut d, 1, 5);
        assert_eq!(media_kind(&failed), Some(ErrorKind::Other));
        assert_eq!(media_kind(&read(&mut d, 1)), Some(ErrorKind::InvalidData));
        for lpn in [0, 2, 3] {
            assert_eq!(read(&mut d, lpn).unwrap(), page_of(lpn, lpn + 1));
        }
        d.shutdown().unwrap();
    }
    let (media, _) = FileMedia::open(&path, &r, Mount::Scan).unwrap();
    let mut d = Device::recover(&r, Box::new(media), 1_000_000_000).unwrap();
    assert_eq!(read(&mut d, 1).unwrap(), page_of(1, 5));
    let _ = std::fs::remove_file(&path);
}

/// A page whose data no longer matches its CRC (bit rot in the image) reads as
/// `Media(InvalidData)`. The cleaner moving it carries its CRC along: the host writes that
/// trigger the cleaning succeed, the page still reads as an error at its new place and after a
/// restart (re-sealing would serve the damaged bytes as good), until the host rewrites it.
#[test]
fn a_page_failing_its_crc_stays_an_error_when_the_cleaner_moves_it() {
    let r = resolved(&[]);
    let (_dir, path) = image("crc-moved.img");
    let lpns = r.geometry.logical_pages;
    let victim = 5;
    {
        let mut d =
            Device::with_media(&r, Box::new(FileMedia::create(&path, &r).unwrap()), None).unwrap();
        for lpn in 0..lpns {
            write(&mut d, lpn, 1).unwrap();
        }
        let (ppn, _) = d.ftl().locate(Lpn::from_u64(victim)).unwrap();
        let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        f.write_all_at(&[0xFF], data_at(&path, ppn) + 100).unwrap();
        let e = read(&mut d, victim).unwrap_err();
        assert_eq!(kind_of(&e), Some(ErrorKind::InvalidData), "{e}");
        assert!(e.to_string().contains("fails its data CRC"), "{e}");
        // Random rewrites of every other LPN until the cleaner has moved the damaged page
        // (random: sequential rewrites would leave whole blocks invalid, and a greedy
        // cleaner would never pick the one still holding the damaged page).
        let mut rng = nandlab_core::Prng::new(3);
        let mut v = 2;
        while d.ftl().locate(Lpn::from_u64(victim)).unwrap().0 == ppn {
            let lpn = rng.below(lpns);
            if lpn != victim {
                write(&mut d, lpn, v)
                    .unwrap_or_else(|e| panic!("the cleaning failed a write: {e}"));
            }
            v += 1;
            assert!(v < 100_000, "the cleaner never moved LPN {victim}");
        }
        assert_eq!(media_kind(&read(&mut d, victim)), Some(ErrorKind::InvalidData));
        d.shutdown().unwrap();
    }
    let (media, _) = FileMedia::open(&path, &r, Mount::Scan).unwrap();
    let mut d = Device::recover(&r, Box::new(media), 1_000_000_000).unwrap();
    assert_eq!(media_kind(&read(&mut d, victim)), Some(ErrorKind::InvalidData));
    write(&mut d, victim, 77).unwrap();
    assert_eq!(read(&mut d, victim).unwrap(), page_of(victim, 77));
    let _ = std::fs::remove_file(&path);
}

/// A real I/O error of the image file — here a read past its end, after something truncated
/// the file under the running drive — reaches the host as `Media` with the `io::Error`'s kind
/// (`UnexpectedEof`), a context naming the file and the page, and the `io::Error` as source.
#[test]
fn an_io_error_of_the_image_keeps_its_kind_and_source() {
    let r = resolved(&[]);
    let (_dir, path) = image("truncated.img");
    let media = FileMedia::create(&path, &r).unwrap();
    let mut d = Device::with_media(&r, Box::new(media), None).unwrap();
    write(&mut d, 3, 1).unwrap();
    let (ppn, _) = d.ftl().locate(Lpn::new(3)).unwrap();
    let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    f.set_len(data_at(&path, ppn)).unwrap();
    let Err(RequestError::Media(e)) = read(&mut d, 3) else { panic!("the read succeeded") };
    assert_eq!(e.kind(), ErrorKind::UnexpectedEof, "{e}");
    assert!(e.context().contains("truncated.img") && e.context().contains("data read"), "{e}");
    let source = e.source().expect("the io::Error is the source");
    let io = source.downcast_ref::<std::io::Error>().expect("an io::Error");
    assert_eq!(io.kind(), ErrorKind::UnexpectedEof);
    let as_io: std::io::Error = e.into();
    assert_eq!(as_io.kind(), ErrorKind::UnexpectedEof);
    let _ = std::fs::remove_file(&path);
}
