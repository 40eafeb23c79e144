//! The on-disk format of a NAND image, byte by byte (`docs/IMAGE_FORMAT.md` draws it): the
//! layout of the areas, and the encoding and decoding of every record. No I/O here.
//!
//! Every metadata record is stored twice, each copy with its own CRC-32 — the redundancy real
//! flash gives its spare area with ECC — and the two copies live in **different areas**, each
//! area padded to whole 4 KiB pages, so no two copies of a record ever share a page of the file:
//! superblock copy A in page 0 and copy B in page 1, block headers in areas A and B, OOB records
//! in areas A and B, NVRAM cell headers in areas A and B. One lost page (zeroed, or filled with
//! garbage), or one torn run of sectors, takes at most one copy of any record; the other copy
//! repairs it. A record whose copies are both unreadable is *detected*, never silently taken for
//! an erased or older one. No copy straddles a 512-byte sector, so the `pwrite` of one copy is
//! all-or-nothing under `kill -9`.
//!
//! Copies are written A first, then B. Each decoding rule below says which states an interrupted
//! write can leave, so that a crash between the two writes is never mistaken for damage and one
//! page of damage is never mistaken for a crash.

use nandlab_core::media::{BlockId, Lpn, Oob, Ppn, GARBAGE_LPN, MAX_PLAUSIBLE_ERASE_COUNT};
use nandlab_core::Geometry;

pub(crate) const MAGIC: &[u8; 8] = b"NANDLAB\x01";
/// Format 3: each record's two copies in different areas (format 2 kept them side by side, so
/// one lost page took both), and the stop record.
pub(crate) const VERSION: u32 = 3;
/// Superblock area: copy A's page, then copy B's page.
pub(crate) const SUPERBLOCK_AREA_BYTES: u64 = 8192;
pub(crate) const SUPERBLOCK_COPY_AT: [u64; 2] = [0, 4096];
/// The stop record's two copies, one in each superblock page.
pub(crate) const STOP_RECORD_AT: [u64; 2] = [512, 4096 + 512];
/// Who has the image open (informational; page A).
pub(crate) const HOLDER_AT: u64 = 2048;
const SUPERBLOCK_BYTES: usize = 128;
pub(crate) const STOP_RECORD_BYTES: usize = 64;
/// One copy of a block header (each area holds one copy per block).
pub(crate) const HEADER_COPY_BYTES: u64 = 16;
/// One copy of an OOB record or an NVRAM cell header.
pub(crate) const COPY_BYTES: usize = 32;
pub(crate) const ALIGN: u64 = 4096;
/// LFSS checkpoint node magic.
pub(crate) const CHECKPOINT_MAGIC: u32 = 0xEECC_2299;
pub(crate) const CHECKPOINT_HEADER_BYTES: u64 = 4096;
pub(crate) const CHECKPOINT_BLOCK_BYTES: usize = 16;

const STATE_PROGRAMMED: u8 = 0x5A;
/// Programmed in metadata-only mode without its payload: reads return zeros.
const STATE_PROGRAMMED_NO_PAYLOAD: u8 = 0x5B;
const STATE_NVRAM_PAGE: u8 = 0x5C;
/// An NVRAM page whose content was lost (found damaged at a start-up): it reads as an error.
const STATE_NVRAM_LOST: u8 = 0x5D;
/// Block header flag: a page of the block was programmed since its last erase.
pub(crate) const BLOCK_WRITTEN: u32 = 1;
const STOP_MAGIC: u32 = 0x5354_4F50; // "POTS" little-endian: "STOP"
const STOP_OPEN: u32 = 1;
const STOP_CLEAN: u32 = 2;

fn le_u32(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])
}

fn le_u64(b: &[u8], i: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[i..i + 8]);
    u64::from_le_bytes(w)
}

/// Seals one 32-byte copy: CRC-32 of bytes 0..28 in bytes 28..32.
fn seal(copy: &mut [u8]) {
    let crc = crc32fast::hash(&copy[..COPY_BYTES - 4]);
    copy[COPY_BYTES - 4..COPY_BYTES].copy_from_slice(&crc.to_le_bytes());
}

fn copy_ok(copy: &[u8]) -> bool {
    crc32fast::hash(&copy[..COPY_BYTES - 4]) == le_u32(copy, COPY_BYTES - 4)
}

/// What one copy of a record holds.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Copy {
    /// All zero: never written, or zeroed by an erase.
    Erased,
    /// Seals and passes the record's own checks.
    Valid,
    /// Anything else: a torn write or damage.
    Garbage,
}

fn classify(c: &[u8], valid: &impl Fn(&[u8]) -> bool) -> Copy {
    if c.iter().all(|&x| x == 0) {
        Copy::Erased
    } else if valid(c) {
        Copy::Valid
    } else {
        Copy::Garbage
    }
}

