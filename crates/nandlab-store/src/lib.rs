//! `FileMedia`: a payload-storing, file-backed flash media — the NAND image behind
//! `nandlab serve`. It keeps the same RAM metadata as the counting media (so the FTL's hot
//! paths never touch the file) and writes through to an image laid out like real NAND: page
//! data plus a per-page out-of-band (OOB) record, per-block headers, a superblock naming the
//! image's geometry and layout, LFSS checkpoint slots and the NVRAM of a RAM region. The byte
//! layout is in `format` and `docs/IMAGE_FORMAT.md`.
//!
//! Promises: every write whose `pwrite`s completed survives `kill -9` (they are in
//! the kernel's page cache; FLUSH / FUA add `fdatasync` for power loss); a restart finds every
//! such write, and never serves an older version of a page in its place:
//! - a program writes the page data first and its OOB record second, an erase rewrites the
//!   block header, then zeroes the block's OOB records; so an OOB record found at start-up
//!   always describes data that was completely written;
//! - every metadata record is mirrored with a CRC per copy, the two copies in different areas
//!   (never in one page of the file): damage to one copy — a lost page, a torn run of sectors —
//!   is repaired, and the mount rewrites the damaged copy; a record with no readable copy is a
//!   torn write only where a torn write can be (the last programmed page of a block, after a
//!   crash) and otherwise makes the mount fail with the damaged pages named (its LPN is
//!   unknown, so serving would risk an older copy of some page);
//! - a clean stop records that it was one, with the newest sequence number and the count of
//!   programmed pages: the next mount then takes any unreadable record as damage (no write was
//!   interrupted), and refuses an image that does not hold what was recorded;
//! - page data CRCs are checked on every read (a mismatch is an error for exactly that page);
//! - the RAM region's pages are written through to NVRAM cells, two per slot used
//!   alternately, so an interrupted update leaves the previous version intact;
//! - the image is locked (`flock`) while open: a second server is refused, naming the holder;
//! - recorded geometry and layout (FTL kind, placement, regions, NVRAM) are compared with the
//!   configuration at every start-up; a difference is refused naming the key.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use nandlab_core::media::{
    BlockId, BlockRecord, Checkpoint, CountingMedia, Lpn, Media, NvramEntry, Oob, Ppn, GARBAGE_LPN,
    MAX_PLAUSIBLE_ERASE_COUNT,
};
use nandlab_core::MediaError;
use nandlab_core::{Geometry, Resolved};

mod format;
pub mod metadata;

pub use format::ImageInfo;
use format::{
    decode_header, decode_holder, decode_nvram, decode_oob, decode_stop, decode_superblock_area,
    encode_header, encode_holder, encode_nvram, encode_oob, encode_stop, encode_superblock,
    encode_torn_oob, Cell, Header, Layout, Record, Stop, BLOCK_WRITTEN, CHECKPOINT_BLOCK_BYTES,
    CHECKPOINT_HEADER_BYTES, CHECKPOINT_MAGIC, COPY_BYTES, HEADER_COPY_BYTES, HOLDER_AT,
    STOP_RECORD_AT, STOP_RECORD_BYTES, SUPERBLOCK_AREA_BYTES, SUPERBLOCK_COPY_AT,
};
pub use metadata::Classifier;

/// Why an image cannot be opened or created.
#[derive(Debug)]
#[non_exhaustive]
pub enum StoreError {
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// Not a nandlab image, or a superblock with no readable copy.
    NotAnImage {
        path: PathBuf,
        message: String,
    },
    /// The image was written under a different geometry or layout; `key` names the config key.
    Mismatch {
        path: PathBuf,
        key: &'static str,
        image: String,
        config: String,
    },
    /// Another process has the image open.
    Locked {
        path: PathBuf,
        holder: String,
    },
    /// Metadata damaged beyond what the mirrored copies repair.
    Damaged {
        path: PathBuf,
        what: String,
    },
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Io { path, source } => write!(f, "{}: {source}", path.display()),
            Self::NotAnImage { path, message } => {
                write!(f, "{}: not a nandlab image ({message})", path.display())
            }
            Self::Mismatch { path, key, image, config } => write!(
                f,
                "{}: the image has {key} = {image} but the configuration says {config}; serve \
                 it with --set {key}={image} (or without setting it), or use a new image path",
                path.display()
            ),
            Self::Locked { path, holder } => write!(
                f,
                "{}: the image is in use by {holder}; one server at a time may open an image",
                path.display()
            ),
            Self::Damaged { path, what } => {
                write!(f, "{}: the image is damaged beyond repair: {what}", path.display())
            }
        }
    }
}

impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

fn io_error(path: &Path, e: std::io::Error) -> StoreError {
    StoreError::Io { path: path.to_path_buf(), source: e }
}

fn damaged(path: &Path, what: String) -> StoreError {
    StoreError::Damaged { path: path.to_path_buf(), what }
}

/// The identity a resolved configuration gives a new image (and expects of an existing one).
#[must_use]
pub fn identity(r: &Resolved) -> ImageInfo {
    let g = &r.geometry;
    // The identity records names (the image format stores strings), taken from the typed specs.
    let placement = r.placement();
    let page = placement.is_some();
    ImageInfo {
        page_size_bytes: g.page_size_bytes,
        pages_per_block: g.pages_per_block,
        blocks: g.blocks,
        logical_pages: g.logical_pages,
        ftl_kind: r.config.ftl.kind.clone(),
        placement: placement.map_or_else(String::new, |p| p.name().to_string()),
        flash_regions: if page { r.regions } else { 0 },
        nvram_pages: if page { r.ram_region_pages() } else { 0 },
        planes: r.hardware.planes(),
    }
}

/// A named area of an image: whole 4 KiB pages of the file (`docs/IMAGE_FORMAT.md`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImageArea {
    pub name: &'static str,
    pub bytes: std::ops::Range<u64>,
}

/// The areas of an image of this identity, in file order (tools, and the damage tests).
#[must_use]
pub fn image_areas(info: &ImageInfo) -> Vec<ImageArea> {
    let g = Geometry {
        page_size_bytes: info.page_size_bytes,
        pages_per_block: info.pages_per_block,
        blocks: info.blocks,
        logical_pages: info.logical_pages,
        sector_size_bytes: 512,
    };
    let layout = Layout::of(&g, info.nvram_pages);
    layout.areas().into_iter().map(|(name, bytes)| ImageArea { name, bytes }).collect()
}

/// Reads an existing image's superblock (to size a device from it). Takes no lock.
pub fn read_image_info(path: &Path) -> Result<ImageInfo, StoreError> {
    let file = File::open(path).map_err(|e| io_error(path, e))?;
    read_superblock(&file, path).map(|(info, _, _)| info)
}

/// The superblock area: the image's identity, whether a copy was repaired, and the stop record.
fn read_superblock(
    file: &File,
    path: &Path,
) -> Result<(ImageInfo, bool, Option<Stop>), StoreError> {
    let mut area = vec![0u8; SUPERBLOCK_AREA_BYTES as usize];
    file.read_exact_at(&mut area, 0).map_err(|e| {
        // A file too short to hold a superblock is not an image; any other failure is the
        // storage's, and keeps its kind.
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            StoreError::NotAnImage {
                path: path.to_path_buf(),
                message: format!("shorter than a superblock area ({SUPERBLOCK_AREA_BYTES} bytes)"),
            }
        } else {
            io_error(path, e)
        }
    })?;
    let (info, repaired) = decode_superblock_area(&area)
        .map_err(|message| StoreError::NotAnImage { path: path.to_path_buf(), message })?;
    let copy = |i: usize| {
        let at = STOP_RECORD_AT[i] as usize;
        &area[at..at + STOP_RECORD_BYTES]
    };
    Ok((info, repaired, decode_stop(copy(0), copy(1))))
}

