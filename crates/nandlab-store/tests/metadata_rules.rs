//! Goal: the metadata-only rule set keeps every page e2fsck needs and drops file data.
//! Method: build a populated ext4 image with `mke2fs -d` (skipped with a note if e2fsprogs is
//! missing), pass its pages through the classifier in disk order, zero every dropped page, and
//! run `e2fsck -f -n` on the result; it must be clean while most file-data pages are dropped.

use std::process::Command;

use nandlab_store::Classifier;

use nandlab_testkit::Scratch;

#[test]
fn ext4_image_with_dropped_data_checks_clean() {
    let have = |bin: &str| {
        Command::new("sh")
            .arg("-c")
            .arg(format!("command -v {bin}"))
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !have("mke2fs") || !have("e2fsck") {
        eprintln!("note: e2fsprogs missing; skipping");
        return;
    }
    let dir = Scratch::new("nandlab-meta");
    let src = dir.join("src");
    std::fs::create_dir_all(src.join("sub/deeper")).unwrap();
    for i in 0..40u32 {
        let data: Vec<u8> = (0..(i + 1) * 37_000)
            .map(|j| (j.wrapping_mul(2_654_435_761) >> 11) as u8 | 1)
            .collect();
        std::fs::write(src.join(format!("sub/file{i}")), &data).unwrap();
    }
    for i in 0..300 {
        std::fs::write(src.join(format!("sub/deeper/small{i}")), format!("small {i}\n")).unwrap();
    }
    let image = dir.join("fs.img");
    let out = Command::new("mke2fs")
        .args(["-q", "-F", "-t", "ext4", "-b", "4096", "-d"])
        .arg(&src)
        .arg(&image)
        .arg("64M")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut bytes = std::fs::read(&image).unwrap();
    let pages = bytes.len() / 4096;
    let mut c = Classifier::new(4096, pages as u64);
    let mut data_pages = 0;
    for (lpn, page) in bytes.chunks_mut(4096).enumerate() {
        if !c.keep(lpn as u64, page) {
            if page.iter().any(|&b| b != 0) {
                data_pages += 1;
            }
            page.fill(0);
        }
    }
    std::fs::write(&image, &bytes).unwrap();
    let fsck = Command::new("e2fsck").args(["-f", "-n"]).arg(&image).output().unwrap();
    let text =
        String::from_utf8_lossy(&fsck.stdout).into_owned() + &String::from_utf8_lossy(&fsck.stderr);
    eprintln!("kept {} pages, dropped {data_pages} non-zero pages\n{text}", c.kept_pages);
    assert!(fsck.status.success(), "e2fsck found problems after dropping data:\n{text}");
    // 40 files of 37 KB .. 1.5 MB = about 7,400 data pages; nearly all must be dropped.
    assert!(data_pages > 7000, "only {data_pages} data pages dropped");
}