/// Which copy of a record written once between erases (an OOB record) to believe.
enum Mirrored<'a> {
    Erased,
    /// Erased in one copy, garbage in the other: damage to an erased record (a program writes
    /// copy A first, so no crash leaves copy A erased and copy B written; and a program cut in
    /// copy A never wrote B and was never acknowledged).
    ErasedRepaired,
    /// The copy to use; `repaired` when the other one was not the same.
    Valid {
        copy: &'a [u8],
        repaired: bool,
    },
    /// Neither copy is readable, or both are readable and disagree.
    Damaged,
}

/// The rules for a record written once between erases: a readable copy wins (the other one is
/// damaged, or not yet written when a crash came between the two writes, or already zeroed when
/// a crash came inside an erase — which the block header then shows); two readable copies must
/// agree.
fn pick<'a>(a: &'a [u8], b: &'a [u8], valid: impl Fn(&[u8]) -> bool) -> Mirrored<'a> {
    match (classify(a, &valid), classify(b, &valid)) {
        (Copy::Valid, Copy::Valid) if a == b => Mirrored::Valid { copy: a, repaired: false },
        (Copy::Valid, Copy::Valid) => Mirrored::Damaged,
        (Copy::Valid, _) => Mirrored::Valid { copy: a, repaired: true },
        (_, Copy::Valid) => Mirrored::Valid { copy: b, repaired: true },
        (Copy::Erased, Copy::Erased) => Mirrored::Erased,
        (Copy::Erased, Copy::Garbage) | (Copy::Garbage, Copy::Erased) => Mirrored::ErasedRepaired,
        (Copy::Garbage, Copy::Garbage) => Mirrored::Damaged,
    }
}

// ---- layout -----------------------------------------------------------------------------------

/// Byte offsets of the image's areas. `[A, B]` pairs hold the two copies of each record.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Layout {
    pub(crate) page_size: u64,
    pub(crate) pages_per_block: u32,
    pub(crate) blocks: u32,
    pub(crate) headers: [u64; 2],
    pub(crate) oob: [u64; 2],
    pub(crate) data: u64,
    /// Two checkpoint slots ("super segments") after the data area.
    pub(crate) checkpoints: u64,
    pub(crate) checkpoint_slot: u64,
    /// NVRAM: two cells per RAM-region slot; their headers (areas A and B), then their pages.
    pub(crate) nvram_headers: [u64; 2],
    pub(crate) nvram_data: u64,
    pub(crate) nvram_pages: u32,
    pub(crate) total: u64,
}

/// Bytes of an area of `n` records of `bytes` each, padded to whole pages.
fn area(n: u64, bytes: u64) -> u64 {
    (n * bytes).next_multiple_of(ALIGN)
}

impl Layout {
    pub(crate) fn of(g: &Geometry, nvram_pages: u32) -> Self {
        let pages = g.physical_pages();
        let blocks = u64::from(g.blocks);
        let headers_a = SUPERBLOCK_AREA_BYTES;
        let headers_b = headers_a + area(blocks, HEADER_COPY_BYTES);
        let oob_a = headers_b + area(blocks, HEADER_COPY_BYTES);
        let oob_b = oob_a + area(pages, COPY_BYTES as u64);
        let data = oob_b + area(pages, COPY_BYTES as u64);
        let checkpoints = data + pages * g.page_size_bytes;
        let checkpoint_slot = (CHECKPOINT_HEADER_BYTES
            + blocks * (CHECKPOINT_BLOCK_BYTES as u64 + 4)
            + 4
            + g.logical_pages * 4)
            .next_multiple_of(ALIGN);
        let cells = 2 * u64::from(nvram_pages);
        let nvram_a = checkpoints + 2 * checkpoint_slot;
        let nvram_b = nvram_a + area(cells, COPY_BYTES as u64);
        let nvram_data = nvram_b + area(cells, COPY_BYTES as u64);
        let total = nvram_data + cells * g.page_size_bytes;
        Self {
            page_size: g.page_size_bytes,
            pages_per_block: g.pages_per_block,
            blocks: g.blocks,
            headers: [headers_a, headers_b],
            oob: [oob_a, oob_b],
            data,
            checkpoints,
            checkpoint_slot,
            nvram_headers: [nvram_a, nvram_b],
            nvram_data,
            nvram_pages,
            total,
        }
    }
    pub(crate) fn data_at(&self, ppn: Ppn) -> u64 {
        self.data + u64::from(ppn) * self.page_size
    }
    /// Copy `copy` (0 = A, 1 = B) of page `ppn`'s OOB record.
    pub(crate) fn oob_at(&self, copy: usize, ppn: Ppn) -> u64 {
        self.oob[copy] + u64::from(ppn) * COPY_BYTES as u64
    }
    pub(crate) fn header_at(&self, copy: usize, block: BlockId) -> u64 {
        self.headers[copy] + u64::from(block) * HEADER_COPY_BYTES
    }
    pub(crate) fn nvram_header_at(&self, copy: usize, slot: u32, cell: u8) -> u64 {
        self.nvram_headers[copy] + (2 * u64::from(slot) + u64::from(cell)) * COPY_BYTES as u64
    }
    pub(crate) fn nvram_data_at(&self, slot: u32, cell: u8) -> u64 {
        self.nvram_data + (2 * u64::from(slot) + u64::from(cell)) * self.page_size
    }