/// Compares an image's identity with what the configuration expects.
/// `nvram_key` names the key that sizes the RAM region (`PlacementSpec::ram_region_key`).
fn check_identity(
    path: &Path,
    image: &ImageInfo,
    want: &ImageInfo,
    nvram_key: &'static str,
) -> Result<(), StoreError> {
    let mismatch = |key, image: String, config: String| {
        Err(StoreError::Mismatch { path: path.to_path_buf(), key, image, config })
    };
    if image.page_size_bytes != want.page_size_bytes {
        let (i, c) = (image.page_size_bytes, want.page_size_bytes);
        return mismatch("device.page_size_bytes", i.to_string(), c.to_string());
    }
    if image.pages_per_block != want.pages_per_block {
        let (i, c) = (image.pages_per_block, want.pages_per_block);
        return mismatch("device.pages_per_block", i.to_string(), c.to_string());
    }
    if image.blocks != want.blocks {
        return mismatch("device.blocks", image.blocks.to_string(), want.blocks.to_string());
    }
    if image.logical_pages != want.logical_pages {
        let (i, c) = (image.logical_pages, want.logical_pages);
        let (i, c) = (i * image.page_size_bytes, c * want.page_size_bytes);
        return mismatch("device.logical_bytes", i.to_string(), c.to_string());
    }
    if image.planes != want.planes {
        let (i, c) = (image.planes, want.planes);
        return mismatch(
            "device.planes_per_die",
            format!("{i} planes (gangs x chips_per_channel x dies_per_chip x planes_per_die)"),
            format!("{c} planes"),
        );
    }
    if image.ftl_kind != want.ftl_kind {
        return mismatch("ftl.kind", image.ftl_kind.clone(), want.ftl_kind.clone());
    }
    if image.placement != want.placement {
        return mismatch("ftl.placement", image.placement.clone(), want.placement.clone());
    }
    if image.flash_regions != want.flash_regions {
        let (i, c) = (image.flash_regions, want.flash_regions);
        return mismatch("ftl.regions", i.to_string(), c.to_string());
    }
    if image.nvram_pages < want.nvram_pages {
        let key = nvram_key;
        let (i, c) = (image.nvram_pages, want.nvram_pages);
        let (i, c) = (u64::from(i) * image.page_size_bytes, u64::from(c) * want.page_size_bytes);
        return mismatch(key, i.to_string(), c.to_string());
    }
    Ok(())
}

/// How to rebuild the tables at start-up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mount {
    /// Read every OOB record (the DAC server's start-up scan).
    Scan,
    /// From the newest valid checkpoint, rolling forward the blocks written since (LFSS fast
    /// mount, docs/ALGORITHMS.md §3); a full scan when there is none.
    Checkpoint,
}

/// How an image was mounted, and what the mount repaired.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct MountReport {
    /// A valid checkpoint was found and used (otherwise every OOB record was scanned).
    pub from_checkpoint: bool,
    /// Its generation (0 = none).
    pub checkpoint_generation: u64,
    /// Blocks whose OOB records the mount read (all of them after a full scan).
    pub blocks_scanned: u64,
    /// One superblock copy was unreadable (the other was used).
    pub superblock_repaired: bool,
    /// Block headers with one unreadable copy (repaired) / with none (erase count unknown,
    /// taken as the largest neighbouring count; the block is re-read).
    pub block_headers_repaired: u64,
    pub block_headers_lost: u64,
    /// OOB records read with one unreadable copy (repaired).
    pub oob_records_repaired: u64,
    /// Unreadable OOB records at the end of a block's programmed pages: writes a crash cut
    /// short (never acknowledged); their pages are garbage, and the mount records them as
    /// garbage in the image, so that pages programmed after them do not make them unrecoverable.
    pub torn_pages: u64,
    /// Erases a crash cut short (the block header was rewritten, clearing its "programmed since
    /// erase" flag, but not all OOB records were zeroed): finished at mount. What such a block
    /// still held was superseded or trimmed — the FTL erases only blocks with nothing current —
    /// so it must not come back (a trimmed page would be current again).
    pub erases_completed: u64,
    /// Checkpoint slots that failed their CRCs (torn or damaged) or whose content was
    /// implausible: ignored (the other slot's older checkpoint, or a full scan, was used).
    pub checkpoints_rejected: u64,
    /// NVRAM cell headers with one unreadable copy (repaired).
    pub nvram_cells_repaired: u64,
    /// NVRAM pages whose data failed its CRC: their LPNs read as errors.
    pub nvram_pages_damaged: u64,
    /// The image had been stopped cleanly (its stop record said so): every unreadable record
    /// is then damage, and the mount checked that the image holds what the stop recorded.
    pub clean_stop: bool,
    /// Damaged copies of records (block headers, OOB records, NVRAM cell headers, the
    /// superblock, the stop record) that the mount rewrote from their readable mirror.
    pub copies_rewritten: u64,
}

pub struct FileMedia {
    meta: CountingMedia,
    logical_pages: u64,
    data_crc: Vec<u32>,
    /// One bit per page: `data_crc` is known (after a checkpoint mount, a page's CRC is read
    /// from its OOB record the first time the page is read).
    crc_known: Vec<u64>,
    checkpoint_generation: u64,
    /// Metadata-only mode: decides which pages keep their payload.
    classifier: Option<Arc<Mutex<Classifier>>>,
    /// One bit per page: programmed without payload (reads return zeros).
    no_payload: Vec<u64>,
    /// One bit per block: its header says "programmed since erase" (set before the block's
    /// first program after an erase, so a checkpoint mount knows which free blocks to re-read).
    written: Vec<u64>,
    /// Per NVRAM slot: the cell holding its newest version (0 or 1; 2 = none yet).
    nvram_cell: Vec<u8>,
    /// Write order of the next NVRAM write.
    nvram_order: u64,
    /// Mounts of the image so far, this one included (the stop record's count).
    mounts: u64,
    /// Highest sequence number programmed (what a clean stop records).
    max_seq: u64,
    /// Per block: programmed pages (OOB records) — what a clean stop records, summed. `None`
    /// after a checkpoint mount, which does not read the blocks it trusts.
    block_records: Option<Vec<u32>>,
    /// A clean stop was recorded: the next write reopens the image first.
    stopped_cleanly: bool,
    /// An operation on the image failed this session: what it left is unknown, so the stop
    /// cannot be recorded as clean.
    write_failed: bool,
    nvram_entries: Vec<NvramEntry>,
    file: File,
    path: PathBuf,
    layout: Layout,
    error: Option<MediaError>,
    page_buf: Vec<u8>,
    zero_oob_block: Vec<u8>,
}

fn bit(v: &[u64], i: usize) -> bool {
    v[i / 64] & (1 << (i % 64)) != 0
}

fn set_bit(v: &mut [u64], i: usize, on: bool) {
    if on {
        v[i / 64] |= 1 << (i % 64);
    } else {
        v[i / 64] &= !(1 << (i % 64));
    }
}

/// Opens (creating if asked) the image file and takes its exclusive lock for the media's
/// lifetime; a second opener gets `Locked` naming the holder recorded in the image.
fn open_locked(path: &Path, create: bool) -> Result<File, StoreError> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(create)
        .truncate(false)
        .open(path)
        .map_err(|e| io_error(path, e))?;
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            let mut h = [0u8; 96];
            let holder = file
                .read_exact_at(&mut h, HOLDER_AT)
                .ok()
                .and_then(|()| decode_holder(&h))
                .map_or_else(
                    || "another process".to_string(),
                    |(pid, since, host)| {
                        format!("process {pid} on {host} (opened it at unix time {since})")
                    },
                );
            return Err(StoreError::Locked { path: path.to_path_buf(), holder });
        }
        Err(std::fs::TryLockError::Error(e)) => return Err(io_error(path, e)),
    }
    Ok(file)
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map_or_else(|_| "this host".into(), |h| h.trim().to_string())
}

fn write_holder(file: &File, path: &Path) -> Result<(), StoreError> {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    file.write_all_at(&encode_holder(std::process::id(), since, &hostname()), HOLDER_AT)
        .map_err(|e| io_error(path, e))
}

/// Writes both copies of the stop record, A then B (not synced: the caller syncs).
fn write_stop(file: &File, path: &Path, stop: &Stop) -> Result<(), StoreError> {
    let r = encode_stop(stop);
    for at in STOP_RECORD_AT {
        file.write_all_at(&r, at).map_err(|e| io_error(path, e))?;
    }
    Ok(())
}

/// Per-block bookkeeping while decoding OOB records at mount.
struct Decoded {
    oobs: Vec<Option<Oob>>,
    data_crc: Vec<u32>,
    no_payload: Vec<u64>,
    crc_known: Vec<u64>,
    /// Unreadable records not at a block's end (their LPN is unknown).
    unrecoverable: Vec<Ppn>,
    /// Unreadable records at a block's end: torn writes, taken as garbage pages.
    torn: Vec<Ppn>,
    /// Records with one damaged copy, and the copy both areas should hold (zeros for an erased
    /// record): the mount rewrites them.
    repairs: Vec<(Ppn, [u8; COPY_BYTES])>,
    /// Pages a checkpoint maps, in blocks not erased since, whose record is gone: `(lpn, ppn)`.
    lost: Vec<(Lpn, Ppn)>,
}

