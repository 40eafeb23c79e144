//! Goal: one lost 4 KiB page of an image's metadata — zeroed, as a failing disk or a careless
//! `dd` leaves it — never makes the served drive return an older version of a page, or zeros,
//! as good; and damage found after a clean stop is damage, never taken for a write a crash
//! interrupted.
//! Method: the served drive's own engine (`SimEngine`, the engine behind `nandlab serve`) on a
//! small image: every page written once, a quarter written again, FLUSH, then a clean stop
//! (`Engine::shutdown`, what SIGTERM runs) or a crash (the engine dropped). The damage is placed
//! by what the image holds, not by the format's offsets — a block header's or an OOB record's
//! copy is found by its content — so the same test runs against any image format. The drive is
//! reopened and every page read: its last written version, an I/O error, or a refused start-up
//! are all acceptable; anything else is served wrong as good.

use std::os::unix::fs::FileExt;
use std::path::Path;
use std::time::Instant;

use nandlab_core::Config;
use nandlab_nbd::{CommandKind, Engine, IoRequest};
use nandlab_serve::{resolve, SimEngine};

use nandlab_testkit::Scratch;

const PAGE: u64 = 4096;
const PAGES: u64 = 256;

fn config(image: &Path) -> nandlab_core::Resolved {
    let c = Config::from_overrides(&[
        "device.blocks=64",
        "device.pages_per_block=16",
        "device.utilization=0.5",
        "serve.emulate_latency=false",
    ])
    .unwrap();
    resolve(&c, image).unwrap()
}

/// A scratch directory of the caller's own, removed when it drops.
fn dir(name: &str) -> Scratch {
    Scratch::new(&format!("nandlab-lost-page-{name}"))
}

fn request(kind: CommandKind, lpn: u64, data: Vec<u8>) -> IoRequest {
    let length_bytes = if kind == CommandKind::Flush { 0 } else { PAGE as u32 };
    let offset_bytes = if kind == CommandKind::Flush { 0 } else { lpn * PAGE };
    IoRequest { kind, offset_bytes, length_bytes, fua: false, data, received: Instant::now() }
}

fn content(lpn: u64, version: u8) -> Vec<u8> {
    let mut p = vec![version; PAGE as usize];
    p[..8].copy_from_slice(&lpn.to_le_bytes());
    p
}

/// Writes every page (version 1), then the first quarter again (version 2), then FLUSH; stops
/// cleanly or not. Returns each page's last version.
fn written_image(image: &Path, clean_stop: bool) -> Vec<u8> {
    let _ = std::fs::remove_file(image);
    let mut e = SimEngine::open(config(image), image, None).unwrap();
    let mut expected = vec![0u8; PAGES as usize];
    for (version, pages) in [(1u8, 0..PAGES), (2, 0..PAGES / 4)] {
        for lpn in pages {
            let out = e.submit(request(CommandKind::Write, lpn, content(lpn, version)));
            assert!(out.error.is_none(), "write of LPN {lpn}");
            expected[lpn as usize] = version;
        }
    }
    assert!(e.submit(request(CommandKind::Flush, 0, Vec::new())).error.is_none());
    if clean_stop {
        e.shutdown();
    }
    drop(e);
    expected
}

/// Reopens the image and reads every page: `None` if the start-up refused it, else how many
/// pages came back wrong (an error is not wrong: the drive said it could not read them).
fn wrong_pages(image: &Path, expected: &[u8]) -> Option<u64> {
    let mut e = SimEngine::open(config(image), image, None).ok()?;
    let mut wrong = 0;
    for (lpn, &v) in expected.iter().enumerate() {
        let out = e.submit(request(CommandKind::Read, lpn as u64, Vec::new()));
        if out.error.is_none() && out.data != content(lpn as u64, v) {
            wrong += 1;
        }
    }
    Some(wrong)
}

fn le_u32(b: &[u8]) -> u32 {
    u32::from_le_bytes(b[..4].try_into().unwrap())
}

