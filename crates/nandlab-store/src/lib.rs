//! `FileMedia`: a payload-storing, file-backed flash media — the NAND image behind
//! `nandlab serve`. It keeps the same RAM metadata as the counting media (so the FTL's hot
//! paths never touch the file) and writes through to an image laid out like real NAND: page
//! data plus a per-page out-of-band (OOB) record, per-block headers, and a superblock.
//!
//! Image layout (all integers little-endian; see `docs/IMAGE_FORMAT.md`):
//! - superblock, 4 KiB at offset 0: magic `NANDLAB\x01`, version, geometry, CRC-32;
//! - block headers, 8 bytes per erase block: erase count and its CRC-32 (all zero = 0 erases);
//! - OOB area, 24 bytes per page: state (0 = erased, 0x5A = programmed), region, LPN, sequence
//!   number, CRC-32 of the page data, CRC-32 of the record. A fresh sparse file is all erased;
//! - data area, one page per physical page.
//!
//! Crash consistency (SPEC §2.5): a program writes the page data first and its OOB record
//! second; an erase rewrites the block header, then zeroes the block's OOB records. Every
//! completed `pwrite` survives a `kill -9` of the process (it is in the kernel's page cache), so
//! after a crash each OOB record describes data that was fully written; a torn OOB record fails
//! its CRC and the page is treated as programmed garbage (never mapped). `sync` (host FLUSH /
//! FUA) adds `fdatasync` for power loss. Mount reads only superblock, headers and OOB records;
//! page data CRCs are checked on every read.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use nandlab_core::config::Geometry;
use nandlab_core::flash::{
    BlockId, BlockRecord, Checkpoint, CountingMedia, Lpn, Media, Oob, Ppn, GARBAGE_LPN,
};
use nandlab_core::MediaError;
use std::sync::{Arc, Mutex, PoisonError};

pub mod metadata;
pub use metadata::Classifier;

const MAGIC: &[u8; 8] = b"NANDLAB\x01";
const VERSION: u32 = 1;
const SUPERBLOCK_BYTES: u64 = 4096;
const BLOCK_HEADER_BYTES: u64 = 8;
const OOB_BYTES: usize = 24;
const STATE_PROGRAMMED: u8 = 0x5A;
/// Programmed in metadata-only mode without its payload: reads return zeros.
const STATE_PROGRAMMED_NO_PAYLOAD: u8 = 0x5B;
const ALIGN: u64 = 4096;
/// LFSS checkpoint node magic (SPEC §3).
const CHECKPOINT_MAGIC: u32 = 0xEECC_2299;
const CHECKPOINT_HEADER_BYTES: u64 = 4096;
const CHECKPOINT_BLOCK_BYTES: usize = 16;

/// Why an image cannot be opened or created.
#[derive(Debug)]
#[non_exhaustive]
pub enum StoreError {
    Io {
        path: PathBuf,
        message: String,
    },
    /// Not a nandlab image, or a damaged superblock.
    NotAnImage {
        path: PathBuf,
        message: String,
    },
    /// The image's geometry differs from the configuration; `key` names the config key.
    GeometryMismatch {
        path: PathBuf,
        key: &'static str,
        image: u64,
        config: u64,
    },
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Io { path, message } => write!(f, "{}: {message}", path.display()),
            Self::NotAnImage { path, message } => {
                write!(f, "{}: not a nandlab image ({message})", path.display())
            }
            Self::GeometryMismatch { path, key, image, config } => write!(
                f,
                "{}: the image has {key} = {image} but the configuration says {config}; use \
                 the image's geometry or a new image path",
                path.display()
            ),
        }
    }
}

impl std::error::Error for StoreError {}

/// Byte offsets of the image's areas.
#[derive(Clone, Copy, Debug)]
struct Layout {
    page_size: u64,
    pages_per_block: u32,
    headers: u64,
    oob: u64,
    data: u64,
    /// Two checkpoint slots ("super segments") after the data area.
    checkpoints: u64,
    checkpoint_slot: u64,
    total: u64,
}

