//! Goal: the media-player workload writes exactly the sectors its module doc promises (entry at
//! create; per write call data, then the FAT in both copies; entry and FSInfo at close; entry,
//! FAT and FSInfo at delete), keeps the volume under its high-water mark by deleting files and
//! reuses their clusters, is deterministic, measures `passes` × the logical bytes, and rejects
//! bad configs naming the key; the layouts of `postmark` and `embedded` do not change.
//! Method: hand-check a tiny FAT32 volume through the generator, then run small resolved configs
//! and compare the request streams with the model's state and counters.

use std::collections::BTreeMap;

use super::fat::{FatLayout, SECTOR_BYTES};
use super::media::{MediaWorkload, MEDIA_RESERVED_SECTORS};
use super::{FsConfig, WorkItem, Workload};
use crate::config::{Config, Resolved};
use crate::error::ConfigError;
use crate::request::{Request, RequestKind};

fn resolve(overrides: &[&str]) -> Result<Resolved, ConfigError> {
    let mut o = vec!["workload.kind=media-player"];
    o.extend_from_slice(overrides);
    Config::from_overrides(&o)?.resolve()
}

fn items(overrides: &[&str]) -> Vec<WorkItem> {
    MediaWorkload::new(&resolve(overrides).unwrap().workload).unwrap().collect()
}

fn requests(items: &[WorkItem]) -> Vec<Request> {
    items
        .iter()
        .filter_map(|i| match i {
            WorkItem::Request(q) => Some(*q),
            WorkItem::StartMeasurement | WorkItem::PrefillDone => None,
            WorkItem::Continue(_) => unreachable!("generators never split requests"),
        })
        .collect()
}

fn write_sectors(requests: &[Request]) -> u64 {
    requests
        .iter()
        .filter(|q| q.kind == RequestKind::Write)
        .map(|q| q.length_bytes / SECTOR_BYTES)
        .sum()
}

/// A write of `sectors` sectors at `sector`.
fn w(sector: u64, sectors: u64) -> Request {
    Request::write(sector * SECTOR_BYTES, sectors * SECTOR_BYTES)
}

/// 70,000 sectors with 512-byte clusters: 68,872 clusters, so FAT32 (4-byte entries, 128 per
/// FAT sector). Boot sector 0, FSInfo 1, FAT 1 at 2..549, FAT 2 at 549..1096, root directory
/// 1096..1128, cluster c at sector 1128 + c − 2.
const TINY_FAT32: [&str; 4] = [
    "device.logical_bytes=35840000",
    "workload.prefill=false",
    "workload.fs.cluster_bytes=512",
    "workload.fs.data_align_bytes=512",
];

#[test]
fn tiny_fat32_layout_has_an_fsinfo_sector() {
    let l = FatLayout::with_reserved(70_000, 512, 512, MEDIA_RESERVED_SECTORS).unwrap();
    assert_eq!((l.fat_entry_bytes, l.fat_sectors, l.clusters), (4, 547, 68_872));
    assert_eq!((l.reserved_sectors, l.fsinfo_sector), (2, Some(1)));
    assert_eq!(
        (l.fat_start(0), l.fat_start(1), l.root_dir_start(), l.data_start()),
        (2, 549, 1096, 1128)
    );
    // The same volume as postmark and embedded lay it out: one reserved sector, no FSInfo.
    let plain = FatLayout::aligned(70_000, 512, 512).unwrap();
    assert_eq!((plain.reserved_sectors, plain.fsinfo_sector), (1, None));
    assert_eq!(plain, FatLayout::new(70_000, 512).unwrap());
    // Padding comes on top of the reserved sectors; a FAT16-sized volume has no FSInfo.
    let aligned = FatLayout::with_reserved(70_000, 4096, 4096, 2).unwrap();
    assert_eq!(aligned.data_start() % 8, 0);
    assert!(aligned.reserved_sectors >= 2);
    assert_eq!(aligned.fsinfo_sector, None, "{} clusters: FAT16", aligned.clusters);
}