impl Decoded {
    fn new(pages: usize, crcs_known: bool) -> Self {
        let words = pages.div_ceil(64);
        Self {
            oobs: vec![None; pages],
            data_crc: vec![0; pages],
            no_payload: vec![0; words],
            crc_known: vec![if crcs_known { u64::MAX } else { 0 }; words],
            unrecoverable: Vec::new(),
            torn: Vec::new(),
            repairs: Vec::new(),
            lost: Vec::new(),
        }
    }
}

impl FileMedia {
    /// Creates a fresh, fully erased image (a sparse file) for a resolved configuration; an
    /// existing file at `path` is replaced, unless another process holds it.
    pub fn create(path: &Path, r: &Resolved) -> Result<Self, StoreError> {
        let info = identity(r);
        let g = r.geometry;
        let layout = Layout::of(&g, info.nvram_pages);
        let file = open_locked(path, true)?;
        file.set_len(0).map_err(|e| io_error(path, e))?;
        file.set_len(layout.total).map_err(|e| io_error(path, e))?;
        let sb = encode_superblock(&info);
        for at in SUPERBLOCK_COPY_AT {
            file.write_all_at(&sb, at).map_err(|e| io_error(path, e))?;
        }
        write_stop(
            &file,
            path,
            &Stop { mounts: 1, clean: false, max_seq: 0, programmed_pages: 0 },
        )?;
        write_holder(&file, path)?;
        file.sync_all().map_err(|e| io_error(path, e))?;
        let pages = g.physical_pages() as usize;
        let mut media =
            Self::with(CountingMedia::new(g), Decoded::new(pages, true), file, path, layout);
        media.nvram_cell = vec![2; info.nvram_pages as usize];
        Ok(media)
    }

    /// Opens an existing image and rebuilds the metadata: by scanning every OOB record
    /// (`Mount::Scan`) or from the newest valid checkpoint plus the blocks written since
    /// (`Mount::Checkpoint`). Geometry and layout must match the configuration. Copies the
    /// mount found damaged are rewritten from their mirror, and the stop record is set to
    /// "open" (synced) before anything else is written.
    pub fn open(
        path: &Path,
        r: &Resolved,
        mount: Mount,
    ) -> Result<(Self, MountReport), StoreError> {
        let file = open_locked(path, false)?;
        let (info, superblock_repaired, stop) = read_superblock(&file, path)?;
        let want = identity(r);
        let nvram_key = r.placement().map_or("", |p| p.ram_region_key());
        check_identity(path, &info, &want, nvram_key)?;
        let g = r.geometry;
        let layout = Layout::of(&g, info.nvram_pages);
        let len = file.metadata().map_err(|e| io_error(path, e))?.len();
        if len < layout.total {
            return Err(damaged(
                path,
                format!("the file has {len} bytes; its layout needs {}: truncated", layout.total),
            ));
        }
        let clean = stop.filter(|s| s.clean);
        let mut report = MountReport {
            superblock_repaired,
            clean_stop: clean.is_some(),
            ..MountReport::default()
        };
        let headers = read_headers(&file, path, &layout, g.blocks, &mut report)?;
        let cp = match mount {
            Mount::Scan => None,
            Mount::Checkpoint => newest_checkpoint(&file, &layout, &g, &mut report),
        };
        let cp_seq = cp.as_ref().map(|c| c.seq);
        let (mut decoded, generation, read_list) = match cp {
            None => {
                let mut d = Decoded::new(g.physical_pages() as usize, true);
                read_blocks(&file, path, &layout, &g, g.block_ids(), &mut d, &mut report)?;
                report.blocks_scanned = u64::from(g.blocks);
                (d, 0, g.block_ids().collect())
            }
            Some(cp) => roll_forward(&file, path, &layout, &g, &headers, &cp, &mut report)?,
        };
        let scan = MountScan { file: &file, path, layout: &layout, geometry: g, clean };
        scan.complete_interrupted_erases(&headers.list, &read_list, &mut decoded, &mut report)?;
        scan.refuse_unreadable(&decoded)?;
        scan.check_clean_stop(&decoded, cp_seq)?;
        scan.rewrite_repairs(&info, superblock_repaired, &headers, &decoded, &mut report)?;
        persist_torn_pages(&file, path, &layout, &decoded)?;
        let max_seq = decoded.oobs.iter().flatten().map(|o| o.seq).max().unwrap_or(0);
        let erase_counts: Vec<u32> = headers.list.iter().map(|h| h.0).collect();
        let meta = CountingMedia::restore(g, &erase_counts, &decoded.oobs);
        let written: Vec<bool> = headers.list.iter().map(|h| h.1 & BLOCK_WRITTEN != 0).collect();
        let records: Vec<u32> = decoded
            .oobs
            .chunks(g.pages_per_block as usize)
            .map(|b| b.iter().filter(|o| o.is_some()).count() as u32)
            .collect();
        let mut media = Self::with(meta, decoded, file, path, layout);
        for (b, w) in written.into_iter().enumerate() {
            set_bit(&mut media.written, b, w);
        }
        media.max_seq = max_seq.max(cp_seq.unwrap_or(0));
        // After a checkpoint mount the blocks it trusted were not read: their record counts are
        // unknown, and so is what the next clean stop could record of them.
        media.block_records = (!report.from_checkpoint).then_some(records);
        media.checkpoint_generation = generation.max(newest_generation(&media.file, &layout));
        media.read_nvram(&mut report)?;
        media.mounts = stop.map_or(0, |s| s.mounts) + 1;
        let open = Stop { mounts: media.mounts, clean: false, max_seq: 0, programmed_pages: 0 };
        write_stop(&media.file, path, &open)?;
        write_holder(&media.file, path)?;
        media.file.sync_data().map_err(|e| io_error(path, e))?;
        Ok((media, report))
    }

    fn with(meta: CountingMedia, d: Decoded, file: File, path: &Path, layout: Layout) -> Self {
        let blocks = meta.geometry().blocks as usize;
        let logical_pages = meta.geometry().logical_pages;
        Self {
            meta,
            logical_pages,
            data_crc: d.data_crc,
            crc_known: d.crc_known,
            checkpoint_generation: 0,
            classifier: None,
            no_payload: d.no_payload,
            written: vec![0; blocks.div_ceil(64)],
            nvram_cell: vec![2; layout.nvram_pages as usize],
            nvram_order: 1,
            mounts: 1,
            max_seq: 0,
            block_records: Some(vec![0; blocks]),
            stopped_cleanly: false,
            write_failed: false,
            nvram_entries: Vec::new(),
            file,
            path: path.to_path_buf(),
            layout,
            error: None,
            page_buf: vec![0; layout.page_size as usize],
            zero_oob_block: vec![0; layout.pages_per_block as usize * COPY_BYTES],
        }
    }

    /// Reads every NVRAM slot: the newest readable cell of each is an entry
    /// (`take_nvram_entries`); a cell header with no readable copy fails the mount (it could be
    /// the newest version of its page).
    fn read_nvram(&mut self, report: &mut MountReport) -> Result<(), StoreError> {
        let slots = self.layout.nvram_pages;
        if slots == 0 {
            return Ok(());
        }
        let n = 2 * slots as usize * COPY_BYTES;
        let mut headers = [vec![0u8; n], vec![0u8; n]];
        for (copy, buf) in headers.iter_mut().enumerate() {
            self.file
                .read_exact_at(buf, self.layout.nvram_headers[copy])
                .map_err(|e| io_error(&self.path, e))?;
        }
        let mut max_order = 0;
        let mut rewrite: Vec<(u32, u8, [u8; COPY_BYTES])> = Vec::new();
        for slot in 0..slots {
            let raw = |copy: usize, c: u8| {
                let at = (2 * slot as usize + c as usize) * COPY_BYTES;
                &headers[copy][at..at + COPY_BYTES]
            };
            let cells = [0u8, 1].map(|c| decode_nvram(raw(0, c), raw(1, c)));
            let mut best: Option<(u8, Lpn, u64, u64, u32, bool)> = None;
            for (c, decoded) in cells.iter().enumerate() {
                match *decoded {
                    Cell::Empty => {}
                    Cell::EmptyRepaired => {
                        report.nvram_cells_repaired += 1;
                        rewrite.push((slot, c as u8, [0; COPY_BYTES]));
                    }
                    Cell::Damaged => {
                        return Err(damaged(
                            &self.path,
                            format!(
                                "NVRAM slot {slot} cell {c}: header unreadable in both copies \
                                 (it may hold a RAM-region page's newest version)"
                            ),
                        ));
                    }
                    Cell::Page { lpn, seq, order, data_crc, lost, repaired } => {
                        report.nvram_cells_repaired += u64::from(repaired);
                        if repaired {
                            let h = encode_nvram(lpn, seq, order, data_crc, lost);
                            rewrite.push((slot, c as u8, h));
                        }
                        max_order = max_order.max(order);
                        if best.is_none_or(|b| order > b.3) {
                            best = Some((c as u8, lpn, seq, order, data_crc, lost));
                        }
                    }
                }
            }
            let Some((c, lpn, seq, order, data_crc, lost)) = best else { continue };
            self.nvram_cell[slot as usize] = c;
            let mut data = vec![0u8; self.layout.page_size as usize];
            self.file
                .read_exact_at(&mut data, self.layout.nvram_data_at(slot, c))
                .map_err(|e| io_error(&self.path, e))?;
            let bad = lost || crc32fast::hash(&data) != data_crc;
            report.nvram_pages_damaged += u64::from(bad);
            self.nvram_entries.push(NvramEntry {
                slot,
                lpn,
                seq,
                order,
                data: (!bad).then_some(data),
                damaged: bad,
            });
        }
        for (slot, c, h) in rewrite {
            for copy in 0..2 {
                let at = self.layout.nvram_header_at(copy, slot, c);
                self.file.write_all_at(&h, at).map_err(|e| io_error(&self.path, e))?;
            }
            report.copies_rewritten += 1;
        }
        self.nvram_order = max_order + 1;
        Ok(())
    }