impl Layout {
    fn of(g: &Geometry) -> Self {
        let headers = SUPERBLOCK_BYTES;
        let oob = (headers + u64::from(g.blocks) * BLOCK_HEADER_BYTES).next_multiple_of(ALIGN);
        let data = (oob + g.physical_pages() * OOB_BYTES as u64).next_multiple_of(ALIGN);
        let checkpoints = data + g.physical_pages() * g.page_size_bytes;
        let checkpoint_slot = (CHECKPOINT_HEADER_BYTES
            + u64::from(g.blocks) * (CHECKPOINT_BLOCK_BYTES as u64 + 4)
            + 4
            + g.logical_pages * 4)
            .next_multiple_of(ALIGN);
        let total = checkpoints + 2 * checkpoint_slot;
        Self {
            page_size: g.page_size_bytes,
            pages_per_block: g.pages_per_block,
            headers,
            oob,
            data,
            checkpoints,
            checkpoint_slot,
            total,
        }
    }
    fn data_at(&self, ppn: Ppn) -> u64 {
        self.data + u64::from(ppn) * self.page_size
    }
    fn oob_at(&self, ppn: Ppn) -> u64 {
        self.oob + u64::from(ppn) * OOB_BYTES as u64
    }
    fn header_at(&self, block: BlockId) -> u64 {
        self.headers + u64::from(block) * BLOCK_HEADER_BYTES
    }
}

fn encode_oob(oob: &Oob, data_crc: u32, has_payload: bool) -> [u8; OOB_BYTES] {
    let mut r = [0u8; OOB_BYTES];
    r[0] = if has_payload { STATE_PROGRAMMED } else { STATE_PROGRAMMED_NO_PAYLOAD };
    r[1] = oob.region;
    r[4..8].copy_from_slice(&oob.lpn.to_le_bytes());
    r[8..16].copy_from_slice(&oob.seq.to_le_bytes());
    r[16..20].copy_from_slice(&data_crc.to_le_bytes());
    let crc = crc32fast::hash(&r[..20]);
    r[20..24].copy_from_slice(&crc.to_le_bytes());
    r
}

/// Decodes an OOB record: `None` = erased; a programmed record whose CRC fails decodes as
/// `GARBAGE_LPN`.
fn decode_oob(r: &[u8]) -> Option<(Oob, u32)> {
    if r[0] != STATE_PROGRAMMED && r[0] != STATE_PROGRAMMED_NO_PAYLOAD {
        return None;
    }
    let word = |i: usize| u32::from_le_bytes([r[i], r[i + 1], r[i + 2], r[i + 3]]);
    let crc_ok = crc32fast::hash(&r[..20]) == word(20);
    let mut seq = [0u8; 8];
    seq.copy_from_slice(&r[8..16]);
    let oob = Oob {
        lpn: if crc_ok { word(4) } else { GARBAGE_LPN },
        seq: if crc_ok { u64::from_le_bytes(seq) } else { 0 },
        region: if crc_ok { r[1] } else { 0 },
    };
    Some((oob, word(16)))
}

fn encode_superblock(g: &Geometry) -> Vec<u8> {
    let mut s = Vec::with_capacity(SUPERBLOCK_BYTES as usize);
    s.extend_from_slice(MAGIC);
    s.extend_from_slice(&VERSION.to_le_bytes());
    s.extend_from_slice(&g.page_size_bytes.to_le_bytes());
    s.extend_from_slice(&g.pages_per_block.to_le_bytes());
    s.extend_from_slice(&g.blocks.to_le_bytes());
    s.extend_from_slice(&g.logical_pages.to_le_bytes());
    let crc = crc32fast::hash(&s);
    s.extend_from_slice(&crc.to_le_bytes());
    s.resize(SUPERBLOCK_BYTES as usize, 0);
    s
}

/// What a superblock says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImageGeometry {
    pub page_size_bytes: u64,
    pub pages_per_block: u32,
    pub blocks: u32,
    pub logical_pages: u64,
}

fn decode_superblock(s: &[u8]) -> Result<ImageGeometry, String> {
    if &s[..8] != MAGIC {
        return Err("bad magic".into());
    }
    let u32_at = |i: usize| u32::from_le_bytes([s[i], s[i + 1], s[i + 2], s[i + 3]]);
    let u64_at = |i: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&s[i..i + 8]);
        u64::from_le_bytes(b)
    };
    if u32_at(8) != VERSION {
        return Err(format!("image version {} (this nandlab reads {VERSION})", u32_at(8)));
    }
    if crc32fast::hash(&s[..36]) != u32_at(36) {
        return Err("superblock CRC mismatch".into());
    }
    Ok(ImageGeometry {
        page_size_bytes: u64_at(12),
        pages_per_block: u32_at(20),
        blocks: u32_at(24),
        logical_pages: u64_at(28),
    })
}

