//! File-system workloads on a FAT volume: `workload.kind = "postmark"` and `"embedded"`
//! (docs/ALGORITHMS.md §10). The media-player workloads (`media.rs`) run on the same volume model.
//!
//! # What this models
//!
//! The block-recycling paper (docs/PAPERS.md) runs its benchmarks on "an MS-DOS FAT compatible file
//! system" on top of the FTL (§6) and shows in §3, Fig. 2 the resulting write pattern: sequential
//! writes of file data mixed with repeated updates of a few metadata sectors, the FAT and the
//! directories. This module produces that pattern at 512-byte sector granularity: it keeps a small
//! model of a FAT volume laid over the device's logical capacity (which clusters are allocated,
//! each file's cluster chain, each directory's entry slots) and emits, for every file-system
//! operation, the sector reads and writes a simple FAT driver issues. It does not store any bytes.
//!
//! # Layout
//!
//! The volume spans the whole logical device (`logical_pages × page_size_bytes`, in 512-byte
//! sectors), in this order:
//!
//! | region | size |
//! |---|---|
//! | reserved (boot sector, padding) | 1 sector + padding to `workload.fs.data_align_bytes` |
//! | FAT, copy 1 | `fat_sectors` |
//! | FAT, copy 2 | `fat_sectors` |
//! | root directory | 512 entries × 32 bytes = 32 sectors (fixed, FAT12/16 style) |
//! | data region | `clusters` clusters of `workload.fs.cluster_bytes` (default 4096) |
//!
//! FAT entries are 2 bytes (FAT16) when the volume has fewer than 65,525 clusters and 4 bytes
//! (FAT32) otherwise, so a FAT sector covers 256 or 128 clusters; entries 0 and 1 are reserved
//! and cluster 2 is the first data cluster. Each FAT copy is sized to cover every data cluster.
//! Subdirectories are cluster chains in the data region holding 32-byte entries (16 per sector),
//! starting with `.` and `..`; new entries take the lowest free slot (deleted slots are reused),
//! and a full subdirectory grows by one cluster. Clusters are allocated next-fit: a rolling
//! pointer moves forward past each allocated cluster and wraps at the end of the volume, as FAT
//! drivers do with their "next free cluster" hint, so freed clusters are reused only after the
//! pointer comes round again.
//!
//! # What each operation writes
//!
//! The driver is write-back until the file is closed: each operation's sectors are issued in one
//! burst, in this order (requests of up to 128 sectors; adjacent sectors merged):
//!
//! - **format** (untimed setup, before `StartMeasurement`): the boot sector, both FATs in full and
//!   the root directory — so every FAT sector has been written once before the measured part, as
//!   in the block-recycling paper (§6.2).
//! - **mkdir**: the new directory's first cluster (all its sectors: `.`, `..` and zeroed
//!   entries), the FAT sector(s) of that cluster in FAT 1 then FAT 2, the parent's entry sector.
//! - **create** (of `n` bytes): the data sectors (`⌈n / 512⌉`, sequential through the new chain),
//!   the FAT sectors covering the chain in FAT 1 then FAT 2, the directory entry's sector.
//! - **append / write**: the data sectors covered by the new bytes (a partial last sector is
//!   rewritten whole — its old contents come from the driver's buffer, no read is issued); if the
//!   file gained clusters, the FAT sectors of the previous last cluster and the new ones (both
//!   copies); always the directory entry's sector (size and modification time).
//! - **delete**: the directory entry's sector (entry marked deleted), then the FAT sectors of the
//!   freed chain in both copies; no data is written.
//! - **read**: reads of the file's data sectors only (FAT and directory sectors are assumed
//!   cached; the last-access date is not updated).
//! - A directory that must grow first writes its new cluster in full and the FAT sectors linking
//!   it (both copies).
//!
//! Not modelled: long file names (Postmark's names fit 8.3), the FAT32 FSInfo sector (these
//! volumes reserve one sector; the media-player's, laid out by `FatLayout::with_reserved`, have
//! one) and backup boot sector, FAT12's 12-bit entries (small volumes use FAT16 entries),
//! sector caching of metadata across operations (every operation writes its metadata sectors
//! again, which is the repeated-update pattern the paper studies), and directory removal.
//!
//! # Postmark (`workload.kind = "postmark"`)
//!
//! Katcher's Postmark (v1.51) as the block-recycling paper ran it (§6.1): create `directories`
//! subdirectories of the root, create `files` files each in a random subdirectory (in the root when
//! `directories = 0`), run `transactions` transactions, then delete every remaining file. A
//! transaction is a read or an append of a random existing file (`read_bias` the probability of the
//! read) followed by a create or a delete of a random existing file (`create_bias` the probability
//! of the create). Sizes are uniform in [`file_bytes_min`, `file_bytes_max`]; an append adds a
//! uniform 1 ..= (max − size) bytes and does nothing to a file already at the maximum size; at most
//! 2 × `files` files exist at once (Postmark's file table: further creates do nothing);
//! transactions stop early if every file has been deleted ("out of files"). A create or append that
//! does not fit in the free clusters is dropped (Postmark would report ENOSPC) and counted in
//! `FsStats::dropped_full`. The presets of the block-recycling paper are the defaults (the
//! "directory/small file workload": 512-byte files in 50 directories) and `file_bytes_min =
//! file_bytes_max = 1048576` (the "large file workload").
//!
//! # Embedded (`workload.kind = "embedded"`)
//!
//! A model of Gal & Toledo's fax, cellular-phone and event-recorder workloads (block-recycling
//! paper §6.2; the original traces are not public): `files` log files in the root directory,
//! created empty, then `transactions` appends of a `record_bytes` record to a random one of them.
//! Each append rewrites the sector(s) holding the record, updates the FAT when the file crosses
//! into a new cluster, and rewrites the file's directory entry (size, time). When the next record
//! would take a file past `file_bytes_max` the file becomes a ring: writing continues from offset 0
//! over its existing clusters (an event recorder's circular log), so the set of sectors the run
//! touches stays small and is updated over and over.
//!
//! # Sequence
//!
//! Optional prefill (`workload.prefill`: every logical page written once, in order — the device
//! was full before it was formatted; a format does not trim), format, `StartMeasurement`, then
//! the workload: everything after the format is measured. Requests are closed-loop (no arrival
//! times). `warmup_passes`, `passes`, `request_bytes`, `read_fraction` and the hot/cold keys do
//! not apply to these kinds.