    /// Size of the image file in bytes (sparse: most of it may not be allocated).
    #[must_use]
    pub fn image_bytes(&self) -> u64 {
        self.layout.total
    }

    /// Records the first failure of an operation (the media's operations cannot fail: they keep
    /// the RAM state and report here, see `Media::take_error`). `what` names the operation and
    /// the page, block or slot; the `io::Error` is kept as the cause, with its kind.
    #[cold]
    fn fail(&mut self, what: std::fmt::Arguments<'_>, e: std::io::Error) {
        self.write_failed = true;
        if self.error.is_none() {
            self.error = Some(MediaError::io(format!("{}: {what}", self.path.display()), e));
        }
    }

    /// Records the first failure found by a check (no `io::Error`: e.g. a CRC mismatch).
    #[cold]
    fn fail_check(&mut self, what: std::fmt::Arguments<'_>) {
        if self.error.is_none() {
            let context = format!("{}: {what}", self.path.display());
            self.error = Some(MediaError::new(std::io::ErrorKind::InvalidData, context));
        }
    }

    /// After a checkpoint mount a page's data CRC (and whether it has a payload) is read from
    /// its OOB record on first use. False (and an error recorded) if that record is unreadable.
    fn load_crc(&mut self, ppn: Ppn) -> bool {
        if bit(&self.crc_known, ppn.index()) {
            return true;
        }
        let mut r = [[0u8; COPY_BYTES]; 2];
        for (copy, buf) in r.iter_mut().enumerate() {
            if let Err(e) = self.file.read_exact_at(buf, self.layout.oob_at(copy, ppn)) {
                self.fail(format_args!("page {ppn}: OOB record read"), e);
                return false;
            }
        }
        match decode_oob(&r[0], &r[1], self.logical_pages) {
            Record::Programmed { data_crc, has_payload, .. } => {
                self.data_crc[ppn.index()] = data_crc;
                set_bit(&mut self.no_payload, ppn.index(), !has_payload);
                set_bit(&mut self.crc_known, ppn.index(), true);
                true
            }
            Record::Erased | Record::ErasedRepaired | Record::Damaged => {
                self.fail_check(format_args!(
                    "page {ppn}: its OOB record is unreadable in both copies"
                ));
                false
            }
        }
    }

    fn has_payload(&self, ppn: Ppn) -> bool {
        !bit(&self.no_payload, ppn.index())
    }

    fn write_page_data(&mut self, ppn: Ppn, data: &[u8]) -> u32 {
        if let Err(e) = self.file.write_all_at(data, self.layout.data_at(ppn)) {
            self.fail(format_args!("page {ppn}: data write"), e);
        }
        crc32fast::hash(data)
    }

    /// Writes a page's OOB record, copy A then copy B (a crash between them leaves copy A,
    /// which describes data already written).
    fn write_oob(&mut self, ppn: Ppn, oob: &Oob, data_crc: u32) {
        let record = encode_oob(oob, data_crc, self.has_payload(ppn));
        for copy in 0..2 {
            if let Err(e) = self.file.write_all_at(&record, self.layout.oob_at(copy, ppn)) {
                self.fail(format_args!("page {ppn}: OOB record write"), e);
            }
        }
        self.max_seq = self.max_seq.max(oob.seq);
        if let Some(r) = &mut self.block_records {
            r[self.meta.geometry().block_of(ppn).index()] += 1;
        }
    }

    /// Writes a block header, copy A then copy B (a crash between them leaves the later
    /// header in A, which the mount's "larger header wins" rule picks).
    fn write_header(&mut self, block: BlockId, flags: u32) {
        let h = encode_header(self.meta.erase_count(block), flags);
        for copy in 0..2 {
            if let Err(e) = self.file.write_all_at(&h, self.layout.header_at(copy, block)) {
                self.fail(format_args!("block {block}: header write"), e);
            }
        }
        set_bit(&mut self.written, block.index(), flags & BLOCK_WRITTEN != 0);
    }

    /// Before the first write after a recorded clean stop: the stop record says "open" again
    /// (at a new count, so it orders after the clean one), or a crash from now on would be
    /// taken for damage after a clean stop.
    fn reopen(&mut self) {
        if !self.stopped_cleanly {
            return;
        }
        self.stopped_cleanly = false;
        self.mounts += 1;
        let open = encode_stop(&Stop {
            mounts: self.mounts,
            clean: false,
            max_seq: 0,
            programmed_pages: 0,
        });
        for at in STOP_RECORD_AT {
            if let Err(e) = self.file.write_all_at(&open, at) {
                self.fail(format_args!("stop record write"), e);
            }
        }
        if let Err(e) = self.file.sync_data() {
            self.fail(format_args!("fdatasync (stop record)"), e);
        }
    }

    /// Programs a page; its payload is stored only when `keep` (metadata-only mode drops the
    /// rest: such a page reads back as zeros and costs no data-area space). `carried`: the
    /// data CRC to record instead of the data's own (a copy carries its source's, see `copy`).
    fn program_page(
        &mut self,
        ppn: Ppn,
        oob: Oob,
        data: Option<&[u8]>,
        keep: bool,
        carried: Option<u32>,
    ) {
        self.reopen();
        let block = self.meta.geometry().block_of(ppn);
        if !bit(&self.written, block.index()) {
            // Before the block's first program since its erase: a checkpoint mount re-reads
            // blocks so marked even if the checkpoint listed them free.
            self.write_header(block, BLOCK_WRITTEN);
        }
        self.meta.program(ppn, oob, None);
        set_bit(&mut self.crc_known, ppn.index(), true);
        if !keep {
            set_bit(&mut self.no_payload, ppn.index(), true);
            self.data_crc[ppn.index()] = 0;
            self.write_oob(ppn, &oob, 0);
            return;
        }
        set_bit(&mut self.no_payload, ppn.index(), false);
        let crc = match data {
            Some(d) => {
                assert_eq!(d.len() as u64, self.layout.page_size, "page payload of wrong size");
                self.write_page_data(ppn, d)
            }
            None => {
                // No payload (simulation-only writes, sealing pages): the page reads as zeros.
                let mut z = std::mem::take(&mut self.page_buf);
                z.fill(0);
                let crc = self.write_page_data(ppn, &z);
                self.page_buf = z;
                crc
            }
        };
        let crc = carried.unwrap_or(crc);
        self.data_crc[ppn.index()] = crc;
        self.write_oob(ppn, &oob, crc);
    }

    /// Switches to metadata-only storage (`serve.store = "metadata-only"`): from now on the
    /// classifier decides which written pages keep their payload.
    pub fn set_metadata_only(&mut self, classifier: Arc<Mutex<Classifier>>) {
        self.classifier = Some(classifier);
    }

    /// Bytes the image occupies on disk (it is sparse).
    #[must_use]
    pub fn allocated_bytes(&self) -> u64 {
        use std::os::unix::fs::MetadataExt;
        self.file.metadata().map(|m| m.blocks() * 512).unwrap_or(0)
    }