/// Reads an image's superblock (to size a device from an existing image).
pub fn read_geometry(path: &Path) -> Result<ImageGeometry, StoreError> {
    let file = File::open(path).map_err(|e| io_error(path, &e))?;
    let mut s = vec![0u8; SUPERBLOCK_BYTES as usize];
    file.read_exact_at(&mut s, 0)
        .map_err(|e| StoreError::NotAnImage { path: path.to_path_buf(), message: e.to_string() })?;
    decode_superblock(&s)
        .map_err(|message| StoreError::NotAnImage { path: path.to_path_buf(), message })
}

fn io_error(path: &Path, e: &std::io::Error) -> StoreError {
    StoreError::Io { path: path.to_path_buf(), message: e.to_string() }
}

/// How an image was mounted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MountReport {
    /// A valid checkpoint was found and used (otherwise every OOB record was scanned).
    pub from_checkpoint: bool,
    /// Its generation (0 = none).
    pub checkpoint_generation: u64,
    /// Blocks whose OOB records were read (all of them after a full scan).
    pub blocks_scanned: u64,
}

pub struct FileMedia {
    meta: CountingMedia,
    data_crc: Vec<u32>,
    /// One bit per page: `data_crc` is known (after a checkpoint mount, a page's CRC is read
    /// from its OOB record the first time the page is read).
    crc_known: Vec<u64>,
    checkpoint_generation: u64,
    /// Metadata-only mode: decides which pages keep their payload.
    classifier: Option<Arc<Mutex<Classifier>>>,
    /// One bit per page: programmed without payload (reads return zeros).
    no_payload: Vec<u64>,
    file: File,
    path: PathBuf,
    layout: Layout,
    error: Option<MediaError>,
    page_buf: Vec<u8>,
    zero_oob_block: Vec<u8>,
}

impl FileMedia {
    /// Creates a fresh, fully erased image (a sparse file).
    pub fn create(path: &Path, geometry: Geometry) -> Result<Self, StoreError> {
        let layout = Layout::of(&geometry);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .map_err(|e| io_error(path, &e))?;
        file.set_len(layout.total).map_err(|e| io_error(path, &e))?;
        file.write_all_at(&encode_superblock(&geometry), 0).map_err(|e| io_error(path, &e))?;
        file.sync_all().map_err(|e| io_error(path, &e))?;
        Ok(Self::with(
            CountingMedia::new(geometry),
            vec![0; geometry.physical_pages() as usize],
            file,
            path,
            layout,
        ))
    }

    /// Opens an existing image and rebuilds the metadata by scanning every OOB record (the
    /// DAC server's start-up scan). The image's geometry must match `geometry`.
    pub fn open(path: &Path, geometry: Geometry) -> Result<Self, StoreError> {
        let (file, layout) = Self::open_file(path, geometry)?;
        let erase_counts = read_erase_counts(&file, path, &layout, geometry.blocks)?;
        let pages = geometry.physical_pages() as usize;
        let mut oobs: Vec<Option<Oob>> = Vec::with_capacity(pages);
        let mut data_crc = vec![0u32; pages];
        let mut no_payload = vec![0u64; pages.div_ceil(64)];
        read_oob_range(&file, path, &layout, 0, pages, |ppn, decoded, dropped| {
            if dropped {
                no_payload[ppn / 64] |= 1 << (ppn % 64);
            }
            oobs.push(decoded.map(|(oob, crc)| {
                data_crc[ppn] = crc;
                oob
            }));
        })?;
        let meta = CountingMedia::restore(geometry, &erase_counts, &oobs);
        let generation = newest_checkpoint(&file, &layout, &geometry).map_or(0, |c| c.generation);
        let mut media = Self::with(meta, data_crc, file, path, layout);
        media.checkpoint_generation = generation;
        media.no_payload = no_payload;
        Ok(media)
    }