#[test]
fn one_file_written_then_deleted_for_the_next_on_a_tiny_fat32_volume() {
    // 130-cluster files written in calls of 100 clusters; the high-water mark (0.003 × 68,872
    // = 206 clusters) holds the folder and one file. Every operation writes (read_bias = 0) and
    // the measured part stops after its first operation (0.001 × 70,000 = 70 sectors).
    let mut o = TINY_FAT32.to_vec();
    o.extend([
        "workload.fs.file_bytes_min=66560",
        "workload.fs.file_bytes_max=66560",
        "workload.fs.record_bytes=51200",
        "workload.fs.fill_fraction=0.003",
        "workload.fs.read_bias=0",
        "workload.passes=0.001",
    ]);
    let r = resolve(&o).unwrap();
    let mut wl = MediaWorkload::new(&r.workload).unwrap();
    assert_eq!(wl.high_water_clusters(), 206);
    let all: Vec<WorkItem> = wl.by_ref().collect();
    let marker = all.iter().position(|i| *i == WorkItem::StartMeasurement).unwrap();
    let before = requests(&all[..marker]);
    // Format: boot + FSInfo, each FAT in 128-sector requests, the root directory.
    let mut format = vec![w(0, 2)];
    for start in [2, 549] {
        format.extend([0, 128, 256, 384].map(|i| w(start + i, 128)));
        format.push(w(start + 512, 35));
    }
    format.push(w(1096, 32));
    assert_eq!(before[..12], format[..]);
    let population = [
        // mkdir: the folder's cluster 2, its FAT sector in both copies, root entry 0.
        w(1128, 1),
        w(2, 1),
        w(549, 1),
        w(1096, 1),
        // create: the file's entry (slot 2 of the folder, in its only sector), size 0.
        w(1128, 1),
        // Call 1: clusters 3..=102, then FAT sector 0 (entries 0..128) in both copies.
        w(1129, 100),
        w(2, 1),
        w(549, 1),
        // Call 2: clusters 103..=132, then the entries of 102..=132: FAT sectors 0 and 1.
        w(1229, 30),
        w(2, 2),
        w(549, 2),
        // close: the entry (final size), FSInfo.
        w(1128, 1),
        w(1, 1),
    ];
    assert_eq!(before[12..], population[..]);
    let measured = requests(&all[marker + 1..]);
    let expected = [
        // The next file does not fit: delete the first (entry, its chain's FAT sectors 0 and 1
        // in both copies, FSInfo).
        w(1128, 1),
        w(2, 2),
        w(549, 2),
        w(1, 1),
        // The new file reuses the entry slot but, next fit, not the clusters: 133..=232 ...
        w(1128, 1),
        w(1259, 100),
        w(3, 1),
        w(550, 1),
        // ... and 233..=262, whose FAT entries (232..=262) are in sectors 1 and 2.
        w(1359, 30),
        w(3, 2),
        w(550, 2),
        w(1128, 1),
        w(1, 1),
    ];
    assert_eq!(measured, expected);
    let s = wl.stats();
    assert_eq!((s.files_populated, s.files_written, s.files_deleted, s.files_played), (1, 1, 1, 0));
    assert_eq!(s.sectors.data, 130);
    assert_eq!(s.sectors.fat, 4 + 2 + 4);
    assert_eq!((s.sectors.directory, s.sectors.fsinfo), (3, 2));
    assert_eq!(s.sectors.written(), write_sectors(&measured));
    assert_eq!(s.unmeasured.written(), write_sectors(&before[12..]));
    assert_eq!(wl.files().len(), 1);
    assert_eq!(wl.files()[0].clusters(), (133..=262).collect::<Vec<u32>>());
    assert_eq!(wl.volume().allocated_clusters(), 131);
}

#[test]
fn a_small_fat16_volume_writes_no_fsinfo() {
    // 64 blocks × 64 pages × 0.8 × 4 KiB: 3.2k clusters, FAT16.
    let all = items(&["device.blocks=64", "device.pages_per_block=64", "workload.prefill=false"]);
    let q = requests(&all);
    // After the format, nothing is written below the first FAT (sector 8 with the padding).
    assert_eq!(q[0], w(0, 1));
    assert!(q[1..].iter().all(|q| q.offset_bytes >= 2 * SECTOR_BYTES));
}