    /// Writes NVRAM cell `1 - current` of `slot`: page first, header last.
    fn write_nvram_cell(&mut self, slot: u32, lpn: Lpn, seq: u64, data: Option<&[u8]>, lost: bool) {
        self.reopen();
        assert!(slot < self.layout.nvram_pages, "NVRAM slot {slot} past the NVRAM area");
        let cell = if self.nvram_cell[slot as usize] == 0 { 1 } else { 0 };
        let crc = match data {
            Some(d) => {
                assert_eq!(d.len() as u64, self.layout.page_size, "NVRAM page of wrong size");
                if let Err(e) = self.file.write_all_at(d, self.layout.nvram_data_at(slot, cell)) {
                    self.fail(format_args!("NVRAM slot {slot} cell {cell}: page write"), e);
                }
                crc32fast::hash(d)
            }
            None if lost => 0,
            None => {
                let z = std::mem::take(&mut self.page_buf);
                let mut z = z;
                z.fill(0);
                if let Err(e) = self.file.write_all_at(&z, self.layout.nvram_data_at(slot, cell)) {
                    self.fail(format_args!("NVRAM slot {slot} cell {cell}: page write"), e);
                }
                let crc = crc32fast::hash(&z);
                self.page_buf = z;
                crc
            }
        };
        let h = encode_nvram(lpn, seq, self.nvram_order, crc, lost);
        self.nvram_order += 1;
        for copy in 0..2 {
            let at = self.layout.nvram_header_at(copy, slot, cell);
            if let Err(e) = self.file.write_all_at(&h, at) {
                self.fail(format_args!("NVRAM slot {slot} cell {cell}: header write"), e);
            }
        }
        self.nvram_cell[slot as usize] = cell;
    }
}

impl Media for FileMedia {
    fn geometry(&self) -> &Geometry {
        self.meta.geometry()
    }

    fn program(&mut self, ppn: Ppn, oob: Oob, data: Option<&[u8]>) {
        let keep = match (&self.classifier, data) {
            (None, _) => true,
            (Some(c), Some(d)) => {
                c.lock().unwrap_or_else(PoisonError::into_inner).keep(u64::from(oob.lpn), d)
            }
            (Some(_), None) => false,
        };
        self.program_page(ppn, oob, data, keep, None);
    }

    fn read(&mut self, ppn: Ppn, data: Option<&mut [u8]>) -> Oob {
        let oob = self.meta.read(ppn, None);
        let Some(buf) = data else { return oob };
        if !self.load_crc(ppn) {
            buf.fill(0);
            return oob;
        }
        if !self.has_payload(ppn) {
            buf.fill(0);
            return oob;
        }
        match self.file.read_exact_at(buf, self.layout.data_at(ppn)) {
            Err(e) => self.fail(format_args!("page {ppn} (LPN {}): data read", oob.lpn), e),
            Ok(()) => {
                if crc32fast::hash(buf) != self.data_crc[ppn.index()] {
                    self.fail_check(format_args!(
                        "page {ppn} (LPN {}) fails its data CRC",
                        oob.lpn
                    ));
                }
            }
        }
        oob
    }

    /// Moves the page as it is, its data CRC with it (copyback moves the raw bits and their
    /// ECC): a page that fails its CRC fails it at its new place too, and the LPN reads as an
    /// error there. Verifying and re-sealing instead would give damaged data a fresh, matching
    /// CRC — serving it later as good — and would fail the host request that merely triggered
    /// the cleaning. A source that cannot be read at all (I/O error, or an unreadable OOB
    /// record after a checkpoint mount) is reported, and the copy gets a CRC that cannot match.
    fn copy(&mut self, from: Ppn, to: Ppn, oob: Oob) {
        self.meta.read(from, None);
        let mut buf = std::mem::take(&mut self.page_buf);
        // A copy keeps whatever its source kept: the rules apply once, when the host writes.
        let crc = if !self.load_crc(from) {
            buf.fill(0);
            !crc32fast::hash(&buf)
        } else if !self.has_payload(from) {
            0
        } else {
            match self.file.read_exact_at(&mut buf, self.layout.data_at(from)) {
                Ok(()) => self.data_crc[from.index()],
                Err(e) => {
                    self.fail(format_args!("page {from}: data read (copy to page {to})"), e);
                    buf.fill(0);
                    !crc32fast::hash(&buf)
                }
            }
        };
        let keep = self.has_payload(from);
        self.program_page(to, oob, Some(&buf), keep, Some(crc));
        self.page_buf = buf;
    }

    fn oob(&self, ppn: Ppn) -> Option<Oob> {
        self.meta.oob(ppn)
    }

    fn lpn(&self, ppn: Ppn) -> Option<Lpn> {
        self.meta.lpn(ppn)
    }

    fn prefetch_block_oob(&self, block: BlockId) {
        self.meta.prefetch_block_oob(block);
    }

    /// Header first (both copies), then the records (area A, then B): a crash in between
    /// leaves a header saying "erased" over records the next mount then zeroes.
    fn erase(&mut self, block: BlockId) {
        self.reopen();
        self.meta.erase(block);
        self.write_header(block, 0);
        let first = self.meta.geometry().ppn(block, 0);
        for copy in 0..2 {
            let at = self.layout.oob_at(copy, first);
            if let Err(e) = self.file.write_all_at(&self.zero_oob_block, at) {
                self.fail(format_args!("block {block}: erase (OOB records)"), e);
            }
        }
        if let Some(r) = &mut self.block_records {
            r[block.index()] = 0;
        }
    }

    /// A program a power cut interrupted (fault injection, see `Media::tear`): the block header
    /// says "programmed since erase" (as before any first program of the block), half of the
    /// page's data is written and its OOB record fails its CRC in both copies, so the next
    /// mount takes the page as torn. Only the image changes: the session that tears a page
    /// ends there (the media is only dropped afterwards).
    fn tear(&mut self, ppn: Ppn, oob: Oob) {
        let block = self.meta.geometry().block_of(ppn);
        if !bit(&self.written, block.index()) {
            self.write_header(block, BLOCK_WRITTEN);
        }
        let mut half = std::mem::take(&mut self.page_buf);
        half.fill(0xA5);
        let n = half.len() / 2;
        if let Err(e) = self.file.write_all_at(&half[..n], self.layout.data_at(ppn)) {
            self.fail(format_args!("page {ppn}: torn data write"), e);
        }
        self.page_buf = half;
        let torn = encode_torn_oob(&oob);
        for copy in 0..2 {
            if let Err(e) = self.file.write_all_at(&torn, self.layout.oob_at(copy, ppn)) {
                self.fail(format_args!("page {ppn}: torn OOB record write"), e);
            }
        }
    }

    fn erase_count(&self, block: BlockId) -> u32 {
        self.meta.erase_count(block)
    }

    fn programmed_pages(&self, block: BlockId) -> u32 {
        self.meta.programmed_pages(block)
    }

    fn memory_bytes(&self) -> u64 {
        self.meta.memory_bytes()
            + self.data_crc.len() as u64 * 4
            + (self.crc_known.len() + self.no_payload.len() + self.written.len()) as u64 * 8
    }

    fn write_checkpoint(&mut self, cp: &Checkpoint<'_>) -> Result<(), MediaError> {
        let generation = self.checkpoint_generation + 1;
        let payload = encode_checkpoint_payload(cp);
        let header = checkpoint_header(cp, generation, &payload);
        let at = self.layout.checkpoints + (generation % 2) * self.layout.checkpoint_slot;
        let path = &self.path;
        let err = |e: std::io::Error| {
            MediaError::io(format!("{}: checkpoint {generation} write", path.display()), e)
        };
        // Payload first, header (with both CRCs) last: a torn checkpoint fails its CRC and the
        // other slot's older checkpoint is used.
        self.file.write_all_at(&payload, at + CHECKPOINT_HEADER_BYTES).map_err(err)?;
        self.file.write_all_at(&header, at).map_err(err)?;
        self.file.sync_data().map_err(err)?;
        self.checkpoint_generation = generation;
        Ok(())
    }