    /// Opens an existing image from its newest valid checkpoint (LFSS fast mount, SPEC §3):
    /// read the checkpoint (block records and translation table) and the block headers, then
    /// roll forward: read the OOB records of only the blocks that were free or open at the
    /// checkpoint or have been erased since. Pages the checkpoint maps keep their mapping;
    /// pages programmed after it win by sequence number; everything else is invalid. Without a
    /// valid checkpoint this is `open` (a full scan).
    pub fn open_with_checkpoint(
        path: &Path,
        geometry: Geometry,
    ) -> Result<(Self, MountReport), StoreError> {
        let (file, layout) = Self::open_file(path, geometry)?;
        let Some(cp) = newest_checkpoint(&file, &layout, &geometry) else {
            drop(file);
            let media = Self::open(path, geometry)?;
            let report = MountReport {
                from_checkpoint: false,
                checkpoint_generation: 0,
                blocks_scanned: u64::from(geometry.blocks),
            };
            return Ok((media, report));
        };
        let erase_counts = read_erase_counts(&file, path, &layout, geometry.blocks)?;
        let ppb = geometry.pages_per_block as usize;
        let pages = geometry.physical_pages() as usize;
        let mut oobs: Vec<Option<Oob>> = vec![None; pages];
        let mut data_crc = vec![0u32; pages];
        let mut crc_known = vec![0u64; pages.div_ceil(64)];
        let mut no_payload = vec![0u64; pages.div_ceil(64)];
        let unchanged = |b: usize| {
            let rec = &cp.blocks[b];
            rec.state == 2 && rec.erase_count == erase_counts[b]
        };
        // Blocks closed at the checkpoint and not erased since hold what they held then: the
        // pages the checkpoint maps are valid (sequence number = the checkpoint's, older than
        // anything rolled forward); the rest are invalid. Open blocks and blocks erased since
        // the checkpoint are read again.
        let mut rescan = Vec::new();
        for (b, rec) in cp.blocks.iter().enumerate() {
            if rec.state == 0 && rec.erase_count == erase_counts[b] {
                continue; // Free at the checkpoint: see the allocation-order walk below.
            }
            if !unchanged(b) {
                rescan.push(b);
                continue;
            }
            for slot in &mut oobs[b * ppb..(b + 1) * ppb] {
                *slot = Some(Oob { lpn: GARBAGE_LPN, seq: 0, region: rec.region });
            }
        }
        // Blocks free at the checkpoint are opened in `free_order` after it: the first one whose
        // first page is still erased, and every later one, was never written since.
        for &b in &cp.free_order {
            let b = b as usize;
            if cp.blocks[b].erase_count != erase_counts[b] {
                continue; // Already queued: erased since, so written since.
            }
            let mut first = [0u8; OOB_BYTES];
            file.read_exact_at(&mut first, layout.oob_at((b * ppb) as Ppn))
                .map_err(|e| io_error(path, &e))?;
            if decode_oob(&first).is_none() {
                break;
            }
            rescan.push(b);
        }
        for (lpn, &ppn) in cp.l2p.iter().enumerate() {
            let b = ppn as usize / ppb;
            if ppn != u32::MAX && b < cp.blocks.len() && unchanged(b) {
                let region = cp.blocks[b].region;
                oobs[ppn as usize] = Some(Oob { lpn: lpn as Lpn, seq: cp.seq, region });
            }
        }
        // Roll forward: read the changed blocks' OOB records.
        for &b in &rescan {
            read_oob_range(&file, path, &layout, b * ppb, ppb, |ppn, decoded, dropped| {
                let Some((oob, crc)) = decoded else { return };
                data_crc[ppn] = crc;
                crc_known[ppn / 64] |= 1 << (ppn % 64);
                if dropped {
                    no_payload[ppn / 64] |= 1 << (ppn % 64);
                }
                let oob = if oob.seq > cp.seq || oob.lpn == GARBAGE_LPN {
                    oob
                } else if cp.l2p.get(oob.lpn as usize) == Some(&(ppn as u32)) {
                    // Mapped at the checkpoint (a page of the then-open block).
                    Oob { seq: cp.seq, ..oob }
                } else {
                    Oob { lpn: GARBAGE_LPN, ..oob }
                };
                oobs[ppn] = Some(oob);
            })?;
        }
        let meta = CountingMedia::restore(geometry, &erase_counts, &oobs);
        let mut media = Self::with(meta, data_crc, file, path, layout);
        media.crc_known = crc_known;
        media.no_payload = no_payload;
        media.checkpoint_generation = cp.generation;
        let report = MountReport {
            from_checkpoint: true,
            checkpoint_generation: cp.generation,
            blocks_scanned: rescan.len() as u64,
        };
        Ok((media, report))
    }