    /// Every area by name, as whole pages of the file (tools and the damage tests use it).
    pub(crate) fn areas(&self) -> Vec<(&'static str, std::ops::Range<u64>)> {
        let pages = u64::from(self.blocks) * u64::from(self.pages_per_block);
        let cells = 2 * u64::from(self.nvram_pages);
        let [ha, hb] = self.headers;
        let [oa, ob] = self.oob;
        let [na, nb] = self.nvram_headers;
        let slot = self.checkpoint_slot;
        vec![
            ("superblock A", 0..ALIGN),
            ("superblock B", ALIGN..2 * ALIGN),
            ("block headers A", ha..hb),
            ("block headers B", hb..oa),
            ("OOB records A", oa..ob),
            ("OOB records B", ob..self.data),
            ("page data", self.data..self.data + pages * self.page_size),
            ("checkpoint slot 0", self.checkpoints..self.checkpoints + slot),
            ("checkpoint slot 1", self.checkpoints + slot..self.checkpoints + 2 * slot),
            ("NVRAM cell headers A", na..na + area(cells, COPY_BYTES as u64)),
            ("NVRAM cell headers B", nb..nb + area(cells, COPY_BYTES as u64)),
            ("NVRAM pages", self.nvram_data..self.total),
        ]
    }
}

// ---- superblock -------------------------------------------------------------------------------

/// What an image is: its geometry and the layout-defining parts of the configuration it was
/// created with. Serving an image under another FTL kind or placement would misread it, so
/// these are compared at every start-up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImageInfo {
    pub page_size_bytes: u64,
    pub pages_per_block: u32,
    pub blocks: u32,
    pub logical_pages: u64,
    /// `ftl.kind` (at most 8 bytes).
    pub ftl_kind: String,
    /// `ftl.placement` (at most 16 bytes).
    pub placement: String,
    /// Flash regions (logs) of the page FTL's placement; 0 for the hybrid kinds.
    pub flash_regions: u32,
    /// RAM-region pages the NVRAM area holds (0: none).
    pub nvram_pages: u32,
    /// Planes the FTL's blocks are spread over (`engine::hardware`: gangs × chips per channel
    /// × dies per chip × planes per die), each with its own open blocks: the layout a restart
    /// rebuilds.
    pub planes: u32,
}

fn put_name(s: &mut Vec<u8>, name: &str, width: usize) {
    let b = name.as_bytes();
    assert!(b.len() <= width, "name {name:?} longer than {width} bytes");
    s.extend_from_slice(b);
    s.resize(s.len() + width - b.len(), 0);
}

fn get_name(s: &[u8]) -> Result<String, String> {
    let end = s.iter().position(|&c| c == 0).unwrap_or(s.len());
    std::str::from_utf8(&s[..end])
        .map(str::to_string)
        .map_err(|_| "a name field is not UTF-8".to_string())
}

/// One copy of the superblock: magic, version, geometry, identity, CRC-32 (`SUPERBLOCK_BYTES`).
pub(crate) fn encode_superblock(i: &ImageInfo) -> Vec<u8> {
    let mut s = Vec::with_capacity(SUPERBLOCK_BYTES);
    s.extend_from_slice(MAGIC);
    s.extend_from_slice(&VERSION.to_le_bytes());
    s.extend_from_slice(&i.page_size_bytes.to_le_bytes());
    s.extend_from_slice(&i.pages_per_block.to_le_bytes());
    s.extend_from_slice(&i.blocks.to_le_bytes());
    s.extend_from_slice(&i.logical_pages.to_le_bytes());
    s.extend_from_slice(&i.nvram_pages.to_le_bytes());
    s.extend_from_slice(&i.flash_regions.to_le_bytes());
    put_name(&mut s, &i.ftl_kind, 8);
    put_name(&mut s, &i.placement, 16);
    debug_assert_eq!(s.len(), 68);
    let crc = crc32fast::hash(&s);
    s.extend_from_slice(&crc.to_le_bytes());
    // The plane count, with a CRC of its own (zeros for one plane, as format 2 wrote it).
    if i.planes > 1 {
        s.extend_from_slice(&i.planes.to_le_bytes());
        s.extend_from_slice(&crc32fast::hash(&i.planes.to_le_bytes()).to_le_bytes());
    }
    s.resize(SUPERBLOCK_BYTES, 0);
    s
}