    fn sync(&mut self) -> Result<(), MediaError> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.file
            .sync_data()
            .map_err(|e| MediaError::io(format!("{}: fdatasync", self.path.display()), e))
    }

    /// Syncs, then writes the stop record "clean" with the newest sequence number and the
    /// programmed pages (unknown after a checkpoint mount), then syncs it.
    fn record_clean_stop(&mut self) -> Result<(), MediaError> {
        self.sync()?;
        if self.write_failed {
            return Err(MediaError::new(
                std::io::ErrorKind::Other,
                format!(
                    "{}: not recorded as a clean stop: an operation on the image failed during \
                     the session",
                    self.path.display()
                ),
            ));
        }
        let programmed =
            self.block_records.as_ref().map_or(u64::MAX, |r| r.iter().map(|&n| u64::from(n)).sum());
        let stop = Stop {
            mounts: self.mounts,
            clean: true,
            max_seq: self.max_seq,
            programmed_pages: programmed,
        };
        let r = encode_stop(&stop);
        let err = |e| MediaError::io(format!("{}: stop record write", self.path.display()), e);
        for at in STOP_RECORD_AT {
            self.file.write_all_at(&r, at).map_err(err)?;
        }
        self.file.sync_data().map_err(err)?;
        self.stopped_cleanly = true;
        Ok(())
    }

    fn take_error(&mut self) -> Option<MediaError> {
        self.error.take()
    }

    fn report_error(&mut self, error: MediaError) {
        if self.error.is_none() {
            self.error = Some(error);
        }
    }

    fn nvram_pages(&self) -> u32 {
        self.layout.nvram_pages
    }

    fn nvram_write(&mut self, slot: u32, lpn: Lpn, seq: u64, data: Option<&[u8]>) {
        self.write_nvram_cell(slot, lpn, seq, data, false);
    }

    fn nvram_poison(&mut self, slot: u32, lpn: Lpn, seq: u64) {
        self.write_nvram_cell(slot, lpn, seq, None, true);
    }

    fn take_nvram_entries(&mut self) -> Vec<NvramEntry> {
        std::mem::take(&mut self.nvram_entries)
    }
}

/// The block headers as the mount read them.
struct Headers {
    /// Per block: `(erase count, flags, known)`.
    list: Vec<(u32, u32, bool)>,
    /// Blocks whose two copies were not the same (one damaged, or a crash between the two
    /// writes): both are rewritten with the header chosen.
    repaired: Vec<BlockId>,
}

/// Reads every block header from areas A and B. A header with no readable copy gets the largest
/// known count (wear statistics only; `known = false` makes a checkpoint mount re-read the
/// block); an implausible count fails the mount.
fn read_headers(
    file: &File,
    path: &Path,
    layout: &Layout,
    blocks: u32,
    report: &mut MountReport,
) -> Result<Headers, StoreError> {
    let n = blocks as usize * HEADER_COPY_BYTES as usize;
    let mut raw = [vec![0u8; n], vec![0u8; n]];
    for (copy, buf) in raw.iter_mut().enumerate() {
        file.read_exact_at(buf, layout.headers[copy]).map_err(|e| io_error(path, e))?;
    }
    let mut h = Headers { list: Vec::with_capacity(blocks as usize), repaired: Vec::new() };
    let mut lost = Vec::new();
    let size = HEADER_COPY_BYTES as usize;
    let copies = raw[0].chunks(size).zip(raw[1].chunks(size));
    for (b, (a, bb)) in (0..blocks).map(BlockId::new).zip(copies) {
        match decode_header(a, bb) {
            Header::Valid { erase_count, flags, repaired } => {
                report.block_headers_repaired += u64::from(repaired);
                if repaired {
                    h.repaired.push(b);
                }
                h.list.push((erase_count, flags, true));
            }
            Header::Lost => {
                lost.push(b);
                // Flags unknown: "written", so a checkpoint mount reads the block.
                h.list.push((0, BLOCK_WRITTEN, false));
            }
            Header::Implausible { erase_count } => {
                return Err(damaged(
                    path,
                    format!(
                        "block {b}'s header records {erase_count} erases (at most \
                         {MAX_PLAUSIBLE_ERASE_COUNT} is plausible)"
                    ),
                ));
            }
        }
    }
    let max = h.list.iter().map(|x| x.0).max().unwrap_or(0);
    for b in lost {
        h.list[b.index()].0 = max;
        report.block_headers_lost += 1;
    }
    Ok(h)
}

/// Records each torn page this mount found (an unreadable record at the end of its block's
/// programmed pages, taken as garbage) as a readable garbage record, durably, before the FTL
/// programs anything after it. Otherwise the next page programmed in that block would make the
/// same record "unreadable and followed by programmed pages", which the next mount must refuse
/// (its LPN unknown): one torn write would cost the image at the restart after next. A garbage
/// record names no LPN and holds no payload, so it reads back exactly as this mount took it.
/// Records an interrupted erase has since zeroed are skipped.
fn persist_torn_pages(
    file: &File,
    path: &Path,
    layout: &Layout,
    d: &Decoded,
) -> Result<(), StoreError> {
    let mut wrote = false;
    for &ppn in &d.torn {
        let Some(oob) = d.oobs[ppn.index()] else { continue };
        // Sequence number 0 reads as damaged; garbage ignores it, so the smallest valid one.
        let record = encode_oob(&Oob { seq: oob.seq.max(1), ..oob }, 0, false);
        for copy in 0..2 {
            file.write_all_at(&record, layout.oob_at(copy, ppn)).map_err(|e| io_error(path, e))?;
        }
        wrote = true;
    }
    if wrote {
        file.sync_data().map_err(|e| io_error(path, e))?;
    }
    Ok(())
}

/// Reads and decodes the OOB records of `blocks` (both areas) into `d`, 1 MiB of each area at
/// a time. An unreadable record followed by no programmed page in its block is a torn write
/// (garbage); one followed by programmed pages is recorded as unrecoverable.
fn read_blocks(
    file: &File,
    path: &Path,
    layout: &Layout,
    g: &Geometry,
    blocks: impl Iterator<Item = BlockId>,
    d: &mut Decoded,
    report: &mut MountReport,
) -> Result<(), StoreError> {
    let ppb = layout.pages_per_block as usize;
    let per_chunk_blocks = ((1usize << 20) / (ppb * COPY_BYTES)).max(1);
    let chunk = per_chunk_blocks * ppb * COPY_BYTES;
    let mut bufs = [vec![0u8; chunk], vec![0u8; chunk]];
    let blocks: Vec<BlockId> = blocks.collect();
    // Runs of consecutive blocks are read with one call per area.
    let mut i = 0;
    while i < blocks.len() {
        let first = blocks[i];
        let mut n = 1;
        while i + n < blocks.len()
            && blocks[i + n].index() == first.index() + n
            && n < per_chunk_blocks
        {
            n += 1;
        }
        for (copy, buf) in bufs.iter_mut().enumerate() {
            let at = layout.oob_at(copy, g.ppn(first, 0));
            file.read_exact_at(&mut buf[..n * ppb * COPY_BYTES], at)
                .map_err(|e| io_error(path, e))?;
        }
        let [a, b] = &bufs;
        let per_block = ppb * COPY_BYTES;
        for k in 0..n {
            let r = k * per_block..(k + 1) * per_block;
            let pages = g.pages_of(blocks[i + k]);
            decode_block(&a[r.clone()], &b[r], pages, g.logical_pages, d, report);
        }
        i += n;
    }
    Ok(())
}

/// Decodes one block's records (`ra`, `rb`: its copies in areas A and B; `pages`: its pages)
/// into `d`.
fn decode_block(
    ra: &[u8],
    rb: &[u8],
    pages: impl Iterator<Item = Ppn>,
    logical_pages: u64,
    d: &mut Decoded,
    report: &mut MountReport,
) {
    let mut last_damaged: Option<Ppn> = None;
    for (ppn, (a, b)) in pages.zip(ra.chunks(COPY_BYTES).zip(rb.chunks(COPY_BYTES))) {
        let i = ppn.index();
        match decode_oob(a, b, logical_pages) {
            Record::Erased => d.oobs[i] = None,
            Record::ErasedRepaired => {
                report.oob_records_repaired += 1;
                d.repairs.push((ppn, [0; COPY_BYTES]));
                d.oobs[i] = None;
            }
            Record::Programmed { oob, data_crc, has_payload, repaired } => {
                if let Some(p) = last_damaged.take() {
                    d.unrecoverable.push(p);
                }
                if repaired {
                    report.oob_records_repaired += 1;
                    d.repairs.push((ppn, encode_oob(&oob, data_crc, has_payload)));
                }
                d.oobs[i] = Some(oob);
                d.data_crc[i] = data_crc;
                set_bit(&mut d.no_payload, i, !has_payload);
                set_bit(&mut d.crc_known, i, true);
            }
            Record::Damaged => {
                if let Some(p) = last_damaged.replace(ppn) {
                    d.unrecoverable.push(p);
                }
                d.oobs[i] = None;
            }
        }
    }
    if let Some(p) = last_damaged {
        // The block's last non-erased record: a program a crash cut short.
        report.torn_pages += 1;
        d.oobs[p.index()] = Some(Oob { lpn: GARBAGE_LPN, seq: 0, region: 0 });
        set_bit(&mut d.crc_known, p.index(), true);
        d.torn.push(p);
    }
}