    fn open_file(path: &Path, geometry: Geometry) -> Result<(File, Layout), StoreError> {
        let found = read_geometry(path)?;
        let mismatch = |key, image, config| StoreError::GeometryMismatch {
            path: path.to_path_buf(),
            key,
            image,
            config,
        };
        let g = &geometry;
        if found.page_size_bytes != g.page_size_bytes {
            return Err(mismatch(
                "device.page_size_bytes",
                found.page_size_bytes,
                g.page_size_bytes,
            ));
        }
        if found.pages_per_block != g.pages_per_block {
            let (i, c) = (found.pages_per_block.into(), g.pages_per_block.into());
            return Err(mismatch("device.pages_per_block", i, c));
        }
        if found.blocks != g.blocks {
            return Err(mismatch("device.blocks", found.blocks.into(), g.blocks.into()));
        }
        if found.logical_pages != g.logical_pages {
            let image_bytes = found.logical_pages * found.page_size_bytes;
            return Err(mismatch("device.logical_bytes", image_bytes, g.logical_bytes()));
        }
        let layout = Layout::of(g);
        let file =
            OpenOptions::new().read(true).write(true).open(path).map_err(|e| io_error(path, &e))?;
        Ok((file, layout))
    }

    fn with(
        meta: CountingMedia,
        data_crc: Vec<u32>,
        file: File,
        path: &Path,
        layout: Layout,
    ) -> Self {
        let words = data_crc.len().div_ceil(64);
        Self {
            meta,
            data_crc,
            crc_known: vec![u64::MAX; words],
            checkpoint_generation: 0,
            classifier: None,
            no_payload: vec![0; words],
            file,
            path: path.to_path_buf(),
            layout,
            error: None,
            page_buf: vec![0; layout.page_size as usize],
            zero_oob_block: vec![0; layout.pages_per_block as usize * OOB_BYTES],
        }
    }

    /// Size of the image file in bytes (sparse: most of it may not be allocated).
    #[must_use]
    pub fn image_bytes(&self) -> u64 {
        self.layout.total
    }

    fn fail(&mut self, what: &str, e: &std::io::Error) {
        if self.error.is_none() {
            self.error = Some(MediaError(format!("{}: {what}: {e}", self.path.display())));
        }
    }

    /// After a checkpoint mount a page's data CRC (and whether it has a payload) is read from
    /// its OOB record on first use.
    fn load_crc(&mut self, ppn: Ppn) {
        let (w, bit) = (ppn as usize / 64, 1u64 << (ppn % 64));
        if self.crc_known[w] & bit != 0 {
            return;
        }
        let mut r = [0u8; OOB_BYTES];
        match self.file.read_exact_at(&mut r, self.layout.oob_at(ppn)) {
            Ok(()) => {
                if let Some((_, crc)) = decode_oob(&r) {
                    self.data_crc[ppn as usize] = crc;
                }
                if r[0] == STATE_PROGRAMMED_NO_PAYLOAD {
                    self.no_payload[w] |= bit;
                }
                self.crc_known[w] |= bit;
            }
            Err(e) => self.fail("OOB read", &e),
        }
    }

    fn has_payload(&self, ppn: Ppn) -> bool {
        self.no_payload[ppn as usize / 64] & (1 << (ppn % 64)) == 0
    }

    fn write_page_data(&mut self, ppn: Ppn, data: &[u8]) -> u32 {
        if let Err(e) = self.file.write_all_at(data, self.layout.data_at(ppn)) {
            self.fail("page write", &e);
        }
        crc32fast::hash(data)
    }

    fn write_oob(&mut self, ppn: Ppn, oob: &Oob, data_crc: u32) {
        let record = encode_oob(oob, data_crc, self.has_payload(ppn));
        if let Err(e) = self.file.write_all_at(&record, self.layout.oob_at(ppn)) {
            self.fail("OOB write", &e);
        }
    }