use super::kinds::{Generator, Plan};
use super::spec::{FsConfig, FsParams, WorkloadConfig};
use super::WorkloadSpec;
use crate::error::ConfigError;
use crate::flash::Geometry;
use crate::request::{Request, RequestKind};
use crate::rng::Prng;
use crate::spec::{check, fraction, Params};

use super::WorkItem;

/// The file system's sector size.
pub const SECTOR_BYTES: u64 = 512;
/// Size of one directory entry.
pub const DIR_ENTRY_BYTES: u64 = 32;
/// Entries of the fixed root directory area.
pub const ROOT_DIR_ENTRIES: u64 = 512;
/// Largest request the driver issues, in sectors (64 KiB).
pub const MAX_TRANSFER_SECTORS: u64 = 128;
/// Sectors before the first FAT (before alignment padding): the boot sector. Media-player
/// volumes reserve more (`FatLayout::with_reserved`).
pub const RESERVED_SECTORS: u64 = 1;
/// Volumes with at least this many clusters use FAT32 (4-byte) entries.
const FAT32_MIN_CLUSTERS: u64 = 65_525;
/// FAT32 cluster numbers are 28 bits; data clusters are 2 ..= 0x0FFF_FFEF.
const FAT32_MAX_CLUSTERS: u64 = 0x0FFF_FFEF - 1;

/// One sector-range I/O of the file system.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extent {
    pub kind: RequestKind,
    pub sector: u64,
    pub sectors: u64,
}

impl Extent {
    fn write(sector: u64, sectors: u64) -> Self {
        Self { kind: RequestKind::Write, sector, sectors }
    }
}

/// Where the regions of a FAT volume lie, in 512-byte sectors from the start of the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FatLayout {
    pub total_sectors: u64,
    /// Boot sector (and FSInfo sector, if any) plus the padding that aligns the data region.
    pub reserved_sectors: u64,
    pub sectors_per_cluster: u64,
    /// 2 (FAT16) or 4 (FAT32).
    pub fat_entry_bytes: u64,
    /// Sectors of one FAT copy.
    pub fat_sectors: u64,
    pub root_dir_sectors: u64,
    /// Data clusters, numbered 2 ..= clusters + 1.
    pub clusters: u64,
    /// The FAT32 FSInfo sector (free-cluster count, next-free hint): sector 1 of a FAT32
    /// volume laid out with at least 2 reserved sectors (`with_reserved`); `None` otherwise.
    pub fsinfo_sector: Option<u64>,
}

impl FatLayout {
    #[cfg(test)]
    /// Lays a volume of `total_sectors` sectors out with clusters of `cluster_bytes` (a
    /// multiple of 512).
    pub fn new(total_sectors: u64, cluster_bytes: u64) -> Result<Self, ConfigError> {
        Self::aligned(total_sectors, cluster_bytes, SECTOR_BYTES)
    }

    /// As `new`, with the boot area padded so the data region starts at a multiple of
    /// `align_bytes` (a multiple of 512).
    pub fn aligned(
        total_sectors: u64,
        cluster_bytes: u64,
        align_bytes: u64,
    ) -> Result<Self, ConfigError> {
        Self::with_reserved(total_sectors, cluster_bytes, align_bytes, RESERVED_SECTORS)
    }

    /// As `aligned`, with at least `reserved_min` (≥ 1) sectors before the first FAT (the
    /// padding comes on top). A FAT32 volume with 2 or more keeps its FSInfo sector at
    /// sector 1, as FAT32 formatters place it; `new` and `aligned` reserve 1 sector, so the
    /// volumes of `postmark` and `embedded` have none.
    pub fn with_reserved(
        total_sectors: u64,
        cluster_bytes: u64,
        align_bytes: u64,
        reserved_min: u64,
    ) -> Result<Self, ConfigError> {
        assert!(reserved_min >= 1, "the boot sector is always reserved");
        let align = (align_bytes / SECTOR_BYTES).max(1);
        let spc = (cluster_bytes / SECTOR_BYTES).max(1);
        let root_dir_sectors = ROOT_DIR_ENTRIES * DIR_ENTRY_BYTES / SECTOR_BYTES;
        let too_small = || {
            ConfigError::new(
                "device.logical_bytes",
                format!(
                    "{} bytes are too small for a FAT volume with {cluster_bytes}-byte clusters",
                    total_sectors * SECTOR_BYTES
                ),
            )
        };
        let avail =
            total_sectors.checked_sub(reserved_min + root_dir_sectors).ok_or_else(too_small)?;
        // The cluster count before the FATs are subtracted picks the entry width and sizes the
        // FATs (so they cover every cluster, with a little slack, as formatters do).
        let estimate = avail / spc;
        let fat_entry_bytes = if estimate < FAT32_MIN_CLUSTERS { 2 } else { 4 };
        let fat_sectors = ((estimate + 2) * fat_entry_bytes).div_ceil(SECTOR_BYTES);
        let meta = reserved_min + 2 * fat_sectors + root_dir_sectors;
        let pad = (align - meta % align) % align;
        let clusters = avail.saturating_sub(2 * fat_sectors + pad) / spc;
        if clusters == 0 {
            return Err(too_small());
        }
        if clusters > FAT32_MAX_CLUSTERS {
            return Err(ConfigError::new(
                "workload.fs.cluster_bytes",
                format!(
                    "the volume would have {clusters} clusters; FAT32 allows at most \
                     {FAT32_MAX_CLUSTERS}: use larger clusters"
                ),
            ));
        }
        Ok(Self {
            total_sectors,
            reserved_sectors: reserved_min + pad,
            sectors_per_cluster: spc,
            fat_entry_bytes,
            fat_sectors,
            root_dir_sectors,
            clusters,
            fsinfo_sector: (reserved_min >= 2 && fat_entry_bytes == 4).then_some(1),
        })
    }