#[test]
fn the_volume_stays_under_its_mark_and_freed_clusters_are_reused() {
    let r = resolve(&[
        "device.logical_bytes=67108864",
        "workload.media=mp3",
        "workload.prefill=false",
        "workload.passes=3",
    ])
    .unwrap();
    let mut wl = MediaWorkload::new(&r.workload).unwrap();
    let l = *wl.volume().layout();
    let mark = wl.high_water_clusters();
    assert_eq!(mark, (l.clusters as f64 * 0.9).floor() as u64);
    let mut measuring = false;
    let mut files_at_start = 0;
    // How often each data-region sector is written while measuring.
    let mut writes: BTreeMap<u64, u32> = BTreeMap::new();
    while let Some(item) = wl.next() {
        assert!(wl.volume().allocated_clusters() <= mark);
        match item {
            WorkItem::StartMeasurement => {
                measuring = true;
                files_at_start = wl.files().len();
                // Population stopped at the mark: one more 5 MB file would not fit.
                let max_clusters = 5_000_000u64.div_ceil(l.cluster_bytes());
                assert!(wl.volume().allocated_clusters() + max_clusters + 1 > mark);
            }
            WorkItem::Request(q) if measuring && q.kind == RequestKind::Write => {
                let first = q.offset_bytes / SECTOR_BYTES;
                if first >= l.data_start() {
                    for s in first..first + q.length_bytes / SECTOR_BYTES {
                        *writes.entry(s).or_default() += 1;
                    }
                }
            }
            WorkItem::Request(_) | WorkItem::PrefillDone => {}
            WorkItem::Continue(_) => unreachable!("generators never split requests"),
        }
    }
    let s = wl.stats();
    assert!(s.files_populated >= 10 && files_at_start as u64 == s.files_populated, "{s:?}");
    assert!(s.files_deleted > 10 && s.files_written > 10 && s.files_played > 0, "{s:?}");
    assert_eq!(s.files_populated + s.files_written - s.files_deleted, wl.files().len() as u64);
    // Three volumes' worth through a 90 %-full volume: clusters are allocated again and again.
    let rewritten = writes.values().filter(|n| **n >= 2).count() as u64;
    assert!(rewritten > l.clusters * l.sectors_per_cluster / 2, "{rewritten}");
    assert_eq!(s.dropped_full, 0);
}

#[test]
fn same_seed_same_stream_and_seeds_differ() {
    for media in ["camera", "mp3", "movie"] {
        let m = format!("workload.media={media}");
        let base = ["device.logical_bytes=67108864", m.as_str(), "workload.prefill=false"];
        let a = items(&base);
        assert_eq!(a, items(&base), "{media}");
        let mut other = base.to_vec();
        other.push("run.seed=2");
        assert_ne!(a, items(&other), "{media}");
    }
}

#[test]
fn the_measured_part_writes_passes_times_the_logical_bytes() {
    for (media, passes) in [("camera", "1"), ("mp3", "0.5"), ("movie", "2")] {
        let m = format!("workload.media={media}");
        let p = format!("workload.passes={passes}");
        let r = resolve(&["device.logical_bytes=67108864", &m, &p]).unwrap();
        let target = (passes.parse::<f64>().unwrap() * 67_108_864.0 / 512.0).ceil() as u64;
        let mut wl = MediaWorkload::new(&r.workload).unwrap();
        let all: Vec<WorkItem> = wl.by_ref().collect();
        let marker = all.iter().position(|i| *i == WorkItem::StartMeasurement).unwrap();
        let measured = requests(&all[marker + 1..]);
        let written = write_sectors(&measured);
        let s = wl.stats();
        assert_eq!(written, s.sectors.written(), "{media}");
        assert_eq!(
            s.sectors.read,
            measured.iter().map(|q| q.length_bytes / 512).sum::<u64>() - written
        );
        assert!(written >= target, "{media}: {written} < {target}");
        // The last operation is one file (its deletes and its write, metadata included).
        let file = r.config.workload.param::<FsConfig>("fs").unwrap().file_bytes_max.unwrap() / 512;
        let slack = file + file / 10 + 1000;
        assert!(written < target + slack, "{media}: {written} ≥ {target} + {slack}");
        // Metadata is a small but real part of the writes.
        assert!(s.sectors.metadata() > 0 && s.sectors.metadata() * 20 < s.sectors.data, "{s:?}");
    }
}

#[test]
fn warmup_passes_write_unmeasured_operations_after_the_population() {
    let base = ["device.logical_bytes=67108864", "workload.media=mp3", "workload.prefill=false"];
    let mut a = MediaWorkload::new(&resolve(&base).unwrap().workload).unwrap();
    a.by_ref().for_each(drop);
    let mut o = base.to_vec();
    o.push("workload.warmup_passes=1");
    let mut b = MediaWorkload::new(&resolve(&o).unwrap().workload).unwrap();
    b.by_ref().for_each(drop);
    let (sa, sb) = (a.stats(), b.stats());
    assert_eq!(sa.files_populated, sb.files_populated);
    let lb = 67_108_864 / 512;
    assert!(sb.unmeasured.written() >= sa.unmeasured.written() + lb, "{sa:?} {sb:?}");
    assert!(sb.sectors.written() >= lb);
}