    /// Programs a page; its payload is stored only when `keep` (metadata-only mode drops the
    /// rest: such a page reads back as zeros and costs no data-area space).
    fn program_page(&mut self, ppn: Ppn, oob: Oob, data: Option<&[u8]>, keep: bool) {
        self.meta.program(ppn, oob, None);
        let (w, bit) = (ppn as usize / 64, 1u64 << (ppn % 64));
        self.crc_known[w] |= bit;
        if !keep {
            self.no_payload[w] |= bit;
            self.data_crc[ppn as usize] = 0;
            self.write_oob(ppn, &oob, 0);
            return;
        }
        self.no_payload[w] &= !bit;
        let crc = match data {
            Some(d) => {
                assert_eq!(d.len() as u64, self.layout.page_size, "page payload of wrong size");
                self.write_page_data(ppn, d)
            }
            None => {
                // No payload (simulation-only writes): the page reads back as zeros.
                let mut z = std::mem::take(&mut self.page_buf);
                z.fill(0);
                let crc = self.write_page_data(ppn, &z);
                self.page_buf = z;
                crc
            }
        };
        self.data_crc[ppn as usize] = crc;
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
        self.program_page(ppn, oob, data, keep);
    }

    fn read(&mut self, ppn: Ppn, data: Option<&mut [u8]>) -> Oob {
        let oob = self.meta.read(ppn, None);
        let Some(buf) = data else { return oob };
        self.load_crc(ppn);
        if !self.has_payload(ppn) {
            buf.fill(0);
            return oob;
        }
        match self.file.read_exact_at(buf, self.layout.data_at(ppn)) {
            Err(e) => self.fail("page read", &e),
            Ok(()) => {
                if crc32fast::hash(buf) != self.data_crc[ppn as usize] && self.error.is_none() {
                    self.error = Some(MediaError(format!(
                        "{}: page {ppn} (LPN {}) fails its data CRC",
                        self.path.display(),
                        oob.lpn
                    )));
                }
            }
        }
        oob
    }