    #[must_use]
    pub fn cluster_bytes(&self) -> u64 {
        self.sectors_per_cluster * SECTOR_BYTES
    }

    /// First sector of FAT copy `copy` (0 or 1).
    #[must_use]
    pub fn fat_start(&self, copy: u64) -> u64 {
        self.reserved_sectors + copy * self.fat_sectors
    }

    #[must_use]
    pub fn root_dir_start(&self) -> u64 {
        self.reserved_sectors + 2 * self.fat_sectors
    }

    #[must_use]
    pub fn data_start(&self) -> u64 {
        self.root_dir_start() + self.root_dir_sectors
    }

    /// First sector of data cluster `cluster` (≥ 2).
    #[must_use]
    pub fn cluster_sector(&self, cluster: u32) -> u64 {
        self.data_start() + (u64::from(cluster) - 2) * self.sectors_per_cluster
    }

    /// Sector, within one FAT copy, holding the entry of `cluster`.
    #[must_use]
    pub fn fat_sector_of(&self, cluster: u32) -> u64 {
        u64::from(cluster) * self.fat_entry_bytes / SECTOR_BYTES
    }

    /// Directory entries per cluster.
    #[must_use]
    pub fn entries_per_cluster(&self) -> u64 {
        self.cluster_bytes() / DIR_ENTRY_BYTES
    }
}

/// A directory of the model; index 0 is the root.
pub type DirId = usize;
pub const ROOT: DirId = 0;

#[derive(Clone, Debug)]
struct Dir {
    /// Cluster chain (empty for the fixed root directory).
    clusters: Vec<u32>,
    /// Entry slots in use (including `.` and `..`).
    used: Vec<bool>,
}

/// A file of the model: its directory entry and cluster chain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FsFile {
    dir: DirId,
    slot: u64,
    size: u64,
    clusters: Vec<u32>,
}

impl FsFile {
    #[must_use]
    pub fn size(&self) -> u64 {
        self.size
    }
    #[cfg(test)]
    #[must_use]
    pub fn clusters(&self) -> &[u32] {
        &self.clusters
    }
}

/// Why an operation could not be done (nothing was written).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FsError {
    /// Not enough free clusters.
    VolumeFull,
    /// The fixed root directory has no free entry.
    RootDirectoryFull,
}

/// The model of a freshly formatted FAT volume: cluster allocation, directories, and the
/// sectors each operation touches (pushed onto `out`).
#[derive(Clone, Debug)]
pub struct FatVolume {
    layout: FatLayout,
    /// Allocation bitmap by cluster index (cluster − 2); bits past the last cluster are set.
    bitmap: Vec<u64>,
    allocated: u64,
    /// Next-fit pointer: the cluster index where the next allocation search starts.
    next_free: u64,
    dirs: Vec<Dir>,
    /// Clusters whose FAT entries the current operation changed.
    fat_scratch: Vec<u32>,
}

impl FatVolume {
    #[must_use]
    pub fn new(layout: FatLayout) -> Self {
        let words = layout.clusters.div_ceil(64) as usize;
        let mut bitmap = vec![0u64; words];
        let tail = layout.clusters % 64;
        if tail != 0 {
            bitmap[words - 1] = !0u64 << tail;
        }
        let root = Dir { clusters: Vec::new(), used: vec![false; ROOT_DIR_ENTRIES as usize] };
        Self {
            layout,
            bitmap,
            allocated: 0,
            next_free: 0,
            dirs: vec![root],
            fat_scratch: Vec::new(),
        }
    }

    #[must_use]
    pub fn layout(&self) -> &FatLayout {
        &self.layout
    }

    /// Clusters in use (files and subdirectories).
    #[must_use]
    pub fn allocated_clusters(&self) -> u64 {
        self.allocated
    }

    #[must_use]
    pub fn free_clusters(&self) -> u64 {
        self.layout.clusters - self.allocated
    }

    #[cfg(test)]
    /// Clusters held by subdirectories.
    #[must_use]
    pub fn directory_clusters(&self) -> u64 {
        self.dirs.iter().map(|d| d.clusters.len() as u64).sum()
    }

    #[cfg(test)]
    /// Directory entries in use in `dir` (for a subdirectory, including `.` and `..`).
    #[must_use]
    pub fn entries_in_use(&self, dir: DirId) -> usize {
        self.dirs[dir].used.iter().filter(|u| **u).count()
    }

    /// The sectors a format writes: boot sector (and FSInfo sector), both FATs, the root
    /// directory.
    pub fn format(&self, out: &mut Vec<Extent>) {
        let l = &self.layout;
        out.push(Extent::write(0, l.fsinfo_sector.map_or(RESERVED_SECTORS, |s| s + 1)));
        out.push(Extent::write(l.fat_start(0), l.fat_sectors));
        out.push(Extent::write(l.fat_start(1), l.fat_sectors));
        out.push(Extent::write(l.root_dir_start(), l.root_dir_sectors));
    }