/// Decodes one superblock copy and checks that its geometry is one an image can have.
pub(crate) fn decode_superblock(s: &[u8]) -> Result<ImageInfo, String> {
    if &s[..8] != MAGIC {
        return Err("bad magic".into());
    }
    let version = le_u32(s, 8);
    if version == 2 {
        return Err(
            "image format 2, which kept both copies of each metadata record in the same page of \
             the file (one lost page could take both); this nandlab reads format 3: create a new \
             image, or copy the data off with the nandlab version that wrote this one"
                .into(),
        );
    }
    if version != VERSION {
        return Err(format!(
            "image format {version}; this nandlab reads format {VERSION}: create a new image"
        ));
    }
    if crc32fast::hash(&s[..68]) != le_u32(s, 68) || s[80..SUPERBLOCK_BYTES].iter().any(|&b| b != 0)
    {
        return Err("superblock CRC mismatch".into());
    }
    let planes = match le_u32(s, 72) {
        0 if le_u32(s, 76) == 0 => 1,
        n if n > 1 && crc32fast::hash(&s[72..76]) == le_u32(s, 76) => n,
        _ => return Err("superblock CRC mismatch (plane count)".into()),
    };
    let info = ImageInfo {
        page_size_bytes: le_u64(s, 12),
        pages_per_block: le_u32(s, 20),
        blocks: le_u32(s, 24),
        logical_pages: le_u64(s, 28),
        nvram_pages: le_u32(s, 36),
        flash_regions: le_u32(s, 40),
        ftl_kind: get_name(&s[44..52])?,
        placement: get_name(&s[52..68])?,
        planes,
    };
    let physical = u64::from(info.blocks) * u64::from(info.pages_per_block);
    let sane = info.page_size_bytes.is_power_of_two()
        && (512..=1 << 20).contains(&info.page_size_bytes)
        && (1..=1 << 16).contains(&info.pages_per_block)
        && info.blocks >= 1
        && physical < u64::from(u32::MAX - 1)
        && (1..=physical).contains(&info.logical_pages)
        && info.flash_regions <= 255
        && u64::from(info.nvram_pages) <= physical
        && (1..=info.blocks).contains(&info.planes)
        && info.blocks.is_multiple_of(info.planes);
    if !sane {
        return Err(format!("implausible geometry or identity {info:?}"));
    }
    Ok(info)
}

/// Picks the superblock from its two copies (pages A and B of the area): `(info, repaired)`.
/// The superblock is written once, when the image is created, so two readable copies agree.
pub(crate) fn decode_superblock_area(area: &[u8]) -> Result<(ImageInfo, bool), String> {
    let at = |i: usize| {
        let o = SUPERBLOCK_COPY_AT[i] as usize;
        decode_superblock(&area[o..o + SUPERBLOCK_BYTES])
    };
    match (at(0), at(1)) {
        (Ok(a), Ok(b)) if a == b => Ok((a, false)),
        (Ok(_), Ok(_)) => Err("the two superblock copies disagree".into()),
        (Ok(a), Err(_)) | (Err(_), Ok(a)) => Ok((a, true)),
        (Err(e), Err(_)) => Err(e),
    }
}

/// Who holds an image open (informational: the lock itself is the image file's `flock`).
pub(crate) fn encode_holder(pid: u32, since_unix_s: u64, host: &str) -> Vec<u8> {
    let mut h = Vec::with_capacity(96);
    h.extend_from_slice(&pid.to_le_bytes());
    h.extend_from_slice(&since_unix_s.to_le_bytes());
    let host = &host.as_bytes()[..host.len().min(64)];
    h.push(host.len() as u8);
    h.extend_from_slice(host);
    h.resize(92, 0);
    let crc = crc32fast::hash(&h);
    h.extend_from_slice(&crc.to_le_bytes());
    h
}

pub(crate) fn decode_holder(h: &[u8]) -> Option<(u32, u64, String)> {
    if h.len() < 96 || crc32fast::hash(&h[..92]) != le_u32(h, 92) {
        return None;
    }
    let n = usize::from(h[12]).min(64);
    Some((le_u32(h, 0), le_u64(h, 4), String::from_utf8_lossy(&h[13..13 + n]).into_owned()))
}

// ---- stop record ------------------------------------------------------------------------------

/// How the image was last left: open (a server had it, and may have been killed) or stopped
/// cleanly, with what the next mount must find. After a clean stop no write was interrupted, so
/// an unreadable record is damage, never a torn write, and a mount that does not find the
/// recorded newest page has lost it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Stop {
    /// Mounts so far; orders the writes of the record (open, then clean, at the same count).
    pub(crate) mounts: u64,
    pub(crate) clean: bool,
    /// Highest sequence number of a programmed page (clean stops only).
    pub(crate) max_seq: u64,
    /// Programmed pages on the flash (clean stops only).
    pub(crate) programmed_pages: u64,
}