    fn copy(&mut self, from: Ppn, to: Ppn, oob: Oob) {
        let mut buf = std::mem::take(&mut self.page_buf);
        self.read(from, Some(&mut buf));
        // A copy keeps whatever its source kept: the rules apply once, when the host writes.
        let keep = self.has_payload(from);
        self.program_page(to, oob, Some(&buf), keep);
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

    fn erase(&mut self, block: BlockId) {
        self.meta.erase(block);
        let count = self.meta.erase_count(block);
        let mut h = [0u8; BLOCK_HEADER_BYTES as usize];
        h[..4].copy_from_slice(&count.to_le_bytes());
        let crc = crc32fast::hash(&h[..4]);
        h[4..].copy_from_slice(&crc.to_le_bytes());
        if let Err(e) = self.file.write_all_at(&h, self.layout.header_at(block)) {
            self.fail("block header write", &e);
        }
        let first = block * self.layout.pages_per_block;
        if let Err(e) = self.file.write_all_at(&self.zero_oob_block, self.layout.oob_at(first)) {
            self.fail("erase", &e);
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
            + (self.crc_known.len() + self.no_payload.len()) as u64 * 8
    }

    fn write_checkpoint(&mut self, cp: &Checkpoint<'_>) -> Result<(), MediaError> {
        let generation = self.checkpoint_generation + 1;
        let payload = encode_checkpoint_payload(cp);
        let header = checkpoint_header(cp, generation, &payload);
        let at = self.layout.checkpoints + (generation % 2) * self.layout.checkpoint_slot;
        let path = self.path.display().to_string();
        let err = |e: std::io::Error| MediaError(format!("{path}: checkpoint: {e}"));
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
            .map_err(|e| MediaError(format!("{}: fdatasync: {e}", self.path.display())))
    }

    fn take_error(&mut self) -> Option<MediaError> {
        self.error.take()
    }
}

fn read_erase_counts(
    file: &File,
    path: &Path,
    layout: &Layout,
    blocks: u32,
) -> Result<Vec<u32>, StoreError> {
    let mut headers = vec![0u8; blocks as usize * BLOCK_HEADER_BYTES as usize];
    file.read_exact_at(&mut headers, layout.headers).map_err(|e| io_error(path, &e))?;
    Ok(headers
        .chunks(BLOCK_HEADER_BYTES as usize)
        .map(|h| {
            let count = u32::from_le_bytes([h[0], h[1], h[2], h[3]]);
            let crc = u32::from_le_bytes([h[4], h[5], h[6], h[7]]);
            // A torn header write keeps the count it had; all-zero is a fresh block.
            if crc == crc32fast::hash(&h[..4]) {
                count
            } else {
                0
            }
        })
        .collect())
}

/// Reads the OOB records of pages `first..first + count` in 1 MiB chunks and hands each
/// decoded record (`None` = erased) to `f` with its physical page number.
fn read_oob_range(
    file: &File,
    path: &Path,
    layout: &Layout,
    first: usize,
    count: usize,
    mut f: impl FnMut(usize, Option<(Oob, u32)>, bool),
) -> Result<(), StoreError> {
    let per_chunk = (1 << 20) / OOB_BYTES;
    let mut buf = vec![0u8; per_chunk.min(count) * OOB_BYTES];
    let mut done = 0usize;
    while done < count {
        let n = per_chunk.min(count - done);
        let bytes = &mut buf[..n * OOB_BYTES];
        file.read_exact_at(bytes, layout.oob + ((first + done) * OOB_BYTES) as u64)
            .map_err(|e| io_error(path, &e))?;
        for (i, r) in bytes.chunks(OOB_BYTES).enumerate() {
            f(first + done + i, decode_oob(r), r[0] == STATE_PROGRAMMED_NO_PAYLOAD);
        }
        done += n;
    }
    Ok(())
}

/// A checkpoint read back from a slot.
struct StoredCheckpoint {
    generation: u64,
    seq: u64,
    blocks: Vec<BlockRecord>,
    l2p: Vec<u32>,
    free_order: Vec<u32>,
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
        p.extend_from_slice(&ppn.to_le_bytes());
    }
    p.extend_from_slice(&(cp.free_order.len() as u32).to_le_bytes());
    for &b in cp.free_order {
        p.extend_from_slice(&b.to_le_bytes());
    }
    p
}

/// The newest checkpoint whose header and payload CRCs verify, if any.
fn newest_checkpoint(file: &File, layout: &Layout, g: &Geometry) -> Option<StoredCheckpoint> {
    let mut best: Option<StoredCheckpoint> = None;
    for slot in 0..2u64 {
        let at = layout.checkpoints + slot * layout.checkpoint_slot;
        let mut h = [0u8; 64];
        if file.read_exact_at(&mut h, at).is_err() {
            continue;
        }
        let u32_at = |i: usize| u32::from_le_bytes([h[i], h[i + 1], h[i + 2], h[i + 3]]);
        let u64_at = |i: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&h[i..i + 8]);
            u64::from_le_bytes(b)
        };
        if u32_at(0) != CHECKPOINT_MAGIC || crc32fast::hash(&h[..60]) != u32_at(60) {
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
            continue;
        }
        let (records, rest) = payload.split_at(blocks as usize * CHECKPOINT_BLOCK_BYTES);
        let (map, free) = rest.split_at(logical as usize * 4);
        let words = |bytes: &[u8]| -> Vec<u32> {
            bytes.chunks(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
        };
        let free_order = words(&free[4..]);
        if free_order.len() != u32::from_le_bytes([free[0], free[1], free[2], free[3]]) as usize
            || free_order.iter().any(|&b| b >= g.blocks)
        {
            continue;
        }
        let blocks = records
            .chunks(CHECKPOINT_BLOCK_BYTES)
            .map(|r| BlockRecord {
                erase_count: u32::from_le_bytes([r[0], r[1], r[2], r[3]]),
                region: r[4],
                state: r[5],
                write_pointer: u32::from_le_bytes([r[8], r[9], r[10], r[11]]),
                valid_pages: u32::from_le_bytes([r[12], r[13], r[14], r[15]]),
            })
            .collect();
        let l2p = words(map);
        best = Some(StoredCheckpoint { generation, seq, blocks, l2p, free_order });
    }
    best
}