    /// Creates a subdirectory of `parent`.
    pub fn mkdir(&mut self, parent: DirId, out: &mut Vec<Extent>) -> Result<DirId, FsError> {
        let (slot, grow) = self.entry_slot(parent)?;
        if 1 + u64::from(grow) > self.free_clusters() {
            return Err(FsError::VolumeFull);
        }
        if grow {
            self.grow_dir(parent, out);
        }
        self.dirs[parent].used[slot as usize] = true;
        let c = self.alloc_cluster();
        out.push(Extent::write(self.layout.cluster_sector(c), self.layout.sectors_per_cluster));
        self.fat_scratch.push(c);
        self.push_fat(out);
        out.push(Extent::write(self.entry_sector(parent, slot), 1));
        let mut used = vec![false; self.layout.entries_per_cluster() as usize];
        used[0] = true; // "."
        used[1] = true; // ".."
        self.dirs.push(Dir { clusters: vec![c], used });
        Ok(self.dirs.len() - 1)
    }

    /// Creates a file of `size` bytes in `dir` and writes its data.
    pub fn create(
        &mut self,
        dir: DirId,
        size: u64,
        out: &mut Vec<Extent>,
    ) -> Result<FsFile, FsError> {
        let (slot, grow) = self.entry_slot(dir)?;
        let data_clusters = size.div_ceil(self.layout.cluster_bytes());
        if data_clusters + u64::from(grow) > self.free_clusters() {
            return Err(FsError::VolumeFull);
        }
        if grow {
            self.grow_dir(dir, out);
        }
        self.dirs[dir].used[slot as usize] = true;
        let mut file =
            FsFile { dir, slot, size: 0, clusters: Vec::with_capacity(data_clusters as usize) };
        self.write(&mut file, 0, size, out)?;
        Ok(file)
    }

    /// Writes `len` bytes at `offset` (at most the file's size: FAT files have no holes),
    /// extending the file and its cluster chain as needed, then the file's directory entry.
    pub fn write(
        &mut self,
        file: &mut FsFile,
        offset: u64,
        len: u64,
        out: &mut Vec<Extent>,
    ) -> Result<(), FsError> {
        self.write_data(file, offset, len, out)?;
        out.push(Extent::write(self.entry_sector(file.dir, file.slot), 1));
        Ok(())
    }

    /// The part of `write` before the directory entry: the data sectors, then the FAT
    /// sectors of the clusters the write linked (both copies). A driver with a write-through
    /// FAT issues this for every write call and the directory entry only at close.
    pub fn write_data(
        &mut self,
        file: &mut FsFile,
        offset: u64,
        len: u64,
        out: &mut Vec<Extent>,
    ) -> Result<(), FsError> {
        assert!(offset <= file.size, "write at {offset} past the end of a {}-byte file", file.size);
        let end = offset + len;
        let new_size = file.size.max(end);
        let needed = new_size.div_ceil(self.layout.cluster_bytes());
        let added = needed.saturating_sub(file.clusters.len() as u64);
        if added > self.free_clusters() {
            return Err(FsError::VolumeFull);
        }
        if added > 0 {
            if let Some(&last) = file.clusters.last() {
                self.fat_scratch.push(last);
            }
            for _ in 0..added {
                let c = self.alloc_cluster();
                file.clusters.push(c);
                self.fat_scratch.push(c);
            }
        }
        if len > 0 {
            self.push_file_sectors(
                &file.clusters,
                offset / SECTOR_BYTES,
                end.div_ceil(SECTOR_BYTES),
                RequestKind::Write,
                out,
            );
        }
        self.push_fat(out);
        file.size = new_size;
        Ok(())
    }

    /// Closes a file written with `write_data`: its directory entry (size, first cluster,
    /// time), then the FSInfo sector if the volume has one (free count and next-free hint).
    pub fn close(&self, file: &FsFile, out: &mut Vec<Extent>) {
        out.push(Extent::write(self.entry_sector(file.dir, file.slot), 1));
        self.write_fsinfo(out);
    }

    /// The FSInfo sector, if the volume has one.
    pub fn write_fsinfo(&self, out: &mut Vec<Extent>) {
        if let Some(s) = self.layout.fsinfo_sector {
            out.push(Extent::write(s, 1));
        }
    }

    /// Clusters a new entry in `dir` takes besides the file's own: 1 when the directory must
    /// grow, else 0; `RootDirectoryFull` when the fixed root has no free slot.
    pub fn entry_cost_clusters(&self, dir: DirId) -> Result<u64, FsError> {
        self.entry_slot(dir).map(|(_, grow)| u64::from(grow))
    }

    /// Appends `len` bytes.
    pub fn append(
        &mut self,
        file: &mut FsFile,
        len: u64,
        out: &mut Vec<Extent>,
    ) -> Result<(), FsError> {
        self.write(file, file.size, len, out)
    }

    /// Reads the whole file.
    pub fn read(&self, file: &FsFile, out: &mut Vec<Extent>) {
        let sectors = file.size.div_ceil(SECTOR_BYTES);
        self.push_file_sectors(&file.clusters, 0, sectors, RequestKind::Read, out);
    }

    /// Deletes the file: marks its entry deleted and frees its chain.
    pub fn delete(&mut self, file: FsFile, out: &mut Vec<Extent>) {
        out.push(Extent::write(self.entry_sector(file.dir, file.slot), 1));
        self.dirs[file.dir].used[file.slot as usize] = false;
        for &c in &file.clusters {
            self.free_cluster(c);
            self.fat_scratch.push(c);
        }
        self.push_fat(out);
    }

    /// The lowest free entry slot of `dir`, or the first slot of a cluster the directory must
    /// grow by (`true`).
    fn entry_slot(&self, dir: DirId) -> Result<(u64, bool), FsError> {
        let d = &self.dirs[dir];
        match d.used.iter().position(|u| !u) {
            Some(s) => Ok((s as u64, false)),
            None if dir == ROOT => Err(FsError::RootDirectoryFull),
            None => Ok((d.used.len() as u64, true)),
        }
    }