pub(crate) fn encode_stop(s: &Stop) -> [u8; STOP_RECORD_BYTES] {
    let mut r = [0u8; STOP_RECORD_BYTES];
    r[..4].copy_from_slice(&STOP_MAGIC.to_le_bytes());
    let state = if s.clean { STOP_CLEAN } else { STOP_OPEN };
    r[4..8].copy_from_slice(&state.to_le_bytes());
    r[8..16].copy_from_slice(&s.mounts.to_le_bytes());
    r[16..24].copy_from_slice(&s.max_seq.to_le_bytes());
    r[24..32].copy_from_slice(&s.programmed_pages.to_le_bytes());
    let crc = crc32fast::hash(&r[..STOP_RECORD_BYTES - 4]);
    r[STOP_RECORD_BYTES - 4..].copy_from_slice(&crc.to_le_bytes());
    r
}

fn decode_stop_copy(r: &[u8]) -> Option<Stop> {
    let n = STOP_RECORD_BYTES;
    let state = le_u32(r, 4);
    let ok = le_u32(r, 0) == STOP_MAGIC
        && (state == STOP_OPEN || state == STOP_CLEAN)
        && r[32..n - 4].iter().all(|&b| b == 0)
        && crc32fast::hash(&r[..n - 4]) == le_u32(r, n - 4);
    ok.then(|| Stop {
        mounts: le_u64(r, 8),
        clean: state == STOP_CLEAN,
        max_seq: le_u64(r, 16),
        programmed_pages: le_u64(r, 24),
    })
}

/// The stop record from its two copies: the later write of the readable ones (writes go
/// open → clean at one mount count, then open at the next), `None` if neither is readable.
pub(crate) fn decode_stop(a: &[u8], b: &[u8]) -> Option<Stop> {
    [decode_stop_copy(a), decode_stop_copy(b)]
        .into_iter()
        .flatten()
        .max_by_key(|s| (s.mounts, s.clean))
}

// ---- block headers ----------------------------------------------------------------------------

/// One copy of a block header: erase count, flags, reserved, CRC-32 of bytes 0..12.
pub(crate) fn encode_header(erase_count: u32, flags: u32) -> [u8; HEADER_COPY_BYTES as usize] {
    let mut copy = [0u8; HEADER_COPY_BYTES as usize];
    copy[..4].copy_from_slice(&erase_count.to_le_bytes());
    copy[4..8].copy_from_slice(&flags.to_le_bytes());
    let crc = crc32fast::hash(&copy[..12]);
    copy[12..16].copy_from_slice(&crc.to_le_bytes());
    copy
}

/// What a block header says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Header {
    /// Erase count and flags; `repaired` when the copies were not the same.
    Valid { erase_count: u32, flags: u32, repaired: bool },
    /// Both copies unreadable: the count is unknown.
    Lost,
    /// A readable copy with an erase count no wear can reach (tampered).
    Implausible { erase_count: u32 },
}

/// A header's copies: an all-zero copy is a block never erased (count 0, no flags) and readable.
/// Both readable but different: the later write wins, and a block's header only ever moves
/// forward — (count, flags) goes (c, 0) → (c, written) → (c + 1, 0) — so the later write is the
/// larger pair. That one rule covers a crash between the two copies' writes and a zeroed copy
/// (which reads as (0, 0), the smallest pair).
pub(crate) fn decode_header(a: &[u8], b: &[u8]) -> Header {
    let copy_valid =
        |c: &[u8]| c.iter().all(|&b| b == 0) || crc32fast::hash(&c[..12]) == le_u32(c, 12);
    let read = |c: &[u8]| (le_u32(c, 0), le_u32(c, 4));
    let chosen = match (copy_valid(a), copy_valid(b)) {
        (true, true) if a == b => Some((read(a), false)),
        (true, true) => Some((read(a).max(read(b)), true)),
        (true, false) => Some((read(a), true)),
        (false, true) => Some((read(b), true)),
        (false, false) => None,
    };
    match chosen {
        None => Header::Lost,
        Some(((erase_count, _), _)) if erase_count > MAX_PLAUSIBLE_ERASE_COUNT => {
            Header::Implausible { erase_count }
        }
        Some(((erase_count, flags), repaired)) => Header::Valid { erase_count, flags, repaired },
    }
}

// ---- OOB records --------------------------------------------------------------------------------

/// One copy of a page's OOB record (written to areas A and B).
pub(crate) fn encode_oob(oob: &Oob, data_crc: u32, has_payload: bool) -> [u8; COPY_BYTES] {
    let mut c = [0u8; COPY_BYTES];
    c[0] = if has_payload { STATE_PROGRAMMED } else { STATE_PROGRAMMED_NO_PAYLOAD };
    c[1] = oob.region;
    c[4..8].copy_from_slice(&oob.lpn.get().to_le_bytes());
    c[8..16].copy_from_slice(&oob.seq.to_le_bytes());
    c[16..20].copy_from_slice(&data_crc.to_le_bytes());
    seal(&mut c);
    c
}