/// The checkpoint mount: blocks unchanged since the newest valid checkpoint are taken from it,
/// the others are read (roll-forward). Returns the decoded records, the checkpoint's generation
/// and the blocks read.
fn roll_forward(
    file: &File,
    path: &Path,
    layout: &Layout,
    g: &Geometry,
    headers: &Headers,
    cp: &StoredCheckpoint,
    report: &mut MountReport,
) -> Result<(Decoded, u64, Vec<BlockId>), StoreError> {
    let ppb = g.pages_per_block as usize;
    let headers = &headers.list;
    let mut d = Decoded::new(g.physical_pages() as usize, false);
    // A block is as the checkpoint saw it if its erase count is unchanged (and known) and it
    // was closed then, or free then and not programmed since.
    let same = |b: usize| headers[b].2 && cp.blocks[b].erase_count == headers[b].0;
    let mut rescan = Vec::new();
    for (block, rec) in g.block_ids().zip(&cp.blocks) {
        let b = block.index();
        if same(b) && rec.state == 0 && headers[b].1 & BLOCK_WRITTEN == 0 {
            continue;
        }
        if !(same(b) && rec.state == 2) {
            rescan.push(block);
            continue;
        }
        for slot in &mut d.oobs[b * ppb..(b + 1) * ppb] {
            *slot = Some(Oob { lpn: GARBAGE_LPN, seq: 0, region: rec.region });
        }
    }
    for (lpn, &ppn) in (0..).map(Lpn::new).zip(&cp.l2p) {
        let b = g.block_of(ppn).index();
        if ppn != Ppn::NONE && same(b) && cp.blocks[b].state == 2 {
            let region = cp.blocks[b].region;
            d.oobs[ppn.index()] = Some(Oob { lpn, seq: cp.seq, region });
        }
    }
    // Roll forward: the changed blocks' OOB records. A page programmed before the checkpoint
    // counts only if the checkpoint mapped it.
    read_blocks(file, path, layout, g, rescan.iter().copied(), &mut d, report)?;
    // A page the checkpoint maps into a block re-read here but not erased since (same count)
    // still holds its record: only an erase zeroes records, and an erase counts up. A missing
    // or unreadable one is damage (never the torn write of a crash: it was written before the
    // checkpoint), and serving the LPN's older copy instead would be wrong.
    let mut reread = vec![false; g.blocks as usize];
    for &b in &rescan {
        reread[b.index()] = same(b.index());
    }
    for (lpn, &ppn) in (0..).map(Lpn::new).zip(&cp.l2p) {
        if ppn == Ppn::NONE || !reread[g.block_of(ppn).index()] {
            continue;
        }
        let holds = d.oobs[ppn.index()].is_some_and(|o| o.lpn == lpn && o.seq > 0);
        if !holds {
            d.lost.push((lpn, ppn));
        }
    }
    for &b in &rescan {
        for ppn in g.pages_of(b) {
            let Some(oob) = d.oobs[ppn.index()] else { continue };
            if oob.seq > cp.seq || oob.lpn == GARBAGE_LPN {
                continue;
            }
            d.oobs[ppn.index()] = Some(if cp.l2p.get(oob.lpn.index()) == Some(&ppn) {
                Oob { seq: cp.seq, ..oob }
            } else {
                Oob { lpn: GARBAGE_LPN, ..oob }
            });
        }
    }
    report.from_checkpoint = true;
    report.checkpoint_generation = cp.generation;
    report.blocks_scanned = rescan.len() as u64;
    Ok((d, cp.generation, rescan))
}

/// The mount's checks and repairs after the records are decoded.
struct MountScan<'a> {
    file: &'a File,
    path: &'a Path,
    layout: &'a Layout,
    geometry: Geometry,
    /// The stop record, when it says the image was stopped cleanly.
    clean: Option<Stop>,
}

impl MountScan<'_> {
    /// A block whose header says "not programmed since erase" but which still has records is an
    /// erase a crash cut short (the header is written first, then the records zeroed): finished
    /// here. After a clean stop no erase was cut short, so it is damage: refused.
    fn complete_interrupted_erases(
        &self,
        headers: &[(u32, u32, bool)],
        read: &[BlockId],
        d: &mut Decoded,
        report: &mut MountReport,
    ) -> Result<(), StoreError> {
        let ppb = self.layout.pages_per_block as usize;
        let g = self.geometry;
        for &b in read {
            let first = g.ppn(b, 0).index();
            let end = first + ppb;
            let in_block = |p: &Ppn| g.block_of(*p) == b;
            let interrupted_erase = headers[b.index()].2
                && headers[b.index()].1 & BLOCK_WRITTEN == 0
                && (d.oobs[first..end].iter().any(Option::is_some)
                    || d.unrecoverable.iter().any(in_block)
                    || d.torn.iter().any(in_block));
            if !interrupted_erase {
                continue;
            }
            if self.clean.is_some() {
                return Err(damaged(
                    self.path,
                    format!(
                        "block {b}'s header says it was erased, but it holds programmed pages; \
                         the image was stopped cleanly, so no erase was interrupted"
                    ),
                ));
            }
            let zeros = vec![0u8; ppb * COPY_BYTES];
            for copy in 0..2 {
                let at = self.layout.oob_at(copy, g.ppn(b, 0));
                self.file.write_all_at(&zeros, at).map_err(|e| io_error(self.path, e))?;
            }
            d.oobs[first..end].fill(None);
            d.unrecoverable.retain(|p| !in_block(p));
            d.torn.retain(|p| !in_block(p));
            d.repairs.retain(|(p, _)| !in_block(p));
            report.erases_completed += 1;
        }
        Ok(())
    }

    /// Refuses records with no readable copy whose LPN matters: any followed by programmed
    /// pages, and after a clean stop any at all (no write was interrupted, so none is torn);
    /// and pages a checkpoint maps whose record is gone from a block not erased since.
    fn refuse_unreadable(&self, d: &Decoded) -> Result<(), StoreError> {
        let g = self.geometry;
        if let Some(&(lpn, ppn)) = d.lost.first() {
            return Err(damaged(
                self.path,
                format!(
                    "{} page(s) the checkpoint maps have lost their OOB record although their \
                     blocks were not erased since (the first: LPN {lpn} at page {} of block {}): \
                     an older copy could be served",
                    d.lost.len(),
                    g.page_in_block(ppn),
                    g.block_of(ppn)
                ),
            ));
        }
        let torn_too = self.clean.is_some();
        let bad: Vec<Ppn> =
            d.unrecoverable.iter().chain(d.torn.iter().filter(|_| torn_too)).copied().collect();
        if bad.is_empty() {
            return Ok(());
        }
        let n = bad.len();
        let list: Vec<String> = bad
            .iter()
            .take(8)
            .map(|&p| format!("page {} of block {}", g.page_in_block(p), g.block_of(p)))
            .collect();
        let why = if torn_too {
            "the image was stopped cleanly, so no write was interrupted: they are damage"
        } else {
            "followed by programmed pages"
        };
        Err(damaged(
            self.path,
            format!(
                "{n} OOB record(s) unreadable in both copies, {why} ({}{}): the LPN each \
                 described is unknown, so an older copy of it could be served",
                list.join(", "),
                if n > 8 { ", …" } else { "" }
            ),
        ))
    }

    /// After a clean stop the image must hold the newest page the stop recorded (and, read
    /// in full, exactly the programmed pages it recorded): anything less lost pages whose older
    /// copies could be served.
    fn check_clean_stop(&self, d: &Decoded, cp_seq: Option<u64>) -> Result<(), StoreError> {
        let Some(stop) = self.clean else { return Ok(()) };
        let found_seq =
            d.oobs.iter().flatten().map(|o| o.seq).max().unwrap_or(0).max(cp_seq.unwrap_or(0));
        if found_seq < stop.max_seq {
            return Err(damaged(
                self.path,
                format!(
                    "the image was stopped cleanly with pages up to sequence number {}, but \
                     the newest page found has {found_seq}: the newest pages' records are lost",
                    stop.max_seq
                ),
            ));
        }
        let programmed = d.oobs.iter().filter(|o| o.is_some()).count() as u64;
        if cp_seq.is_none()
            && stop.programmed_pages != u64::MAX
            && programmed != stop.programmed_pages
        {
            return Err(damaged(
                self.path,
                format!(
                    "the image was stopped cleanly with {} programmed pages, but {programmed} \
                     have a readable record: records are lost",
                    stop.programmed_pages
                ),
            ));
        }
        Ok(())
    }

    /// Rewrites the copies the mount found damaged (or left different by a crash between the
    /// two writes) from the copy it used: the superblock, block headers and OOB records. An
    /// image so repaired survives the loss of the other copy later.
    fn rewrite_repairs(
        &self,
        info: &ImageInfo,
        superblock_repaired: bool,
        headers: &Headers,
        d: &Decoded,
        report: &mut MountReport,
    ) -> Result<(), StoreError> {
        let w = |bytes: &[u8], at: u64| {
            self.file.write_all_at(bytes, at).map_err(|e| io_error(self.path, e))
        };
        let mut n = 0u64;
        if superblock_repaired {
            let sb = encode_superblock(info);
            for at in SUPERBLOCK_COPY_AT {
                w(&sb, at)?;
            }
            n += 1;
        }
        for &b in &headers.repaired {
            let (count, flags, _) = headers.list[b.index()];
            let h = encode_header(count, flags);
            for copy in 0..2 {
                w(&h, self.layout.header_at(copy, b))?;
            }
            n += 1;
        }
        for (ppn, record) in &d.repairs {
            for copy in 0..2 {
                w(record, self.layout.oob_at(copy, *ppn))?;
            }
            n += 1;
        }
        report.copies_rewritten += n;
        Ok(())
    }
}