    /// Adds a cluster to a subdirectory: writes it (zeroed entries) and links it in the FAT.
    fn grow_dir(&mut self, dir: DirId, out: &mut Vec<Extent>) {
        let c = self.alloc_cluster();
        out.push(Extent::write(self.layout.cluster_sector(c), self.layout.sectors_per_cluster));
        let d = &mut self.dirs[dir];
        if let Some(&last) = d.clusters.last() {
            self.fat_scratch.push(last);
        }
        self.fat_scratch.push(c);
        d.clusters.push(c);
        d.used.resize(d.used.len() + self.layout.entries_per_cluster() as usize, false);
        self.push_fat(out);
    }

    /// Absolute sector of entry `slot` of `dir`.
    fn entry_sector(&self, dir: DirId, slot: u64) -> u64 {
        let byte = slot * DIR_ENTRY_BYTES;
        if dir == ROOT {
            return self.layout.root_dir_start() + byte / SECTOR_BYTES;
        }
        let cb = self.layout.cluster_bytes();
        let cluster = self.dirs[dir].clusters[(byte / cb) as usize];
        self.layout.cluster_sector(cluster) + (byte % cb) / SECTOR_BYTES
    }

    /// Pushes sectors `[first, end)` of a file (counted from its start) through its chain,
    /// merging physically adjacent sectors.
    fn push_file_sectors(
        &self,
        clusters: &[u32],
        first: u64,
        end: u64,
        kind: RequestKind,
        out: &mut Vec<Extent>,
    ) {
        let spc = self.layout.sectors_per_cluster;
        let base = out.len();
        let mut s = first;
        while s < end {
            let within = s % spc;
            let n = (spc - within).min(end - s);
            let sector = self.layout.cluster_sector(clusters[(s / spc) as usize]) + within;
            let ours = out.len() > base;
            match out.last_mut() {
                Some(e) if ours && e.sector + e.sectors == sector => e.sectors += n,
                _ => out.push(Extent { kind, sector, sectors: n }),
            }
            s += n;
        }
    }

    /// Pushes the FAT sectors holding the entries in `fat_scratch`, FAT 1 then FAT 2, and
    /// clears it.
    fn push_fat(&mut self, out: &mut Vec<Extent>) {
        if self.fat_scratch.is_empty() {
            return;
        }
        let l = self.layout;
        for c in &mut self.fat_scratch {
            *c = l.fat_sector_of(*c) as u32;
        }
        self.fat_scratch.sort_unstable();
        self.fat_scratch.dedup();
        for copy in 0..2 {
            let base = out.len();
            for &s in &self.fat_scratch {
                let sector = l.fat_start(copy) + u64::from(s);
                let ours = out.len() > base;
                match out.last_mut() {
                    Some(e) if ours && e.sector + e.sectors == sector => e.sectors += 1,
                    _ => out.push(Extent::write(sector, 1)),
                }
            }
        }
        self.fat_scratch.clear();
    }

    /// Takes the first free cluster at or after the next-fit pointer (wrapping). The caller has
    /// checked that one is free.
    fn alloc_cluster(&mut self) -> u32 {
        let words = self.bitmap.len();
        let mut w = (self.next_free / 64) as usize;
        let mut free = !self.bitmap[w] & (!0u64 << (self.next_free % 64));
        let mut steps = 0;
        while free == 0 {
            w = (w + 1) % words;
            steps += 1;
            assert!(steps <= words, "allocation on a full volume");
            free = !self.bitmap[w];
        }
        let bit = free.trailing_zeros();
        self.bitmap[w] |= 1 << bit;
        self.allocated += 1;
        let index = w as u64 * 64 + u64::from(bit);
        self.next_free = (index + 1) % self.layout.clusters;
        // Cluster numbers fit in u32: FatLayout caps the count at FAT32's 28-bit limit.
        (index + 2) as u32
    }

    fn free_cluster(&mut self, cluster: u32) {
        let index = u64::from(cluster) - 2;
        let (w, bit) = ((index / 64) as usize, index % 64);
        assert!(self.bitmap[w] & (1 << bit) != 0, "freeing free cluster {cluster}");
        self.bitmap[w] &= !(1 << bit);
        self.allocated -= 1;
    }
}

/// The resolved plan of `postmark` and (`embedded` true) `embedded`: the volume's parameters.
#[derive(Clone, Debug)]
pub struct FsPlan {
    pub embedded: bool,
    pub fs: FsParams,
    /// The volume laid out (and checked to hold the files) at resolution.
    pub layout: FatLayout,
}