/// The OOB record copy a power cut in the middle of a page's program leaves (fault injection,
/// `Media::tear`), in both areas: neither copy seals (the cells of a page cut mid-program hold
/// neither the old nor the new bits), so the record decodes as `Damaged` — what a mount takes
/// as a torn page when it is the last programmed page of its block and the image was not
/// stopped cleanly.
pub(crate) fn encode_torn_oob(oob: &Oob) -> [u8; COPY_BYTES] {
    let mut r = encode_oob(oob, 0, true);
    // Flip one bit of the CRC: the copy fails its check and stays non-zero (never "erased").
    r[COPY_BYTES - 1] ^= 0x01;
    debug_assert_eq!(decode_oob(&r, &r, u64::MAX), Record::Damaged);
    r
}

/// A decoded OOB record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Record {
    Erased,
    /// Erased, with one damaged copy.
    ErasedRepaired,
    Programmed {
        oob: Oob,
        data_crc: u32,
        has_payload: bool,
        repaired: bool,
    },
    /// No readable copy (or two readable ones that disagree, or one naming an impossible page):
    /// its LPN is unknown.
    Damaged,
}

/// Decodes a page's OOB record from its copy in area A and its copy in area B.
pub(crate) fn decode_oob(a: &[u8], b: &[u8], logical_pages: u64) -> Record {
    let valid = |c: &[u8]| {
        (c[0] == STATE_PROGRAMMED || c[0] == STATE_PROGRAMMED_NO_PAYLOAD)
            && c[2..4] == [0, 0]
            && c[20..28].iter().all(|&b| b == 0)
            && copy_ok(c)
    };
    match pick(a, b, valid) {
        Mirrored::Erased => Record::Erased,
        Mirrored::ErasedRepaired => Record::ErasedRepaired,
        Mirrored::Damaged => Record::Damaged,
        Mirrored::Valid { copy, repaired } => {
            let oob = Oob { lpn: Lpn::new(le_u32(copy, 4)), seq: le_u64(copy, 8), region: copy[1] };
            let lpn_ok = u64::from(oob.lpn) < logical_pages || oob.lpn == GARBAGE_LPN;
            if !lpn_ok || oob.seq == 0 {
                return Record::Damaged;
            }
            Record::Programmed {
                oob,
                data_crc: le_u32(copy, 16),
                has_payload: copy[0] == STATE_PROGRAMMED,
                repaired,
            }
        }
    }
}

// ---- NVRAM cells ------------------------------------------------------------------------------

/// One copy of a cell header: state, LPN, sequence number, write order, data CRC.
pub(crate) fn encode_nvram(
    lpn: Lpn,
    seq: u64,
    order: u64,
    data_crc: u32,
    lost: bool,
) -> [u8; COPY_BYTES] {
    let mut c = [0u8; COPY_BYTES];
    c[0] = if lost { STATE_NVRAM_LOST } else { STATE_NVRAM_PAGE };
    c[4..8].copy_from_slice(&lpn.get().to_le_bytes());
    c[8..16].copy_from_slice(&seq.to_le_bytes());
    c[16..24].copy_from_slice(&order.to_le_bytes());
    c[24..28].copy_from_slice(&data_crc.to_le_bytes());
    seal(&mut c);
    c
}

/// A decoded NVRAM cell header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cell {
    Empty,
    /// Empty, with one damaged copy.
    EmptyRepaired,
    Page {
        lpn: Lpn,
        seq: u64,
        order: u64,
        data_crc: u32,
        lost: bool,
        repaired: bool,
    },
    Damaged,
}

