//! Goal: a file or device target is written only when nothing is lost: a file holding data
//! needs `--destroy-data`, and a file another process holds locked — as `nandlab serve` holds its
//! image — is refused even with it, naming that process. (`nandlab probe` and `nandlab pbr` used
//! to overwrite a served image without either.)
//! Method: `open_target` on files in a temp directory; the lock is taken by this test process.

use nandlab_probe::{open_target, TargetSpec};
use std::io::Write;

use nandlab_testkit::Scratch;

/// A scratch directory of the test's own, removed when it drops.
fn dir() -> Scratch {
    Scratch::new("nandlab-target-guard")
}

fn open(path: &std::path::Path, destroy_data: bool) -> Result<(), String> {
    let spec = TargetSpec::parse(path.to_str().unwrap(), &[])?;
    open_target(&spec, destroy_data).map(|_| ())
}

#[test]
fn a_file_holding_data_needs_destroy_data() {
    let dir = dir();
    let path = dir.join("data.img");
    let mut f = std::fs::File::create(&path).unwrap();
    f.write_all(&[7u8; 65536]).unwrap();
    f.sync_all().unwrap();
    drop(f);
    let e = open(&path, false).unwrap_err();
    assert!(e.contains("holding data") && e.contains("--destroy-data"), "{e}");
    assert!(std::fs::read(&path).unwrap().iter().all(|&b| b == 7), "the file was changed");
    open(&path, true).unwrap();
}

#[test]
fn a_new_or_sparse_file_holds_nothing_to_lose() {
    let dir = dir();
    let path = dir.join("sparse.img");
    std::fs::File::create(&path).unwrap().set_len(1 << 24).unwrap();
    open(&path, false).unwrap();
}

#[test]
fn a_locked_file_is_refused_even_with_destroy_data_naming_the_holder() {
    let dir = dir();
    let path = dir.join("held.img");
    std::fs::write(&path, [1u8; 8192]).unwrap();
    let holder = std::fs::File::open(&path).unwrap();
    holder.try_lock().unwrap();
    for destroy in [false, true] {
        let e = open(&path, destroy).unwrap_err();
        let me = format!("in use by process {}", std::process::id());
        assert!(e.contains(&me) && e.contains("refusing"), "{e}");
    }
    drop(holder);
    open(&path, true).unwrap();
    // While a target has the file open, it holds the lock itself.
    let spec = TargetSpec::parse(path.to_str().unwrap(), &[]).unwrap();
    let target = open_target(&spec, true).unwrap();
    let other = std::fs::File::open(&path).unwrap();
    assert!(other.try_lock().is_err(), "the target must hold the file locked");
    drop(target);
}