impl Plan for FsPlan {
    fn generator(&self, spec: &WorkloadSpec) -> Result<Box<dyn Generator>, ConfigError> {
        Ok(Box::new(FsWorkload::with(spec, self)?))
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// `[workload.fs]` (`FsConfig`) of `postmark` or (`embedded` true) `embedded`: fills the kind's
/// defaults, checks each key and that the FAT volume can hold the files, records the table.
pub fn resolve_volume(
    w: &WorkloadConfig,
    params: &mut Params<'_>,
    g: &Geometry,
    embedded: bool,
) -> Result<(FsParams, FatLayout), ConfigError> {
    check(
        w.arrival == "closed",
        "workload.arrival",
        "postmark, embedded and media-player workloads are closed-loop (use arrival = \"closed\")",
    )?;
    let mut fs: FsConfig = params.get("fs")?.unwrap_or_default();
    check(
        fs.fill_fraction.is_none(),
        "workload.fs.fill_fraction",
        "only workload.kind = \"media-player\" fills its volume to a high-water mark",
    )?;
    check(
        fs.delete_order.is_none(),
        "workload.fs.delete_order",
        "only workload.kind = \"media-player\" deletes files to make room",
    )?;
    let p = fs.params(embedded);
    check(
        p.cluster_bytes >= 512 && p.cluster_bytes.is_multiple_of(512),
        "workload.fs.cluster_bytes",
        "must be a positive multiple of 512",
    )?;
    check(p.files >= 1, "workload.fs.files", "must be at least 1")?;
    check(p.file_bytes_max >= 1, "workload.fs.file_bytes_max", "must be at least 1")?;
    check(
        p.data_align_bytes >= 512 && p.data_align_bytes.is_multiple_of(512),
        "workload.fs.data_align_bytes",
        "must be a positive multiple of 512",
    )?;
    fs.cluster_bytes = Some(p.cluster_bytes);
    fs.data_align_bytes = Some(p.data_align_bytes);
    fs.files = Some(p.files);
    fs.file_bytes_max = Some(p.file_bytes_max);
    fs.transactions = Some(p.transactions);
    if embedded {
        check(p.record_bytes >= 1, "workload.fs.record_bytes", "must be at least 1")?;
        check(
            p.record_bytes <= p.file_bytes_max,
            "workload.fs.record_bytes",
            "must be at most workload.fs.file_bytes_max",
        )?;
        fs.record_bytes = Some(p.record_bytes);
    } else {
        check(p.file_bytes_min >= 1, "workload.fs.file_bytes_min", "must be at least 1")?;
        check(
            p.file_bytes_min <= p.file_bytes_max,
            "workload.fs.file_bytes_min",
            "must be at most workload.fs.file_bytes_max",
        )?;
        fraction(p.create_bias, "workload.fs.create_bias", false)?;
        fraction(p.read_bias, "workload.fs.read_bias", false)?;
        fs.directories = Some(p.directories);
        fs.file_bytes_min = Some(p.file_bytes_min);
        fs.create_bias = Some(p.create_bias);
        fs.read_bias = Some(p.read_bias);
    }
    let layout = check_volume(embedded, &p, g)?;
    params.set("fs", &fs);
    Ok((p, layout))
}

/// Checks that the volume a config describes can hold the workload's initial files (of the
/// embedded workload, or Postmark's), and lays it out (`resolve_volume`).
pub fn check_volume(embedded: bool, p: &FsParams, g: &Geometry) -> Result<FatLayout, ConfigError> {
    let layout =
        FatLayout::aligned(g.logical_bytes() / SECTOR_BYTES, p.cluster_bytes, p.data_align_bytes)?;
    let per_file = p.file_bytes_max.div_ceil(layout.cluster_bytes());
    let files = u64::from(p.files);
    let dirs = u64::from(p.directories);
    let too_big = |key: &str, needed: u64, what: String| {
        ConfigError::new(
            key,
            format!(
                "{what} need {needed} clusters of {} bytes but the {}-byte volume has {}: lower \
                 workload.fs.files or workload.fs.file_bytes_max, or enlarge the device",
                layout.cluster_bytes(),
                g.logical_bytes(),
                layout.clusters
            ),
        )
    };
    if embedded {
        if files > ROOT_DIR_ENTRIES {
            return Err(ConfigError::new(
                "workload.fs.files",
                format!("the log files live in the root directory, which holds {ROOT_DIR_ENTRIES}"),
            ));
        }
        let needed = files.saturating_mul(per_file);
        if needed > layout.clusters {
            let what = format!("{files} log files of {} bytes", p.file_bytes_max);
            return Err(too_big("workload.fs.file_bytes_max", needed, what));
        }
    } else {
        if dirs > ROOT_DIR_ENTRIES {
            return Err(ConfigError::new(
                "workload.fs.directories",
                format!("the root directory holds {ROOT_DIR_ENTRIES} entries"),
            ));
        }
        if dirs == 0 && files > ROOT_DIR_ENTRIES {
            return Err(ConfigError::new(
                "workload.fs.files",
                format!(
                    "with directories = 0 the files live in the root directory, which holds \
                     {ROOT_DIR_ENTRIES} entries"
                ),
            ));
        }
        // Directory clusters: one per directory plus growth, bounded by the entries needed.
        let dir_clusters = dirs + (files + 2 * dirs).div_ceil(layout.entries_per_cluster());
        let needed = files.saturating_mul(per_file).saturating_add(dir_clusters);
        if needed > layout.clusters {
            let what =
                format!("{files} files of up to {} bytes in {dirs} directories", p.file_bytes_max);
            return Err(too_big("workload.fs.files", needed, what));
        }
    }
    Ok(layout)
}

/// The extents of the operation being issued, handed out as requests of at most
/// `MAX_TRANSFER_SECTORS` sectors in order. Shared by the FAT-based workloads.
#[derive(Clone, Debug, Default)]
pub(crate) struct ExtentQueue {
    /// The operation's extents; volume methods push onto it.
    pub(crate) extents: Vec<Extent>,
    /// Index of the extent being issued.
    pos: usize,
    /// Sectors of that extent already issued.
    done: u64,
}

impl ExtentQueue {
    /// The next request, or `None` (and the queue emptied) when every extent has been issued.
    pub(crate) fn pop(&mut self) -> Option<Request> {
        while let Some(e) = self.extents.get(self.pos).copied() {
            let n = (e.sectors - self.done).min(MAX_TRANSFER_SECTORS);
            let sector = e.sector + self.done;
            self.done += n;
            if self.done >= e.sectors {
                self.pos += 1;
                self.done = 0;
            }
            if n > 0 {
                return Some(Request {
                    kind: e.kind,
                    offset_bytes: sector * SECTOR_BYTES,
                    length_bytes: n * SECTOR_BYTES,
                    arrival_ns: None,
                });
            }
        }
        self.extents.clear();
        self.pos = 0;
        None
    }
}

/// Counts of what a file-system workload did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FsStats {
    pub directories_created: u64,
    pub files_created: u64,
    pub files_deleted: u64,
    pub files_read: u64,
    /// Appends that wrote data (Postmark: a file at the maximum size is not appended to).
    pub appends: u64,
    pub transactions: u64,
    /// Creates and appends dropped because the volume (or the root directory) was full.
    pub dropped_full: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    Prefill(u64),
    /// The prefill has ended: `WorkItem::PrefillDone` is next.
    EndPrefill,
    Format,
    Measure,
    Run,
    Done,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PostmarkPhase {
    Mkdir(u32),
    Populate(u32),
    Transactions(u64),
    Cleanup,
    Done,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Postmark,
    Embedded,
}

/// A `postmark` or `embedded` workload: `WorkItem`s from the FAT volume model.
#[derive(Clone, Debug)]
pub struct FsWorkload {
    kind: Kind,
    p: FsParams,
    vol: FatVolume,
    rng: Prng,
    stage: Stage,
    logical_pages: u64,
    page_size_bytes: u64,
    // Postmark state.
    phase: PostmarkPhase,
    dirs: Vec<DirId>,
    /// Existing files (Postmark) or the log files (embedded).
    live: Vec<FsFile>,
    /// Embedded: next write offset of each log file.
    cursors: Vec<u64>,
    embedded_appends: u64,
    /// Requests of the current operation.
    pending: ExtentQueue,
    stats: FsStats,
    estimated_requests: u64,
}

impl FsWorkload {
    #[cfg(test)]
    /// The workload of a resolved config with `workload.kind` `postmark` or `embedded`.
    pub fn new(r: &WorkloadSpec) -> Result<Self, ConfigError> {
        match r.plan.as_any().downcast_ref::<FsPlan>() {
            Some(plan) => Self::with(r, plan),
            None => Err(ConfigError::new(
                "workload.kind",
                format!("{:?} is not a file-system workload", r.config.kind),
            )),
        }
    }

    /// The workload of `plan` on the device and seed of `r`.
    fn with(r: &WorkloadSpec, plan: &FsPlan) -> Result<Self, ConfigError> {
        let w = &r.config;
        let kind = if plan.embedded { Kind::Embedded } else { Kind::Postmark };
        let p = plan.fs;
        let layout = plan.layout;
        let g = r.geometry;
        let prefill = if w.prefill == Some(false) { 0 } else { g.logical_pages };
        let mut me = Self {
            kind,
            p,
            vol: FatVolume::new(layout),
            rng: Prng::for_stream(r.seed, "workload"),
            stage: if prefill > 0 { Stage::Prefill(0) } else { Stage::Format },
            logical_pages: g.logical_pages,
            page_size_bytes: g.page_size_bytes,
            phase: PostmarkPhase::Mkdir(0),
            dirs: Vec::new(),
            live: Vec::new(),
            cursors: Vec::new(),
            embedded_appends: 0,
            pending: ExtentQueue::default(),
            stats: FsStats::default(),
            estimated_requests: 0,
        };
        me.estimated_requests = prefill + me.estimate_after_prefill();
        Ok(me)
    }

    /// Requests this workload will issue, roughly (for progress bars).
    #[must_use]
    pub fn estimated_requests(&self) -> u64 {
        self.estimated_requests
    }

    #[cfg(test)]
    /// The volume model (its state after the items generated so far).
    #[must_use]
    pub fn volume(&self) -> &FatVolume {
        &self.vol
    }

    #[cfg(test)]
    /// Files that exist now.
    #[must_use]
    pub fn files(&self) -> &[FsFile] {
        &self.live
    }

    #[cfg(test)]
    #[must_use]
    pub fn stats(&self) -> FsStats {
        self.stats
    }

    fn estimate_after_prefill(&self) -> u64 {
        self.estimate_format() + self.estimated_measured_requests()
    }

    /// Requests of the format (before `StartMeasurement`).
    fn estimate_format(&self) -> u64 {
        let l = self.vol.layout();
        let chunks = |sectors: u64| sectors.div_ceil(MAX_TRANSFER_SECTORS);
        chunks(RESERVED_SECTORS) + 2 * chunks(l.fat_sectors) + chunks(l.root_dir_sectors)
    }

    /// Requests of the measured part (everything after the format), roughly (for progress bars
    /// of repeated runs, `workload.repeat`).
    #[must_use]
    pub fn estimated_measured_requests(&self) -> u64 {
        let chunks = |sectors: u64| sectors.div_ceil(MAX_TRANSFER_SECTORS);
        let p = &self.p;
        match self.kind {
            Kind::Postmark => {
                let data = chunks(p.file_bytes_min.midpoint(p.file_bytes_max).div_ceil(512));
                let data = data.max(1);
                // Appends write nothing to files already at the maximum size.
                let append = if p.file_bytes_min == p.file_bytes_max { 0 } else { 3 };
                let (create, delete, read) = (data + 3, 3, data);
                let t = p.transactions as f64
                    * (p.read_bias * read as f64
                        + (1.0 - p.read_bias) * append as f64
                        + p.create_bias * create as f64
                        + (1.0 - p.create_bias) * delete as f64);
                u64::from(p.directories) * 4
                    + u64::from(p.files) * (create + delete)
                    + t.round() as u64
            }
            Kind::Embedded => u64::from(p.files) + 2 * p.transactions,
        }
    }

    /// The next request of the current operation, if any.
    fn pop_pending(&mut self) -> Option<Request> {
        self.pending.pop()
    }

    /// Runs the next operation (pushing its extents); `false` when the workload is over.
    fn step(&mut self) -> bool {
        match self.kind {
            Kind::Postmark => self.postmark_step(),
            Kind::Embedded => self.embedded_step(),
        }
    }

    fn postmark_step(&mut self) -> bool {
        let p = self.p;
        match self.phase {
            PostmarkPhase::Mkdir(i) if i < p.directories => {
                self.phase = PostmarkPhase::Mkdir(i + 1);
                match self.vol.mkdir(ROOT, &mut self.pending.extents) {
                    Ok(d) => {
                        self.dirs.push(d);
                        self.stats.directories_created += 1;
                    }
                    Err(_) => self.stats.dropped_full += 1,
                }
            }
            PostmarkPhase::Mkdir(_) => self.phase = PostmarkPhase::Populate(0),
            PostmarkPhase::Populate(i) if i < p.files => {
                self.phase = PostmarkPhase::Populate(i + 1);
                self.postmark_create();
            }
            PostmarkPhase::Populate(_) => self.phase = PostmarkPhase::Transactions(0),
            PostmarkPhase::Transactions(t) if t < p.transactions && !self.live.is_empty() => {
                self.phase = PostmarkPhase::Transactions(t + 1);
                self.stats.transactions += 1;
                self.postmark_transaction();
            }
            PostmarkPhase::Transactions(_) => self.phase = PostmarkPhase::Cleanup,
            PostmarkPhase::Cleanup => match self.live.pop() {
                Some(f) => {
                    self.vol.delete(f, &mut self.pending.extents);
                    self.stats.files_deleted += 1;
                }
                None => self.phase = PostmarkPhase::Done,
            },
            PostmarkPhase::Done => return false,
        }
        true
    }

    fn postmark_create(&mut self) {
        let p = self.p;
        if self.live.len() as u64 >= 2 * u64::from(p.files) {
            return; // Postmark's file table is full.
        }
        let dir = if self.dirs.is_empty() {
            ROOT
        } else {
            self.dirs[self.rng.below(self.dirs.len() as u64) as usize]
        };
        let spread = p.file_bytes_max.saturating_sub(p.file_bytes_min);
        let size = p.file_bytes_min + self.rng.below(spread.saturating_add(1));
        match self.vol.create(dir, size, &mut self.pending.extents) {
            Ok(f) => {
                self.live.push(f);
                self.stats.files_created += 1;
            }
            Err(_) => self.stats.dropped_full += 1,
        }
    }

    fn postmark_transaction(&mut self) {
        let p = self.p;
        let i = self.rng.below(self.live.len() as u64) as usize;
        if self.rng.unit_f64() < p.read_bias {
            self.vol.read(&self.live[i], &mut self.pending.extents);
            self.stats.files_read += 1;
        } else if self.live[i].size < p.file_bytes_max {
            let f = &mut self.live[i];
            let bytes = 1 + self.rng.below(p.file_bytes_max - f.size);
            match self.vol.append(f, bytes, &mut self.pending.extents) {
                Ok(()) => self.stats.appends += 1,
                Err(_) => self.stats.dropped_full += 1,
            }
        }
        if self.rng.unit_f64() < p.create_bias {
            self.postmark_create();
        } else if !self.live.is_empty() {
            let j = self.rng.below(self.live.len() as u64) as usize;
            let f = self.live.swap_remove(j);
            self.vol.delete(f, &mut self.pending.extents);
            self.stats.files_deleted += 1;
        }
    }

    fn embedded_step(&mut self) -> bool {
        let p = self.p;
        if (self.live.len() as u64) < u64::from(p.files) {
            // check_volume guarantees the root directory has room.
            match self.vol.create(ROOT, 0, &mut self.pending.extents) {
                Ok(f) => {
                    self.live.push(f);
                    self.cursors.push(0);
                    self.stats.files_created += 1;
                }
                Err(_) => {
                    self.stats.dropped_full += 1;
                    return false;
                }
            }
            return true;
        }
        if self.embedded_appends >= p.transactions || self.live.is_empty() {
            return false;
        }
        self.embedded_appends += 1;
        self.stats.transactions += 1;
        let i = self.rng.below(self.live.len() as u64) as usize;
        let mut at = self.cursors[i];
        if at + p.record_bytes > p.file_bytes_max {
            at = 0; // ring: start again over the file's existing clusters
        }
        match self.vol.write(&mut self.live[i], at, p.record_bytes, &mut self.pending.extents) {
            Ok(()) => {
                self.cursors[i] = at + p.record_bytes;
                self.stats.appends += 1;
            }
            Err(_) => self.stats.dropped_full += 1,
        }
        true
    }
}

impl Generator for FsWorkload {
    fn estimated_requests(&self) -> u64 {
        FsWorkload::estimated_requests(self)
    }
    fn estimated_measured_requests(&self) -> u64 {
        FsWorkload::estimated_measured_requests(self)
    }
}

impl Iterator for FsWorkload {
    type Item = WorkItem;

    fn next(&mut self) -> Option<WorkItem> {
        loop {
            if let Some(req) = self.pop_pending() {
                return Some(WorkItem::Request(req));
            }
            match self.stage {
                Stage::Prefill(page) => {
                    self.stage = if page + 1 < self.logical_pages {
                        Stage::Prefill(page + 1)
                    } else {
                        Stage::EndPrefill
                    };
                    let size = self.page_size_bytes;
                    return Some(WorkItem::Request(Request::write(page * size, size)));
                }
                Stage::EndPrefill => {
                    self.stage = Stage::Format;
                    return Some(WorkItem::PrefillDone);
                }
                Stage::Format => {
                    self.vol.format(&mut self.pending.extents);
                    self.stage = Stage::Measure;
                }
                Stage::Measure => {
                    self.stage = Stage::Run;
                    return Some(WorkItem::StartMeasurement);
                }
                Stage::Run => {
                    if !self.step() {
                        self.stage = Stage::Done;
                    }
                }
                Stage::Done => return None,
            }
        }
    }
}
