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
use nandlab_core::flash::{BlockId, CountingMedia, Lpn, Media, Oob, Ppn, GARBAGE_LPN};
use nandlab_core::MediaError;

const MAGIC: &[u8; 8] = b"NANDLAB\x01";
const VERSION: u32 = 1;
const SUPERBLOCK_BYTES: u64 = 4096;
const BLOCK_HEADER_BYTES: u64 = 8;
const OOB_BYTES: usize = 24;
const STATE_PROGRAMMED: u8 = 0x5A;
const ALIGN: u64 = 4096;

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
    total: u64,
}

impl Layout {
    fn of(g: &Geometry) -> Self {
        let headers = SUPERBLOCK_BYTES;
        let oob = (headers + u64::from(g.blocks) * BLOCK_HEADER_BYTES).next_multiple_of(ALIGN);
        let data = (oob + g.physical_pages() * OOB_BYTES as u64).next_multiple_of(ALIGN);
        let total = data + g.physical_pages() * g.page_size_bytes;
        Self {
            page_size: g.page_size_bytes,
            pages_per_block: g.pages_per_block,
            headers,
            oob,
            data,
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

fn encode_oob(oob: &Oob, data_crc: u32) -> [u8; OOB_BYTES] {
    let mut r = [0u8; OOB_BYTES];
    r[0] = STATE_PROGRAMMED;
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
    if r[0] != STATE_PROGRAMMED {
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

pub struct FileMedia {
    meta: CountingMedia,
    data_crc: Vec<u32>,
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
        let found = read_geometry(path)?;
        let mismatch = |key, image, config| StoreError::GeometryMismatch {
            path: path.to_path_buf(),
            key,
            image,
            config,
        };
        if found.page_size_bytes != geometry.page_size_bytes {
            return Err(mismatch(
                "device.page_size_bytes",
                found.page_size_bytes,
                geometry.page_size_bytes,
            ));
        }
        if found.pages_per_block != geometry.pages_per_block {
            return Err(mismatch(
                "device.pages_per_block",
                found.pages_per_block.into(),
                geometry.pages_per_block.into(),
            ));
        }
        if found.blocks != geometry.blocks {
            return Err(mismatch("device.blocks", found.blocks.into(), geometry.blocks.into()));
        }
        if found.logical_pages != geometry.logical_pages {
            return Err(mismatch(
                "device.logical_bytes",
                found.logical_pages * found.page_size_bytes,
                geometry.logical_bytes(),
            ));
        }
        let layout = Layout::of(&geometry);
        let file =
            OpenOptions::new().read(true).write(true).open(path).map_err(|e| io_error(path, &e))?;
        let blocks = geometry.blocks as usize;
        let mut headers = vec![0u8; blocks * BLOCK_HEADER_BYTES as usize];
        file.read_exact_at(&mut headers, layout.headers).map_err(|e| io_error(path, &e))?;
        let erase_counts: Vec<u32> = headers
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
            .collect();
        let pages = geometry.physical_pages() as usize;
        let mut oobs: Vec<Option<Oob>> = Vec::with_capacity(pages);
        let mut data_crc = vec![0u32; pages];
        // Read the OOB area in 1 MiB chunks.
        let per_chunk = (1 << 20) / OOB_BYTES;
        let mut buf = vec![0u8; per_chunk * OOB_BYTES];
        let mut done = 0usize;
        while done < pages {
            let n = per_chunk.min(pages - done);
            let bytes = &mut buf[..n * OOB_BYTES];
            file.read_exact_at(bytes, layout.oob + (done * OOB_BYTES) as u64)
                .map_err(|e| io_error(path, &e))?;
            for (i, r) in bytes.chunks(OOB_BYTES).enumerate() {
                match decode_oob(r) {
                    Some((oob, crc)) => {
                        data_crc[done + i] = crc;
                        oobs.push(Some(oob));
                    }
                    None => oobs.push(None),
                }
            }
            done += n;
        }
        let meta = CountingMedia::restore(geometry, &erase_counts, &oobs);
        Ok(Self::with(meta, data_crc, file, path, layout))
    }

    fn with(
        meta: CountingMedia,
        data_crc: Vec<u32>,
        file: File,
        path: &Path,
        layout: Layout,
    ) -> Self {
        Self {
            meta,
            data_crc,
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

    fn write_page_data(&mut self, ppn: Ppn, data: &[u8]) -> u32 {
        if let Err(e) = self.file.write_all_at(data, self.layout.data_at(ppn)) {
            self.fail("page write", &e);
        }
        crc32fast::hash(data)
    }

    fn write_oob(&mut self, ppn: Ppn, oob: &Oob, data_crc: u32) {
        if let Err(e) = self.file.write_all_at(&encode_oob(oob, data_crc), self.layout.oob_at(ppn))
        {
            self.fail("OOB write", &e);
        }
    }
}

impl Media for FileMedia {
    fn geometry(&self) -> &Geometry {
        self.meta.geometry()
    }

    fn program(&mut self, ppn: Ppn, oob: Oob, data: Option<&[u8]>) {
        self.meta.program(ppn, oob, None);
        let crc = match data {
            Some(d) => {
                assert_eq!(d.len() as u64, self.layout.page_size, "page payload of wrong size");
                self.write_page_data(ppn, d)
            }
            None => {
                // No payload (simulation-only writes): the page reads back as zeros.
                let zeros = std::mem::take(&mut self.page_buf);
                let mut z = zeros;
                z.fill(0);
                let crc = self.write_page_data(ppn, &z);
                self.page_buf = z;
                crc
            }
        };
        self.data_crc[ppn as usize] = crc;
        self.write_oob(ppn, &oob, crc);
    }

    fn read(&mut self, ppn: Ppn, data: Option<&mut [u8]>) -> Oob {
        let oob = self.meta.read(ppn, None);
        if let Some(buf) = data {
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
        }
        oob
    }

    fn copy(&mut self, from: Ppn, to: Ppn, oob: Oob) {
        let mut buf = std::mem::take(&mut self.page_buf);
        self.read(from, Some(&mut buf));
        self.program(to, oob, Some(&buf));
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
        self.meta.memory_bytes() + self.data_crc.len() as u64 * 4
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