#[test]
fn files_in_the_root_delete_to_free_an_entry() {
    // 600 one-cluster files would fit under the mark, but the fixed root holds 512 entries.
    let r = resolve(&[
        "device.logical_bytes=67108864",
        "workload.prefill=false",
        "workload.fs.directories=0",
        "workload.fs.file_bytes_min=4096",
        "workload.fs.file_bytes_max=4096",
        "workload.fs.fill_fraction=0.2",
        "workload.passes=0.1",
    ])
    .unwrap();
    let mut wl = MediaWorkload::new(&r.workload).unwrap();
    wl.by_ref().for_each(drop);
    let s = wl.stats();
    assert_eq!(s.files_populated, 512);
    assert!(s.files_deleted > 0 && wl.files().len() == 512, "{s:?}");
}

#[test]
fn estimates_are_the_right_order_of_magnitude() {
    for media in ["camera", "mp3", "movie"] {
        let m = format!("workload.media={media}");
        let r = resolve(&["device.logical_bytes=67108864", &m, "workload.passes=2"]).unwrap();
        let wl = MediaWorkload::new(&r.workload).unwrap();
        let estimate = wl.estimated_requests() as f64;
        let n = wl.filter(|i| matches!(i, WorkItem::Request(_))).count() as f64;
        assert!((estimate / n - 1.0).abs() < 0.25, "{media}: estimate {estimate}, actual {n}");
    }
}

#[test]
fn dispatch_through_workload() {
    let r = resolve(&["device.logical_bytes=67108864", "workload.prefill=false"]).unwrap();
    let direct: Vec<WorkItem> = MediaWorkload::new(&r.workload).unwrap().collect();
    let w = Workload::new(&r.workload).unwrap();
    assert_eq!(
        w.estimated_requests(),
        MediaWorkload::new(&r.workload).unwrap().estimated_requests()
    );
    assert_eq!(w.collect::<Vec<_>>(), direct);
    let pm = Config::from_overrides(&["workload.kind=postmark"]).unwrap().resolve().unwrap();
    assert_eq!(MediaWorkload::new(&pm.workload).unwrap_err().key, "workload.kind");
}

#[test]
fn config_defaults_are_filled_per_media() {
    for (media, min, max, read_bias) in [
        ("camera", 900_000, 1_100_000, 0.0),
        ("mp3", 4_000_000, 5_000_000, 0.3),
        ("movie", 15_000_000, 30_000_000, 0.3),
    ] {
        let m = format!("workload.media={media}");
        let r = resolve(&["device.logical_bytes=67108864", &m]).unwrap();
        let w = &r.config.workload;
        assert_eq!(w.param::<String>("media").as_deref(), Some(media));
        assert_eq!((w.passes, w.warmup_passes, w.prefill), (Some(1.0), Some(0.0), Some(true)));
        let fs = w.param::<FsConfig>("fs").unwrap();
        assert_eq!((fs.file_bytes_min, fs.file_bytes_max), (Some(min), Some(max)), "{media}");
        assert_eq!(fs.read_bias, Some(read_bias));
        assert_eq!((fs.cluster_bytes, fs.data_align_bytes), (Some(4096), Some(4096)));
        assert_eq!((fs.directories, fs.record_bytes), (Some(1), Some(65_536)));
        assert_eq!(fs.fill_fraction, Some(0.9));
        assert_eq!((fs.files, fs.transactions, fs.create_bias), (None, None, None));
        let again = r.config.resolve().unwrap();
        assert_eq!(again.config, r.config);
        let text = toml::to_string(&r.config).unwrap();
        assert_eq!(Config::from_toml(&text, "x").unwrap(), r.config, "{text}");
    }
    let r = resolve(&["device.logical_bytes=67108864"]).unwrap();
    assert_eq!(r.config.workload.param::<String>("media").as_deref(), Some("camera"));
    // The other file-system kinds keep their resolved configs: no media, no fill fraction.
    let pm = Config::from_overrides(&["workload.kind=postmark"]).unwrap().resolve().unwrap();
    assert_eq!(pm.config.workload.param::<String>("media"), None);
    assert_eq!(pm.config.workload.param::<FsConfig>("fs").unwrap().fill_fraction, None);
}