/// Every readable OOB record copy in the image: `(offset, lpn, seq)`. A copy is 32 bytes on a
/// 32-byte boundary: state 0x5A, region, two zero bytes, LPN, sequence number, data CRC, eight
/// zero bytes, CRC-32 of the first 28 bytes.
fn oob_copies(image: &[u8]) -> Vec<(u64, u32, u64)> {
    image
        .chunks_exact(32)
        .enumerate()
        .filter(|(_, c)| {
            c[0] == 0x5A
                && c[2..4] == [0, 0]
                && c[20..28].iter().all(|&b| b == 0)
                && crc32fast::hash(&c[..28]) == le_u32(&c[28..])
        })
        .map(|(i, c)| {
            (i as u64 * 32, le_u32(&c[4..]), u64::from_le_bytes(c[8..16].try_into().unwrap()))
        })
        .collect()
}

/// The first block header copy of a block programmed since its erase: 16 bytes on a 16-byte
/// boundary after the superblock page — erase count, flags = 1, zero, CRC-32 of the first 12.
fn a_block_header_copy(image: &[u8]) -> u64 {
    let first_oob = oob_copies(image).first().map(|c| c.0).unwrap();
    (4096..first_oob)
        .step_by(16)
        .find(|&at| {
            let c = &image[at as usize..at as usize + 16];
            le_u32(&c[4..]) == 1
                && le_u32(&c[8..]) == 0
                && crc32fast::hash(&c[..12]) == le_u32(&c[12..])
        })
        .expect("a header of a programmed block")
}

fn zero_page_at(path: &Path, at: u64) {
    let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.write_all_at(&[0u8; 4096], at / 4096 * 4096).unwrap();
}

fn flip_byte_at(path: &Path, at: u64) {
    let f = std::fs::OpenOptions::new().read(true).write(true).open(path).unwrap();
    let mut b = [0u8];
    f.read_exact_at(&mut b, at).unwrap();
    f.write_all_at(&[b[0] ^ 0x5A], at).unwrap();
}

/// A zeroed page of block headers used to read as "never erased, nothing programmed" for every
/// block in it, so the start-up "completed" an erase of each and served their data as zeros.
#[test]
fn a_zeroed_page_of_block_headers_after_a_clean_stop_loses_nothing() {
    let d = dir("headers");
    let image = d.join("a.img");
    let expected = written_image(&image, true);
    zero_page_at(&image, a_block_header_copy(&std::fs::read(&image).unwrap()));
    assert_eq!(wrong_pages(&image, &expected), Some(0), "served wrong data, or refused");
}

/// A zeroed page of OOB records used to take both copies of each record in it (they shared the
/// page), so the overwritten version of those pages was served as current.
#[test]
fn a_zeroed_page_of_oob_records_never_serves_an_overwritten_version() {
    for clean in [false, true] {
        let d = dir(&format!("oob-{clean}"));
        let image = d.join("a.img");
        let expected = written_image(&image, clean);
        let copies = oob_copies(&std::fs::read(&image).unwrap());
        // The newest record of LPN 0 (written twice).
        let newest = copies.iter().filter(|c| c.1 == 0).max_by_key(|c| c.2).unwrap();
        zero_page_at(&image, newest.0);
        assert_eq!(wrong_pages(&image, &expected), Some(0), "clean stop {clean}");
    }
}

/// After a clean stop no write was interrupted: both copies of the newest record damaged is
/// damage (the start-up refuses, or that page reads as an error), never a torn write whose
/// older version may be served.
#[test]
fn damage_to_the_newest_record_after_a_clean_stop_is_not_a_torn_write() {
    let d = dir("newest");
    let image = d.join("a.img");
    let expected = written_image(&image, true);
    let copies = oob_copies(&std::fs::read(&image).unwrap());
    let seq = copies.iter().map(|c| c.2).max().unwrap();
    let both: Vec<u64> = copies.iter().filter(|c| c.2 == seq).map(|c| c.0).collect();
    assert_eq!(both.len(), 2, "two copies of the newest record");
    for at in both {
        flip_byte_at(&image, at + 9); // inside the sequence number: the copy fails its CRC
    }
    match wrong_pages(&image, &expected) {
        None | Some(0) => {}
        Some(n) => panic!("{n} page(s) served wrong as good"),
    }
}
