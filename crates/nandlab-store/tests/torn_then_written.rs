//! Regression (fuzz target `image_recovery`, fuzz/README.md): a torn write (the last programmed
//! OOB record of the open block unreadable in both copies) is taken as garbage at mount; the
//! recovered drive then programs the next pages of that block. The restart after that must
//! still mount: before the fix the torn record, now followed by programmed pages, was refused as
//! "unreadable in both copies and followed by programmed pages", so two restarts in a row cost
//! the whole image. Both mounts (scan and checkpoint) and the page FTL and a hybrid one.

use std::os::unix::fs::FileExt;

use nandlab_core::{Config, Device, Dispatched, Io, Request, Resolved, Submission};
use nandlab_store::{FileMedia, Mount};

use nandlab_testkit::Scratch;

const PAGE: u64 = 4096;
const PPB: u64 = 16;

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

fn page_of(lpn: u64, v: u64) -> Vec<u8> {
    let mut p = Vec::with_capacity(PAGE as usize);
    while (p.len() as u64) < PAGE {
        p.extend_from_slice(&lpn.to_le_bytes());
        p.extend_from_slice(&v.to_le_bytes());
    }
    p
}

/// Byte offset of copy `copy` (0 = A, 1 = B) of the OOB records (32 bytes a record).
fn oob_area(path: &std::path::Path, copy: usize) -> u64 {
    let info = nandlab_store::read_image_info(path).unwrap();
    let name = ["OOB records A", "OOB records B"][copy];
    let areas = nandlab_store::image_areas(&info);
    areas.into_iter().find(|a| a.name == name).unwrap().bytes.start
}

/// The last programmed page of a partly programmed block, if any.
fn last_page_of_a_partial_block(r: &Resolved, path: &std::path::Path) -> Option<u64> {
    let image = std::fs::read(path).unwrap();
    let oob = oob_area(path, 0) as usize;
    for b in 0..u64::from(r.geometry.blocks) {
        let programmed = (0..PPB)
            .take_while(|p| {
                let at = oob + ((b * PPB + p) * 32) as usize;
                image[at..at + 32].iter().any(|&x| x != 0)
            })
            .count() as u64;
        if (1..PPB).contains(&programmed) {
            return Some(b * PPB + programmed - 1);
        }
    }
    None
}

fn torn_then_written(extra: &[&str], mount: Mount) {
    let r = resolved(extra);
    let dir = Scratch::new("nandlab-torn");
    let path = dir.join(format!("{}-{mount:?}.img", r.config.ftl.kind));
    let lpns = r.geometry.logical_pages;
    let mut expected = vec![0u64; lpns as usize];
    // Write until the open block is partly programmed, then "crash" (no shutdown).
    let torn_ppn = {
        let media = FileMedia::create(&path, &r).unwrap();
        let mut d = Device::with_media(&r, Box::new(media), None).unwrap();
        let mut i = 0u64;
        loop {
            i += 1;
            let lpn = (i * 7) % lpns;
            d.dispatch(
                Submission::new(&Request::write(lpn * PAGE, PAGE)).io(Io::Write(&page_of(lpn, i))),
            )
            .map(Dispatched::completion)
            .unwrap();
            expected[lpn as usize] = i;
            if i == 40 {
                d.checkpoint().unwrap();
            }
            d.sync().unwrap();
            if i > 60 {
                if let Some(p) = last_page_of_a_partial_block(&r, &path) {
                    break p;
                }
            }
        }
    };
    // Tear that page's OOB record: both copies fail their CRC.
    let f = std::fs::OpenOptions::new().read(true).write(true).open(&path).unwrap();
    for (copy, flip) in [(0, 0x5a), (1, 0xa5)] {
        let at = oob_area(&path, copy) + torn_ppn * 32;
        let mut rec = [0u8; 32];
        f.read_exact_at(&mut rec, at).unwrap();
        rec[4] ^= flip;
        f.write_all_at(&rec, at).unwrap();
    }
    drop(f);

    // First restart: the torn page is garbage; more writes follow it in its block.
    let version = 1_000_000;
    {
        let (media, report) = FileMedia::open(&path, &r, mount).unwrap();
        assert_eq!(report.torn_pages, 1, "{report:?}");
        let mut d = Device::recover(&r, Box::new(media), 1_000_000_000_000).unwrap();
        for k in 0..2 * PPB {
            let lpn = (k * 3) % lpns;
            d.dispatch(
                Submission::new(&Request::write(lpn * PAGE, PAGE))
                    .io(Io::Write(&page_of(lpn, version + k))),
            )
            .map(Dispatched::completion)
            .unwrap();
            expected[lpn as usize] = version + k;
        }
        d.sync().unwrap();
    }
    let image = std::fs::read(&path).unwrap();
    let next = oob_area(&path, 0) as usize + (torn_ppn as usize + 1) * 32;
    // The page FTL resumes its open block after the torn page (the case this test is about);
    // a hybrid FTL may put its writes elsewhere (then the test only checks nothing is lost).
    if r.config.ftl.kind == "page" {
        assert!(
            torn_ppn % PPB == PPB - 1 || image[next..next + 32].iter().any(|&x| x != 0),
            "the page after the torn one was not programmed"
        );
    }

    // Second restart: mounts, and serves every page it acknowledged (the torn page's older
    // copy, or zeros, only for the LPN whose unacknowledged write was torn).
    for mount2 in [Mount::Scan, Mount::Checkpoint] {
        let (media, report) = FileMedia::open(&path, &r, mount2)
            .unwrap_or_else(|e| panic!("{mount:?} then {mount2:?}: {e}"));
        assert_eq!(report.torn_pages, 0, "recorded as garbage, not torn again: {report:?}");
        let mut d = Device::recover(&r, Box::new(media), 2_000_000_000_000).unwrap();
        let mut buf = vec![0u8; PAGE as usize];
        for (lpn, &v) in expected.iter().enumerate() {
            let lpn = lpn as u64;
            d.dispatch(Submission::new(&Request::read(lpn * PAGE, PAGE)).io(Io::Read(&mut buf)))
                .map(Dispatched::completion)
                .unwrap();
            if v >= version {
                assert!(buf == page_of(lpn, v), "LPN {lpn} ({mount:?} then {mount2:?})");
            }
        }
    }
    let _ = std::fs::remove_file(&path);
}

#[test]
fn a_torn_write_followed_by_more_writes_mounts_again_page_ftl() {
    for mount in [Mount::Scan, Mount::Checkpoint] {
        torn_then_written(&[], mount);
    }
}

#[test]
fn a_torn_write_followed_by_more_writes_mounts_again_hybrid() {
    for mount in [Mount::Scan, Mount::Checkpoint] {
        torn_then_written(&["ftl.kind=sast", "ftl.log_blocks=4", "ftl.group_data_blocks=2"], mount);
    }
}
