//! Goal: the FAT volume model writes exactly the sectors a FAT driver writes (hand-checked on
//! tiny volumes), and the `postmark` / `embedded` generators are deterministic, stay in range,
//! clean up after themselves and touch the sector sets they claim.
//! Method: drive `FatVolume` directly and compare extents with offsets worked out by hand; run
//! the generators from small resolved configs and inspect the request streams and the model.

use std::collections::BTreeSet;

use super::fat::{
    Extent, FatLayout, FatVolume, FsError, FsWorkload, MAX_TRANSFER_SECTORS, ROOT, SECTOR_BYTES,
};
use super::{synthetic_items, FsConfig, Synthetic, WorkItem, Workload};
use crate::config::{Config, Resolved};
use crate::error::ConfigError;
use crate::request::{Request, RequestKind};

fn w(sector: u64, sectors: u64) -> Extent {
    Extent { kind: RequestKind::Write, sector, sectors }
}

fn r(sector: u64, sectors: u64) -> Extent {
    Extent { kind: RequestKind::Read, sector, sectors }
}

/// 2048 sectors (1 MiB), 4 KiB clusters: boot 0, FAT 1 at 1, FAT 2 at 2, root 3..35, data from
/// 35 (cluster 2 = sectors 35..43, cluster 3 = 43..51, ...).
fn tiny() -> FatVolume {
    FatVolume::new(FatLayout::new(2048, 4096).unwrap())
}

fn resolve(overrides: &[&str]) -> Result<Resolved, ConfigError> {
    let mut o = vec!["device.blocks=64", "device.pages_per_block=64"];
    o.extend_from_slice(overrides);
    Config::from_overrides(&o)?.resolve()
}