/// A checkpoint read back from a slot.
struct StoredCheckpoint {
    generation: u64,
    seq: u64,
    blocks: Vec<BlockRecord>,
    l2p: Vec<Ppn>,
}

/// Checkpoint node header: magic, version, generation, sequence number, update time, blocks,
/// used blocks, logical pages, payload length, payload CRC, header CRC (64 bytes).
fn checkpoint_header(cp: &Checkpoint<'_>, generation: u64, payload: &[u8]) -> Vec<u8> {
    let used = cp.blocks.iter().filter(|b| b.state != 0).count() as u32;
    let mut h = Vec::with_capacity(CHECKPOINT_HEADER_BYTES as usize);
    h.extend_from_slice(&CHECKPOINT_MAGIC.to_le_bytes());
    h.extend_from_slice(&1u32.to_le_bytes());
    h.extend_from_slice(&generation.to_le_bytes());
    h.extend_from_slice(&cp.seq.to_le_bytes());
    h.extend_from_slice(&cp.time_ns.to_le_bytes());
    h.extend_from_slice(&(cp.blocks.len() as u32).to_le_bytes());
    h.extend_from_slice(&used.to_le_bytes());
    h.extend_from_slice(&(cp.l2p.len() as u64).to_le_bytes());
    h.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    h.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
    let crc = crc32fast::hash(&h);
    h.extend_from_slice(&crc.to_le_bytes());
    h.resize(CHECKPOINT_HEADER_BYTES as usize, 0);
    h
}

fn encode_checkpoint_payload(cp: &Checkpoint<'_>) -> Vec<u8> {
    let mut p = Vec::with_capacity(cp.blocks.len() * CHECKPOINT_BLOCK_BYTES + cp.l2p.len() * 4);
    for b in cp.blocks {
        p.extend_from_slice(&b.erase_count.to_le_bytes());
        p.push(b.region);
        p.push(b.state);
        p.extend_from_slice(&[0, 0]);
        p.extend_from_slice(&b.write_pointer.to_le_bytes());
        p.extend_from_slice(&b.valid_pages.to_le_bytes());
    }
    for &ppn in cp.l2p {
        p.extend_from_slice(&ppn.get().to_le_bytes());
    }
    p.extend_from_slice(&(cp.free_order.len() as u32).to_le_bytes());
    for &b in cp.free_order {
        p.extend_from_slice(&b.get().to_le_bytes());
    }
    p
}

/// The generation of the newest checkpoint header whose CRC verifies (0 = none), so that new
/// checkpoints never overwrite the newest valid one.
fn newest_generation(file: &File, layout: &Layout) -> u64 {
    (0..2u64)
        .filter_map(|slot| {
            let mut h = [0u8; 64];
            file.read_exact_at(&mut h, layout.checkpoints + slot * layout.checkpoint_slot).ok()?;
            let ok = u32::from_le_bytes([h[0], h[1], h[2], h[3]]) == CHECKPOINT_MAGIC
                && crc32fast::hash(&h[..60]) == u32::from_le_bytes([h[60], h[61], h[62], h[63]]);
            ok.then(|| u64::from_le_bytes(h[8..16].try_into().expect("8 bytes")))
        })
        .max()
        .unwrap_or(0)
}

/// The newest checkpoint whose header and payload CRCs verify and whose content is plausible
/// (block records within the geometry, every mapped page inside the flash and in a used
/// block), if any. A slot that verifies but is implausible is counted and ignored.
fn newest_checkpoint(
    file: &File,
    layout: &Layout,
    g: &Geometry,
    report: &mut MountReport,
) -> Option<StoredCheckpoint> {
    let mut best: Option<StoredCheckpoint> = None;
    for slot in 0..2u64 {
        let at = layout.checkpoints + slot * layout.checkpoint_slot;
        let mut h = [0u8; 64];
        if file.read_exact_at(&mut h, at).is_err() {
            continue;
        }
        let u32_at = |i: usize| u32::from_le_bytes([h[i], h[i + 1], h[i + 2], h[i + 3]]);
        let u64_at = |i: usize| u64::from_le_bytes(h[i..i + 8].try_into().expect("8 bytes"));
        if h.iter().all(|&b| b == 0) {
            continue; // never written
        }
        if u32_at(0) != CHECKPOINT_MAGIC || crc32fast::hash(&h[..60]) != u32_at(60) {
            report.checkpoints_rejected += 1;
            continue;
        }
        let (generation, seq, blocks, logical) = (u64_at(8), u64_at(16), u32_at(32), u64_at(40));
        let (payload_len, payload_crc) = (u64_at(48), u32_at(56));
        let newer = best.as_ref().is_none_or(|b| generation > b.generation);
        let fixed = u64::from(blocks) * CHECKPOINT_BLOCK_BYTES as u64 + logical * 4 + 4;
        let fits = payload_len >= fixed && payload_len <= fixed + u64::from(blocks) * 4;
        if blocks != g.blocks || logical != g.logical_pages || !newer || !fits {
            continue;
        }
        let mut payload = vec![0u8; payload_len as usize];
        if file.read_exact_at(&mut payload, at + CHECKPOINT_HEADER_BYTES).is_err()
            || crc32fast::hash(&payload) != payload_crc
        {
            report.checkpoints_rejected += 1;
            continue;
        }
        let (records, rest) = payload.split_at(blocks as usize * CHECKPOINT_BLOCK_BYTES);
        let (map, _free) = rest.split_at(logical as usize * 4);
        let blocks: Vec<BlockRecord> = records
            .chunks(CHECKPOINT_BLOCK_BYTES)
            .map(|r| BlockRecord {
                erase_count: u32::from_le_bytes([r[0], r[1], r[2], r[3]]),
                region: r[4],
                state: r[5],
                write_pointer: u32::from_le_bytes([r[8], r[9], r[10], r[11]]),
                valid_pages: u32::from_le_bytes([r[12], r[13], r[14], r[15]]),
            })
            .collect();
        let l2p: Vec<Ppn> =
            map.chunks(4).map(|c| Ppn::new(u32::from_le_bytes([c[0], c[1], c[2], c[3]]))).collect();
        let ppb = g.pages_per_block;
        let blocks_ok = blocks.iter().all(|b| {
            b.state <= 2
                && b.write_pointer <= ppb
                && b.valid_pages <= b.write_pointer
                && b.erase_count <= MAX_PLAUSIBLE_ERASE_COUNT
        });
        let map_ok = l2p.iter().all(|&p| {
            p == Ppn::NONE
                || (u64::from(p) < g.physical_pages() && blocks[g.block_of(p).index()].state != 0)
        });
        if !(blocks_ok && map_ok) {
            report.checkpoints_rejected += 1;
            continue;
        }
        best = Some(StoredCheckpoint { generation, seq, blocks, l2p });
    }
    best
}