/// Decodes a cell header from its two copies. A cell is rewritten in place (each write goes to
/// the slot's older cell), so two readable copies may differ: a crash came between the two
/// writes, and the copy with the higher write order is the newer (its page was written first).
pub(crate) fn decode_nvram(a: &[u8], b: &[u8]) -> Cell {
    let valid = |c: &[u8]| {
        (c[0] == STATE_NVRAM_PAGE || c[0] == STATE_NVRAM_LOST) && c[1..4] == [0, 0, 0] && copy_ok(c)
    };
    let (ca, cb) = (classify(a, &valid), classify(b, &valid));
    let chosen = match (ca, cb) {
        (Copy::Valid, Copy::Valid) if le_u64(a, 16) >= le_u64(b, 16) => a,
        (Copy::Valid, Copy::Valid) | (_, Copy::Valid) => b,
        (Copy::Valid, _) => a,
        (Copy::Erased, Copy::Erased) => return Cell::Empty,
        (Copy::Erased, Copy::Garbage) | (Copy::Garbage, Copy::Erased) => {
            return Cell::EmptyRepaired
        }
        (Copy::Garbage, Copy::Garbage) => return Cell::Damaged,
    };
    Cell::Page {
        lpn: Lpn::new(le_u32(chosen, 4)),
        seq: le_u64(chosen, 8),
        order: le_u64(chosen, 16),
        data_crc: le_u32(chosen, 24),
        lost: chosen[0] == STATE_NVRAM_LOST,
        repaired: a != b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const Z: [u8; COPY_BYTES] = [0u8; COPY_BYTES];

    #[test]
    fn a_torn_oob_record_is_damaged_never_erased_or_programmed() {
        for oob in [
            Oob { lpn: Lpn::new(0), seq: 1, region: 0 },
            Oob { lpn: Lpn::new(7), seq: 99, region: 2 },
            Oob { lpn: GARBAGE_LPN, seq: u64::MAX, region: 255 },
        ] {
            let t = encode_torn_oob(&oob);
            assert_eq!(decode_oob(&t, &t, 100), Record::Damaged, "{oob:?}");
        }
    }

    #[test]
    fn any_damage_to_one_copy_of_an_oob_record_is_repaired_from_the_other() {
        let oob = Oob { lpn: Lpn::new(7), seq: 99, region: 2 };
        let r = encode_oob(&oob, 0xDEAD_BEEF, true);
        let want = |repaired| Record::Programmed {
            oob,
            data_crc: 0xDEAD_BEEF,
            has_payload: true,
            repaired,
        };
        assert_eq!(decode_oob(&r, &r, 100), want(false));
        let mut damaged_copies = vec![Z, [0xFF; COPY_BYTES]];
        for i in 0..COPY_BYTES {
            for flip in [0x01u8, 0x80, 0xFF] {
                let mut d = r;
                d[i] ^= flip;
                damaged_copies.push(d);
            }
        }
        for d in damaged_copies {
            assert_eq!(decode_oob(&d, &r, 100), want(true), "copy A {d:?}");
            assert_eq!(decode_oob(&r, &d, 100), want(true), "copy B {d:?}");
        }
    }

    #[test]
    fn erased_and_damaged_records() {
        assert_eq!(decode_oob(&Z, &Z, 100), Record::Erased);
        // One erased copy and one garbage copy: damage to an erased record (a program writes
        // copy A first; one cut inside copy A was never acknowledged).
        let mut g = Z;
        g[17] = 0x40;
        assert_eq!(decode_oob(&Z, &g, 100), Record::ErasedRepaired);
        assert_eq!(decode_oob(&g, &Z, 100), Record::ErasedRepaired);
        assert_eq!(decode_oob(&g, &g, 100), Record::Damaged);
        // A readable record naming a page past the device is tampering, not data.
        let big = encode_oob(&Oob { lpn: Lpn::new(500), seq: 1, region: 0 }, 1, true);
        assert_eq!(decode_oob(&big, &big, 100), Record::Damaged);
        // Two readable copies that disagree: which is right cannot be known.
        let x = encode_oob(&Oob { lpn: Lpn::new(7), seq: 5, region: 0 }, 1, true);
        let y = encode_oob(&Oob { lpn: Lpn::new(8), seq: 5, region: 0 }, 1, true);
        assert_eq!(decode_oob(&x, &y, 100), Record::Damaged);
    }

    #[test]
    fn headers_take_the_later_write_and_survive_one_lost_copy() {
        let h = encode_header(41, BLOCK_WRITTEN);
        let valid = |repaired| Header::Valid { erase_count: 41, flags: BLOCK_WRITTEN, repaired };
        assert_eq!(decode_header(&h, &h), valid(false));
        for i in 0..16 {
            let mut d = h;
            d[i] ^= 0x10;
            assert_eq!(decode_header(&d, &h), valid(true), "byte {i} of A");
            assert_eq!(decode_header(&h, &d), valid(true), "byte {i} of B");
        }
        // A zeroed copy reads as a never-erased block, the smallest header: the other wins.
        assert_eq!(decode_header(&[0; 16], &h), valid(true));
        assert_eq!(decode_header(&h, &[0; 16]), valid(true));
        assert_eq!(
            decode_header(&[0; 16], &[0; 16]),
            Header::Valid { erase_count: 0, flags: 0, repaired: false }
        );
        // A crash between the copies: A has the erase's header, B the one before.
        let erased = encode_header(42, 0);
        assert_eq!(
            decode_header(&erased, &h),
            Header::Valid { erase_count: 42, flags: 0, repaired: true }
        );
        assert_eq!(decode_header(&[0xFF; 16], &[0xEE; 16]), Header::Lost);
        let huge = encode_header(u32::MAX, 0);
        assert_eq!(decode_header(&huge, &huge), Header::Implausible { erase_count: u32::MAX });
    }

    fn info(planes: u32) -> ImageInfo {
        ImageInfo {
            page_size_bytes: 4096,
            pages_per_block: 64,
            blocks: 100,
            logical_pages: 5000,
            ftl_kind: "page".into(),
            placement: "dac".into(),
            flash_regions: 4,
            nvram_pages: 16,
            planes,
        }
    }

    #[test]
    fn the_superblock_survives_the_loss_of_either_page() {
        let one = info(1);
        assert!(encode_superblock(&one)[72..].iter().all(|&b| b == 0));
        let four = info(4);
        assert_eq!(decode_superblock(&encode_superblock(&four)), Ok(four.clone()));
        let mut bad = encode_superblock(&four);
        bad[72] = 2;
        assert!(decode_superblock(&bad).is_err(), "a damaged plane count is refused");
        let mut area = vec![0u8; SUPERBLOCK_AREA_BYTES as usize];
        for at in SUPERBLOCK_COPY_AT {
            area[at as usize..at as usize + SUPERBLOCK_BYTES]
                .copy_from_slice(&encode_superblock(&one));
        }
        assert_eq!(decode_superblock_area(&area), Ok((one.clone(), false)));
        for i in 0..SUPERBLOCK_BYTES {
            let mut d = area.clone();
            d[i] ^= 0x04;
            assert_eq!(decode_superblock_area(&d), Ok((one.clone(), true)), "byte {i}");
        }
        for page in 0..2 {
            let mut d = area.clone();
            d[page * 4096..(page + 1) * 4096].fill(0);
            assert_eq!(decode_superblock_area(&d), Ok((one.clone(), true)), "page {page}");
        }
        let mut v2 = encode_superblock(&one);
        v2[8] = 2;
        assert!(decode_superblock(&v2).unwrap_err().contains("format 2"));
    }

    #[test]
    fn the_stop_record_is_the_later_readable_write() {
        let open = Stop { mounts: 3, clean: false, max_seq: 0, programmed_pages: 0 };
        let clean = Stop { mounts: 3, clean: true, max_seq: 77, programmed_pages: 12 };
        let (o, c) = (encode_stop(&open), encode_stop(&clean));
        assert_eq!(decode_stop(&o, &o), Some(open));
        // A crash between the clean stop's two writes: the data was synced before either.
        assert_eq!(decode_stop(&c, &o), Some(clean));
        assert_eq!(decode_stop(&o, &c), Some(clean));
        let next = encode_stop(&Stop { mounts: 4, ..open });
        assert_eq!(decode_stop(&next, &c).map(|s| s.clean), Some(false));
        assert_eq!(decode_stop(&[0; 64], &c), Some(clean));
        let mut g = c;
        g[20] ^= 1;
        assert_eq!(decode_stop(&g, &c), Some(clean));
        assert_eq!(decode_stop(&g, &[0; 64]), None);
    }

    #[test]
    fn nvram_cells_round_trip_and_prefer_the_newer_copy() {
        let c = encode_nvram(Lpn::new(3), 10, 77, 0xAB, false);
        let want = Cell::Page {
            lpn: Lpn::new(3),
            seq: 10,
            order: 77,
            data_crc: 0xAB,
            lost: false,
            repaired: false,
        };
        assert_eq!(decode_nvram(&c, &c), want);
        let mut d = c;
        d[8] ^= 1;
        assert!(matches!(decode_nvram(&c, &d), Cell::Page { order: 77, repaired: true, .. }));
        assert!(matches!(decode_nvram(&Z, &c), Cell::Page { order: 77, repaired: true, .. }));
        assert_eq!(decode_nvram(&Z, &Z), Cell::Empty);
        assert_eq!(decode_nvram(&d, &Z), Cell::EmptyRepaired);
        assert_eq!(decode_nvram(&d, &d), Cell::Damaged);
        // A crash between the copies of a rewrite: copy A is the newer write.
        let newer = encode_nvram(Lpn::new(5), 12, 90, 0xCD, false);
        let five = Lpn::new(5);
        assert!(
            matches!(decode_nvram(&newer, &c), Cell::Page { order: 90, lpn, .. } if lpn == five)
        );
        assert!(
            matches!(decode_nvram(&c, &newer), Cell::Page { order: 90, lpn, .. } if lpn == five)
        );
    }

    #[test]
    fn no_two_copies_share_a_page() {
        let overrides = ["device.blocks=24", "device.pages_per_block=16"];
        let g =
            nandlab_core::Config::from_overrides(&overrides).unwrap().resolve().unwrap().geometry;
        let l = Layout::of(&g, 5);
        let areas = l.areas();
        for w in areas.windows(2) {
            assert_eq!(w[0].1.end, w[1].1.start, "{} and {} are adjacent", w[0].0, w[1].0);
            assert_eq!(w[0].1.start % ALIGN, 0, "{} starts on a page", w[0].0);
        }
        assert_eq!(areas.last().unwrap().1.end, l.total);
        let page = |x: u64| x / ALIGN;
        for ppn in g.ppns() {
            assert_ne!(page(l.oob_at(0, ppn)), page(l.oob_at(1, ppn)));
        }
        for b in g.block_ids() {
            assert_ne!(page(l.header_at(0, b)), page(l.header_at(1, b)));
        }
        for s in 0..5 {
            for c in 0..2 {
                assert_ne!(page(l.nvram_header_at(0, s, c)), page(l.nvram_header_at(1, s, c)));
            }
        }
        assert_ne!(page(STOP_RECORD_AT[0]), page(STOP_RECORD_AT[1]));
    }
}