#[test]
fn config_errors_name_the_key() {
    let key = |o: &[&str]| {
        let mut all = vec!["device.logical_bytes=67108864"];
        all.extend_from_slice(o);
        resolve(&all).unwrap_err().key
    };
    assert_eq!(key(&["workload.media=tape"]), "workload.media");
    assert_eq!(key(&["workload.fs.fill_fraction=0"]), "workload.fs.fill_fraction");
    assert_eq!(key(&["workload.fs.fill_fraction=1.5"]), "workload.fs.fill_fraction");
    assert_eq!(key(&["workload.fs.read_bias=1"]), "workload.fs.read_bias");
    assert_eq!(key(&["workload.fs.record_bytes=0"]), "workload.fs.record_bytes");
    assert_eq!(key(&["workload.fs.file_bytes_min=0"]), "workload.fs.file_bytes_min");
    assert_eq!(key(&["workload.fs.file_bytes_min=2000000"]), "workload.fs.file_bytes_min");
    assert_eq!(key(&["workload.fs.cluster_bytes=1000"]), "workload.fs.cluster_bytes");
    assert_eq!(key(&["workload.fs.directories=513"]), "workload.fs.directories");
    assert_eq!(key(&["workload.fs.files=10"]), "workload.fs.files");
    assert_eq!(key(&["workload.fs.transactions=10"]), "workload.fs.transactions");
    assert_eq!(key(&["workload.fs.create_bias=0.5"]), "workload.fs.create_bias");
    // 64 MiB × 0.9 cannot hold a 100 MB movie.
    let e = resolve(&["device.logical_bytes=67108864", "workload.fs.file_bytes_max=100000000"])
        .unwrap_err();
    assert_eq!(e.key, "workload.fs.file_bytes_max");
    assert!(e.message.contains("fill_fraction"), "{e}");
    let poisson = ["workload.arrival=poisson", "workload.arrival_rate_per_s=10"];
    assert_eq!(key(&poisson), "workload.arrival");
    // Media belongs to media-player, the fill fraction too.
    let other = |o: &[&str]| Config::from_overrides(o).unwrap().resolve().unwrap_err().key;
    assert_eq!(other(&["workload.kind=postmark", "workload.media=mp3"]), "workload.media");
    assert_eq!(other(&["workload.media=mp3"]), "workload.media");
    let fill = "workload.fs.fill_fraction=0.5";
    assert_eq!(other(&["workload.kind=postmark", fill]), "workload.fs.fill_fraction");
    assert_eq!(other(&["workload.kind=embedded", fill]), "workload.fs.fill_fraction");
    assert_eq!(key(&["workload.fs.delete_order=lru"]), "workload.fs.delete_order");
    let order = "workload.fs.delete_order=random";
    assert_eq!(other(&["workload.kind=postmark", order]), "workload.fs.delete_order");
}

/// `delete_order = "oldest"` keeps the volume a circular log: the files on it are always the
/// most recent ones, each one contiguous (one run of clusters, or two where the next-fit
/// pointer wraps); `random` fragments new files across the holes of deleted ones.
#[test]
fn oldest_first_deletion_keeps_files_contiguous() {
    let runs = |f: &crate::workload::fat::FsFile| {
        1 + f.clusters().windows(2).filter(|w| w[1] != w[0] + 1).count()
    };
    let mut fragmented = Vec::new();
    for order in ["oldest", "random"] {
        let r = resolve(&[
            "device.logical_bytes=67108864",
            "workload.media=camera",
            "workload.prefill=false",
            "workload.passes=3",
            &format!("workload.fs.delete_order={order}"),
        ])
        .unwrap();
        let mut wl = MediaWorkload::new(&r.workload).unwrap();
        let mut worst = 0;
        let mut split = 0;
        while wl.next().is_some() {
            for f in wl.files() {
                worst = worst.max(runs(f));
            }
        }
        for f in wl.files() {
            split += usize::from(runs(f) > 1);
        }
        assert!(wl.stats().files_deleted > 50, "{order}: {:?}", wl.stats());
        if order == "oldest" {
            assert!(worst <= 2, "oldest-first: a file in {worst} pieces");
        }
        fragmented.push(split);
    }
    assert!(fragmented[1] > 10 * fragmented[0].max(1), "{fragmented:?}");
}
