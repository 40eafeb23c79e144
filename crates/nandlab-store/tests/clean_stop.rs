//! Goal: a clean stop records what the next mount must find. After it no write was interrupted,
//! so a record unreadable in both copies is damage (refused, never taken for a torn write whose
//! older version would be served), and records lost entirely — both copies zeroed — are found
//! missing by the recorded newest sequence number and page count. After the next write the
//! record says "open" again, so a crash from then on is a crash.
//! Method: a small page-FTL image, two versions of the first pages, the clean stop as `nandlab
//! serve` does it (shutdown, checkpoint, `record_clean_stop`), damage placed through
//! `nandlab_store::image_areas`.

use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use nandlab_core::{Config, Device, Dispatched, Io, Request, Resolved, Submission};
use nandlab_store::{FileMedia, Mount};

use nandlab_testkit::Scratch;

const PAGE: u64 = 4096;

fn resolved() -> Resolved {
    let o = [
        "device.blocks=24",
        "device.pages_per_block=16",
        "device.utilization=0.6",
        "ftl.placement=none",
        "ftl.cleaning=greedy",
    ];
    let mut r = Config::from_overrides(&o).unwrap().resolve().unwrap();
    r.served = true;
    r
}

/// The image `name` in a scratch directory of the test's own, removed when the guard drops.
fn image(name: &str) -> (Scratch, PathBuf) {
    let d = Scratch::new("nandlab-clean-stop");
    let path = d.join(name);
    (d, path)
}

fn area(path: &Path, name: &str) -> u64 {
    let info = nandlab_store::read_image_info(path).unwrap();
    let areas = nandlab_store::image_areas(&info);
    areas.into_iter().find(|a| a.name == name).unwrap().bytes.start
}

fn write(d: &mut Device, lpn: u64, v: u8) {
    d.dispatch(Submission::new(&Request::write(lpn * PAGE, PAGE)).io(Io::Write(&vec![
        v;
        PAGE
            as usize
    ])))
    .map(Dispatched::completion)
    .unwrap();
}

/// Pages 0..40 at version 1, then 0..10 at version 2 (physical pages 40..50); optionally a clean
/// stop. Returns the physical page of the newest write.
fn written(path: &Path, clean: bool) -> u64 {
    let r = resolved();
    let mut d =
        Device::with_media(&r, Box::new(FileMedia::create(path, &r).unwrap()), None).unwrap();
    for lpn in 0..40 {
        write(&mut d, lpn, 1);
    }
    for lpn in 0..10 {
        write(&mut d, lpn, 2);
    }
    let newest = u64::from(d.ftl().locate(nandlab_core::media::Lpn::new(9)).unwrap().0);
    if clean {
        d.shutdown().unwrap();
        d.checkpoint().unwrap();
        d.record_clean_stop().unwrap();
    } else {
        d.sync().unwrap();
    }
    newest
}

/// Overwrites both copies of page `ppn`'s OOB record with `copy`.
fn set_record(path: &Path, ppn: u64, copy: [u8; 32]) {
    let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    for name in ["OOB records A", "OOB records B"] {
        f.write_all_at(&copy, area(path, name) + ppn * 32).unwrap();
    }
}

fn garbage() -> [u8; 32] {
    let mut g = [0xA5u8; 32];
    g[0] = 0x5A;
    g
}

fn mount(path: &Path, how: Mount) -> Result<nandlab_store::MountReport, String> {
    FileMedia::open(path, &resolved(), how).map(|(_, report)| report).map_err(|e| e.to_string())
}

#[test]
fn after_a_crash_an_unreadable_last_record_is_a_torn_write() {
    let (_dir, path) = image("crash.img");
    let newest = written(&path, false);
    set_record(&path, newest, garbage());
    let report = mount(&path, Mount::Scan).unwrap();
    assert_eq!((report.clean_stop, report.torn_pages), (false, 1));
}

#[test]
fn after_a_clean_stop_an_unreadable_record_is_damage() {
    let (_dir, path) = image("clean-garbage.img");
    let newest = written(&path, true);
    assert!(mount(&path, Mount::Scan).unwrap().clean_stop);
    // That mount reopened the image ("open"); stop it cleanly again.
    let newest2 = written(&path, true);
    assert_eq!(newest, newest2);
    set_record(&path, newest, garbage());
    let named = format!("page {} of block {}", newest % 16, newest / 16);
    let e = mount(&path, Mount::Scan).unwrap_err();
    assert!(e.contains("stopped cleanly") && e.contains(&named), "{e}");
    // The checkpoint written at the stop maps the page: its record is missing.
    let e = mount(&path, Mount::Checkpoint).unwrap_err();
    assert!(e.contains("lost their OOB record") && e.contains(&named), "{e}");
}

#[test]
fn after_a_clean_stop_lost_records_are_found_missing() {
    // The newest record gone in both copies: it reads as erased, so only the recorded
    // sequence number shows it is missing (both mounts).
    let (_dir, path) = image("clean-newest.img");
    let newest = written(&path, true);
    set_record(&path, newest, [0; 32]);
    let e = mount(&path, Mount::Scan).unwrap_err();
    assert!(e.contains("sequence number"), "{e}");
    let e = mount(&path, Mount::Checkpoint).unwrap_err();
    assert!(e.contains("lost their OOB record"), "{e}");
    // An older record gone in both copies: a full scan counts one page fewer than recorded.
    let (_dir, path) = image("clean-older.img");
    written(&path, true);
    set_record(&path, 3, [0; 32]);
    let e = mount(&path, Mount::Scan).unwrap_err();
    assert!(e.contains("programmed pages"), "{e}");
}

#[test]
fn the_first_write_after_a_clean_stop_reopens_the_image() {
    let (_dir, path) = image("reopen.img");
    let r = resolved();
    let mut d =
        Device::with_media(&r, Box::new(FileMedia::create(&path, &r).unwrap()), None).unwrap();
    for lpn in 0..20 {
        write(&mut d, lpn, 1);
    }
    d.shutdown().unwrap();
    d.record_clean_stop().unwrap();
    // More writes after the record (a caller that went on), then a crash.
    write(&mut d, 20, 3);
    let last = u64::from(d.ftl().locate(nandlab_core::media::Lpn::new(20)).unwrap().0);
    d.sync().unwrap();
    drop(d);
    set_record(&path, last, garbage());
    let report = mount(&path, Mount::Scan).unwrap();
    assert_eq!((report.clean_stop, report.torn_pages), (false, 1), "{report:?}");
}