fn items(overrides: &[&str]) -> Vec<WorkItem> {
    FsWorkload::new(&resolve(overrides).unwrap().workload).unwrap().collect()
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

/// The requests after `StartMeasurement`.
fn measured(items: &[WorkItem]) -> Vec<Request> {
    let at = items.iter().position(|i| *i == WorkItem::StartMeasurement).unwrap();
    requests(&items[at + 1..])
}

#[test]
fn tiny_layout() {
    let l = FatLayout::new(2048, 4096).unwrap();
    assert_eq!(l.fat_entry_bytes, 2);
    assert_eq!(l.fat_sectors, 1);
    assert_eq!((l.fat_start(0), l.fat_start(1)), (1, 2));
    assert_eq!(l.root_dir_start(), 3);
    assert_eq!(l.root_dir_sectors, 32);
    assert_eq!(l.data_start(), 35);
    assert_eq!(l.clusters, 251);
    assert_eq!(l.cluster_sector(2), 35);
    assert!(l.data_start() + l.clusters * l.sectors_per_cluster <= l.total_sectors);
    let mut out = Vec::new();
    tiny().format(&mut out);
    assert_eq!(out, [w(0, 1), w(1, 1), w(2, 1), w(3, 32)]);
}

#[test]
fn large_volumes_use_fat32_entries_and_fats_cover_every_cluster() {
    // 1 GiB with 4 KiB clusters: about 262k clusters.
    let l = FatLayout::new(2_097_152, 4096).unwrap();
    assert_eq!(l.fat_entry_bytes, 4);
    assert_eq!(l.fat_sectors, 2048);
    assert_eq!(l.clusters, (2_097_152 - 1 - 32 - 2 * 2048) / 8);
    assert!((l.clusters + 2) * 4 <= l.fat_sectors * SECTOR_BYTES);
    assert!(l.data_start() + l.clusters * 8 <= l.total_sectors);
    // Just under the FAT32 threshold: FAT16.
    let l = FatLayout::new(65_000 + 33, 512).unwrap();
    assert_eq!(l.fat_entry_bytes, 2);
    assert!((l.clusters + 2) * 2 <= l.fat_sectors * SECTOR_BYTES);
    assert_eq!(FatLayout::new(40, 4096).unwrap_err().key, "device.logical_bytes");
}

#[test]
fn creating_one_512_byte_file_writes_data_both_fats_and_its_entry() {
    let mut v = tiny();
    let mut out = Vec::new();
    let f = v.create(ROOT, 512, &mut out).unwrap();
    // Data in cluster 2, FAT sector 0 of both copies, root entry 0's sector.
    assert_eq!(out, [w(35, 1), w(1, 1), w(2, 1), w(3, 1)]);
    assert_eq!(f.clusters(), [2]);
    assert_eq!(v.allocated_clusters(), 1);
    // Reading it reads its one sector.
    out.clear();
    v.read(&f, &mut out);
    assert_eq!(out, [r(35, 1)]);
    // Deleting it writes its entry sector and both FAT sectors, no data.
    out.clear();
    v.delete(f, &mut out);
    assert_eq!(out, [w(3, 1), w(1, 1), w(2, 1)]);
    assert_eq!(v.allocated_clusters(), 0);
}

#[test]
fn mkdir_then_files_in_it_and_next_fit_allocation() {
    let mut v = tiny();
    let mut out = Vec::new();
    let d = v.mkdir(ROOT, &mut out).unwrap();
    // The directory's cluster 2 in full, the FAT sector in both copies, root entry 0's sector.
    assert_eq!(out, [w(35, 8), w(1, 1), w(2, 1), w(3, 1)]);
    assert_eq!(v.entries_in_use(d), 2, ". and ..");

    // 5000 bytes = 10 sectors in clusters 3 and 4 (adjacent: one request); the entry is slot 2
    // of the directory, in its first sector (35).
    out.clear();
    let f = v.create(d, 5000, &mut out).unwrap();
    assert_eq!(f.clusters(), [3, 4]);
    assert_eq!(out, [w(43, 10), w(1, 1), w(2, 1), w(35, 1)]);

    out.clear();
    v.delete(f, &mut out);
    assert_eq!(out, [w(35, 1), w(1, 1), w(2, 1)]);

    // Next fit: the freed clusters 3 and 4 are skipped; the entry slot is reused.
    out.clear();
    let g = v.create(d, 100, &mut out).unwrap();
    assert_eq!(g.clusters(), [5]);
    assert_eq!(out, [w(59, 1), w(1, 1), w(2, 1), w(35, 1)]);
    assert_eq!(v.entries_in_use(d), 3);
    assert_eq!(v.directory_clusters(), 1);
}

#[test]
fn appends_rewrite_the_partial_sector_and_update_the_fat_only_on_new_clusters() {
    let mut v = tiny();
    let mut out = Vec::new();
    let mut f = v.create(ROOT, 100, &mut out).unwrap();
    // 100 more bytes: sector 0 of the file again, no FAT, the entry.
    out.clear();
    v.append(&mut f, 100, &mut out).unwrap();
    assert_eq!(out, [w(35, 1), w(3, 1)]);
    // Up to 4096 bytes: sectors 0..8 of cluster 2, still no FAT.
    out.clear();
    v.append(&mut f, 4096 - 200, &mut out).unwrap();
    assert_eq!(out, [w(35, 8), w(3, 1)]);
    // One byte more: a new cluster (3), the FAT sector (entries of clusters 2 and 3).
    out.clear();
    v.append(&mut f, 1, &mut out).unwrap();
    assert_eq!(f.clusters(), [2, 3]);
    assert_eq!(f.size(), 4097);
    assert_eq!(out, [w(43, 1), w(1, 1), w(2, 1), w(3, 1)]);
    // Overwriting in place (the embedded ring): data and entry only.
    out.clear();
    v.write(&mut f, 0, 64, &mut out).unwrap();
    assert_eq!(out, [w(35, 1), w(3, 1)]);
}

#[test]
fn fat_sectors_of_a_chain_are_merged_per_copy() {
    // 8192 sectors, 512-byte clusters: FAT16, 32 sectors per FAT (256 entries per sector).
    let mut v = FatVolume::new(FatLayout::new(8192, 512).unwrap());
    let l = *v.layout();
    assert_eq!((l.fat_entry_bytes, l.fat_sectors), (2, 32));
    let mut out = Vec::new();
    // Clusters 2..=254: FAT sector 0 only.
    v.create(ROOT, 253 * 512, &mut out).unwrap();
    assert_eq!(out[1..], [w(1, 1), w(33, 1), w(l.root_dir_start(), 1)]);
    // Clusters 255 and 256 straddle FAT sectors 0 and 1.
    out.clear();
    let f = v.create(ROOT, 1024, &mut out).unwrap();
    assert_eq!(f.clusters(), [255, 256]);
    assert_eq!(out, [w(l.cluster_sector(255), 2), w(1, 2), w(33, 2), w(l.root_dir_start(), 1)]);
}

#[test]
fn a_full_directory_grows_by_a_cluster() {
    // 512-byte clusters: 16 entries per directory cluster, 14 after . and ..
    let mut v = FatVolume::new(FatLayout::new(8192, 512).unwrap());
    let l = *v.layout();
    let mut out = Vec::new();
    let d = v.mkdir(ROOT, &mut out).unwrap(); // cluster 2
    for _ in 0..14 {
        v.create(d, 1, &mut out).unwrap(); // clusters 3..=16
    }
    out.clear();
    let f = v.create(d, 1, &mut out).unwrap();
    // The directory's new cluster 17 in full, FAT (clusters 2 and 17) in both copies, then the
    // file in cluster 18, its FAT, and its entry: slot 16, the first of cluster 17.
    assert_eq!(f.clusters(), [18]);
    assert_eq!(
        out,
        [
            w(l.cluster_sector(17), 1),
            w(1, 1),
            w(33, 1),
            w(l.cluster_sector(18), 1),
            w(1, 1),
            w(33, 1),
            w(l.cluster_sector(17), 1),
        ]
    );
    assert_eq!(v.directory_clusters(), 2);
}

#[test]
fn a_full_volume_refuses_and_writes_nothing() {
    let mut v = tiny();
    let mut out = Vec::new();
    v.create(ROOT, 250 * 4096, &mut out).unwrap();
    out.clear();
    assert_eq!(v.create(ROOT, 2 * 4096, &mut out).unwrap_err(), FsError::VolumeFull);
    assert!(out.is_empty());
    assert_eq!(v.allocated_clusters(), 250);
    for _ in 0..511 {
        v.create(ROOT, 0, &mut out).unwrap();
    }
    assert_eq!(v.create(ROOT, 0, &mut out).unwrap_err(), FsError::RootDirectoryFull);
}

#[test]
fn one_small_postmark_file_through_the_generator() {
    let r = resolve(&[
        "workload.kind=postmark",
        "workload.prefill=false",
        "workload.fs.directories=0",
        "workload.fs.files=1",
        "workload.fs.transactions=0",
        "workload.fs.data_align_bytes=512",
    ])
    .unwrap();
    let w = FsWorkload::new(&r.workload).unwrap();
    let l = *w.volume().layout();
    let all: Vec<WorkItem> = w.collect();
    // 64 blocks × 64 pages × 0.8 × 4 KiB = 26208 sectors: 13-sector FATs.
    assert_eq!((l.total_sectors, l.fat_sectors, l.sectors_per_cluster), (26_208, 13, 8));
    let b = |sector: u64, sectors: u64| Request::write(sector * 512, sectors * 512);
    let format = [b(0, 1), b(1, 13), b(14, 13), b(27, 32)];
    assert_eq!(requests(&all[..4]), format);
    assert_eq!(all[4], WorkItem::StartMeasurement);
    // Create (data in cluster 2 at sector 59, FAT sector 0 in both copies, root entry), then
    // the final delete (entry, both FATs).
    let expected = [b(59, 1), b(1, 1), b(14, 1), b(27, 1), b(27, 1), b(1, 1), b(14, 1)];
    assert_eq!(requests(&all[5..]), expected);
}

#[test]
fn same_seed_same_stream_and_seeds_differ() {
    for kind in ["workload.kind=postmark", "workload.kind=embedded"] {
        let base = [kind, "workload.fs.transactions=2000", "workload.prefill=false"];
        let a = items(&base);
        assert_eq!(a, items(&base), "{kind}");
        let mut other = base.to_vec();
        other.push("run.seed=2");
        assert_ne!(a, items(&other), "{kind}");
    }
}

#[test]
fn requests_are_in_range_and_sector_aligned() {
    for kind in ["workload.kind=postmark", "workload.kind=embedded"] {
        let varied = [
            "workload.fs.files=50",
            "workload.fs.file_bytes_min=1",
            "workload.fs.file_bytes_max=70000",
        ];
        for extra in [&[][..], &varied[..]] {
            let mut o = vec![kind, "workload.fs.transactions=3000"];
            o.extend_from_slice(extra);
            let r = resolve(&o).unwrap();
            let cap = r.geometry.logical_bytes();
            let all: Vec<WorkItem> = FsWorkload::new(&r.workload).unwrap().collect();
            assert_eq!(all.iter().filter(|i| **i == WorkItem::StartMeasurement).count(), 1);
            // Prefill: every page once, first.
            let lp = r.geometry.logical_pages as usize;
            assert!(requests(&all[..lp])
                .iter()
                .enumerate()
                .all(|(i, q)| q.offset_bytes == i as u64 * 4096 && q.length_bytes == 4096));
            for q in requests(&all) {
                assert!(q.length_bytes > 0 && q.offset_bytes + q.length_bytes <= cap, "{q:?}");
                assert_eq!(q.offset_bytes % 512, 0, "{q:?}");
                assert_eq!(q.length_bytes % 512, 0, "{q:?}");
                assert!(q.length_bytes <= (MAX_TRANSFER_SECTORS * 512).max(4096), "{q:?}");
                assert!(matches!(q.kind, RequestKind::Read | RequestKind::Write));
                assert_eq!(q.arrival_ns, None);
            }
        }
    }
}

#[test]
fn postmark_ends_with_every_file_deleted() {
    let r = resolve(&["workload.kind=postmark", "workload.fs.transactions=5000"]).unwrap();
    let mut w = FsWorkload::new(&r.workload).unwrap();
    w.by_ref().for_each(drop);
    let s = w.stats();
    assert!(w.files().is_empty());
    assert_eq!(s.directories_created, 50);
    assert_eq!(s.files_created, s.files_deleted);
    assert!(s.files_created >= 500 + 2000, "{s:?}");
    assert_eq!(s.transactions, 5000);
    assert!(s.files_read > 2000 && s.appends == 0, "fixed-size files are never appended to");
    assert_eq!(s.dropped_full, 0);
    // Only the directories' clusters remain allocated.
    assert_eq!(w.volume().allocated_clusters(), w.volume().directory_clusters());
    assert!(w.volume().directory_clusters() >= 50);
}

#[test]
fn postmark_with_variable_sizes_appends_and_reads_whole_files() {
    let r = resolve(&[
        "device.blocks=256",
        "workload.kind=postmark",
        "workload.prefill=false",
        "workload.fs.files=200",
        "workload.fs.directories=5",
        "workload.fs.file_bytes_min=1000",
        "workload.fs.file_bytes_max=50000",
        "workload.fs.transactions=2000",
    ])
    .unwrap();
    let mut w = FsWorkload::new(&r.workload).unwrap();
    let mut read_bytes = 0;
    let mut write_bytes = 0;
    for item in w.by_ref() {
        if let WorkItem::Request(q) = item {
            match q.kind {
                RequestKind::Read => read_bytes += q.length_bytes,
                _ => write_bytes += q.length_bytes,
            }
        }
    }
    let s = w.stats();
    assert!(s.appends > 500 && s.files_read > 500, "{s:?}");
    assert!(read_bytes > 0 && write_bytes > read_bytes / 2);
    assert!(w.files().is_empty());
    assert_eq!(w.volume().allocated_clusters(), w.volume().directory_clusters());
}

#[test]
fn large_file_preset_writes_64_kib_requests() {
    let all = items(&[
        "workload.kind=postmark",
        "workload.prefill=false",
        "workload.fs.files=4",
        "workload.fs.directories=2",
        "workload.fs.file_bytes_min=1048576",
        "workload.fs.file_bytes_max=1048576",
        "workload.fs.transactions=20",
    ]);
    let m = measured(&all);
    let big = m.iter().filter(|q| q.length_bytes == 65_536).count();
    // Each 1 MiB file is 16 requests of 64 KiB (written, and read back by reads).
    assert!(big >= 4 * 16, "{big}");
}

#[test]
fn embedded_touches_a_small_set_of_sectors_over_and_over() {
    let r = resolve(&["workload.kind=embedded", "workload.fs.transactions=20000"]).unwrap();
    let mut w = FsWorkload::new(&r.workload).unwrap();
    let l = *w.volume().layout();
    let all: Vec<WorkItem> = w.by_ref().collect();
    let m = measured(&all);
    let mut distinct = BTreeSet::new();
    for q in &m {
        assert_eq!(q.kind, RequestKind::Write);
        distinct.extend(q.offset_bytes / 512..(q.offset_bytes + q.length_bytes) / 512);
    }
    // 4 files × 64 KiB of data = 512 sectors (16 clusters each), the FAT sectors of those 64
    // clusters in both copies (one each here), and one root-directory sector.
    let (files, max) = (4u64, 65_536u64);
    let clusters = files * max / l.cluster_bytes();
    let fat_sectors = (clusters * l.fat_entry_bytes).div_ceil(512) + 1;
    let bound = files * max / 512 + 2 * fat_sectors + 1;
    assert!(distinct.len() as u64 <= bound, "{} distinct sectors > {bound}", distinct.len());
    // 20000 × 64 bytes = 2.5 × the log capacity: every data sector is reached.
    assert!(distinct.len() as u64 >= files * max / 512);
    // Every append rewrites the directory entry: each op is data (+ FAT) + entry.
    assert!(m.len() >= 2 * 20_000);
    let root = l.root_dir_start() * 512;
    assert!(m.iter().filter(|q| q.offset_bytes == root).count() >= 20_000);
    let s = w.stats();
    assert_eq!((s.files_created, s.appends, s.dropped_full), (4, 20_000, 0));
    assert_eq!(w.volume().allocated_clusters(), clusters);
}

#[test]
fn config_defaults_are_filled_per_kind() {
    let r = resolve(&["workload.kind=postmark"]).unwrap();
    let fs = r.config.workload.param::<FsConfig>("fs").unwrap();
    assert_eq!(fs.cluster_bytes, Some(4096));
    assert_eq!((fs.directories, fs.files), (Some(50), Some(500)));
    assert_eq!((fs.file_bytes_min, fs.file_bytes_max), (Some(512), Some(512)));
    assert_eq!((fs.create_bias, fs.read_bias), (Some(0.5), Some(0.5)));
    assert_eq!((fs.transactions, fs.record_bytes), (Some(10_000), None));
    let again = r.config.resolve().unwrap();
    assert_eq!(again.config, r.config);

    let r = resolve(&["workload.kind=embedded"]).unwrap();
    let fs = r.config.workload.param::<FsConfig>("fs").unwrap();
    assert_eq!((fs.files, fs.file_bytes_max, fs.record_bytes), (Some(4), Some(65_536), Some(64)));
    assert_eq!((fs.directories, fs.file_bytes_min, fs.read_bias), (None, None, None));
    // The TOML round trip keeps the nested table.
    let text = toml::to_string(&r.config).unwrap();
    assert!(text.contains("[workload.fs]"), "{text}");
    assert_eq!(Config::from_toml(&text, "x").unwrap(), r.config);
    // Other kinds leave it alone.
    assert_eq!(resolve(&[]).unwrap().config.workload.param::<FsConfig>("fs"), None);
}

#[test]
fn config_errors_name_the_key() {
    let key = |o: &[&str]| resolve(o).unwrap_err().key;
    let pm = "workload.kind=postmark";
    let em = "workload.kind=embedded";
    assert_eq!(key(&[pm, "workload.fs.cluster_bytes=1000"]), "workload.fs.cluster_bytes");
    assert_eq!(key(&[pm, "workload.fs.cluster_bytes=0"]), "workload.fs.cluster_bytes");
    assert_eq!(key(&[pm, "workload.fs.read_bias=1.5"]), "workload.fs.read_bias");
    assert_eq!(key(&[pm, "workload.fs.create_bias=-0.1"]), "workload.fs.create_bias");
    assert_eq!(key(&[pm, "workload.fs.files=0"]), "workload.fs.files");
    assert_eq!(key(&[pm, "workload.fs.file_bytes_min=0"]), "workload.fs.file_bytes_min");
    assert_eq!(key(&[pm, "workload.fs.file_bytes_min=1024"]), "workload.fs.file_bytes_min");
    assert_eq!(key(&[pm, "workload.fs.directories=600"]), "workload.fs.directories");
    assert_eq!(key(&[pm, "workload.fs.bogus=1"]), "workload.fs.bogus");
    // 13 MB cannot hold 500 files of 1 MiB.
    let e = resolve(&[pm, "workload.fs.file_bytes_max=1048576"]).unwrap_err();
    assert_eq!(e.key, "workload.fs.files");
    assert!(e.message.contains("clusters"), "{e}");
    assert_eq!(key(&[em, "workload.fs.record_bytes=0"]), "workload.fs.record_bytes");
    assert_eq!(key(&[em, "workload.fs.record_bytes=100000"]), "workload.fs.record_bytes");
    assert_eq!(key(&[em, "workload.fs.file_bytes_max=100000000"]), "workload.fs.file_bytes_max");
    assert_eq!(key(&[em, "workload.fs.files=1000"]), "workload.fs.files");
    let poisson = [em, "workload.arrival=poisson", "workload.arrival_rate_per_s=10"];
    assert_eq!(key(&poisson), "workload.arrival");
    let huge = ["device.logical_bytes=2199023255552", "device.utilization=0.5", pm];
    let e = Config::from_overrides(&huge).unwrap().resolve().unwrap_err();
    assert_eq!(e.key, "workload.fs.cluster_bytes", "over 2^28 clusters of 4 KiB");
}

#[test]
fn dispatch_covers_every_synthetic_kind() {
    let r = resolve(&["workload.kind=embedded", "workload.fs.transactions=100"]).unwrap();
    let direct: Vec<WorkItem> = FsWorkload::new(&r.workload).unwrap().collect();
    assert_eq!(synthetic_items(&r.workload).unwrap().collect::<Vec<_>>(), direct);
    let w = Workload::new(&r.workload).unwrap();
    assert!(w.estimated_requests() > 0);

    let r = resolve(&["workload.kind=hotcold", "workload.passes=0.5"]).unwrap();
    let direct: Vec<WorkItem> = Synthetic::new(&r.workload).collect();
    assert_eq!(Workload::new(&r.workload).unwrap().collect::<Vec<_>>(), direct);
    assert_eq!(
        Workload::new(&r.workload).unwrap().estimated_requests(),
        Synthetic::new(&r.workload).estimated_requests()
    );

    let r = resolve(&["workload.kind=trace", "workload.path=x.csv"]).unwrap();
    assert_eq!(synthetic_items(&r.workload).err().unwrap().key, "workload.kind");
}

#[test]
fn estimates_are_the_right_order_of_magnitude() {
    for kind in ["workload.kind=postmark", "workload.kind=embedded"] {
        let r =
            resolve(&[kind, "workload.fs.transactions=3000", "workload.prefill=false"]).unwrap();
        let w = FsWorkload::new(&r.workload).unwrap();
        let estimate = w.estimated_requests() as f64;
        let n = w.filter(|i| matches!(i, WorkItem::Request(_))).count() as f64;
        assert!((estimate / n - 1.0).abs() < 0.25, "{kind}: estimate {estimate}, actual {n}");
    }
}

#[test]
fn the_data_region_is_aligned_to_clusters_by_default() {
    let r = resolve(&["workload.kind=postmark", "workload.prefill=false"]).unwrap();
    let w = FsWorkload::new(&r.workload).unwrap();
    let l = *w.volume().layout();
    // Unaligned the boot sector, 13-sector FATs and root would put data at 59: padded to 64.
    assert_eq!((l.reserved_sectors, l.fat_start(0), l.fat_start(1)), (6, 6, 19));
    assert_eq!(l.data_start(), 64);
    assert!(l.data_start() + l.clusters * 8 <= l.total_sectors);
    let e = resolve(&["workload.kind=postmark", "workload.fs.data_align_bytes=100"]).unwrap_err();
    assert_eq!(e.key, "workload.fs.data_align_bytes");
}
