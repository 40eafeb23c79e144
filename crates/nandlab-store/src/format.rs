//! The on-disk format of a NAND image, byte by byte (`docs/IMAGE_FORMAT.md` draws it): the
//! layout of the areas, and the encoding and decoding of every record. No I/O here.
//!
//! Every metadata record is stored twice, each copy with its own CRC-32 — the redundancy
//! real flash gives its spare area with ECC: damage confined to one copy (a flipped byte, a
//! zeroed word) is repaired from the other, and a record whose copies are both unreadable is
//! *detected*, never silently taken for an erased or older one. Records are aligned so that no
//! record straddles a 4 KiB page of the file: a `pwrite` of one record is all-or-nothing under
//! `kill -9` (the kernel may stop a larger write between pages, never inside one).

use nandlab_core::config::Geometry;
use nandlab_core::flash::{BlockId, Lpn, Oob, Ppn, GARBAGE_LPN, MAX_PLAUSIBLE_ERASE_COUNT};

pub(crate) const MAGIC: &[u8; 8] = b"NANDLAB\x01";
/// Format 2: mirrored records, image identity, block "written since erase" flags, NVRAM.
pub(crate) const VERSION: u32 = 2;
pub(crate) const SUPERBLOCK_AREA_BYTES: u64 = 4096;
/// Copies of the superblock inside its area, and the holder record (who has the image open).
pub(crate) const SUPERBLOCK_COPY_AT: [u64; 2] = [0, 1024];
pub(crate) const HOLDER_AT: u64 = 2048;
const SUPERBLOCK_BYTES: usize = 128;
pub(crate) const BLOCK_HEADER_BYTES: u64 = 32;
pub(crate) const OOB_BYTES: usize = 64;
const COPY_BYTES: usize = 32;
pub(crate) const NVRAM_HEADER_BYTES: u64 = 64;
pub(crate) const ALIGN: u64 = 4096;
/// LFSS checkpoint node magic (SPEC §3).
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

/// A record stored as two sealed copies (`OOB_BYTES` / `NVRAM_HEADER_BYTES`).
fn mirror(copy: &[u8; COPY_BYTES]) -> [u8; 2 * COPY_BYTES] {
    let mut r = [0u8; 2 * COPY_BYTES];
    r[..COPY_BYTES].copy_from_slice(copy);
    r[COPY_BYTES..].copy_from_slice(copy);
    r
}

/// Which copy of a mirrored record to believe.
enum Mirrored<'a> {
    Erased,
    /// Erased, but one byte is not zero: damage to an erased record (a programmed record has
    /// two full copies, so no single byte of damage can leave one byte of it).
    ErasedRepaired,
    /// The copy to use; `repaired` when the other one was unreadable.
    Valid {
        copy: &'a [u8],
        repaired: bool,
    },
    /// Neither copy is readable, or both are readable and disagree.
    Damaged,
}

fn pick(r: &[u8], valid: impl Fn(&[u8]) -> bool) -> Mirrored<'_> {
    let (a, b) = r.split_at(COPY_BYTES);
    let (a_ok, b_ok) = (valid(a), valid(b));
    match (a_ok, b_ok) {
        (true, true) if a == b => Mirrored::Valid { copy: a, repaired: false },
        (true, true) => Mirrored::Damaged,
        (true, false) => Mirrored::Valid { copy: a, repaired: true },
        (false, true) => Mirrored::Valid { copy: b, repaired: true },
        (false, false) if r.iter().all(|&x| x == 0) => Mirrored::Erased,
        (false, false) if r.iter().filter(|&&x| x != 0).count() == 1 => Mirrored::ErasedRepaired,
        (false, false) => Mirrored::Damaged,
    }
}

// ---- layout -----------------------------------------------------------------------------------

/// Byte offsets of the image's areas.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Layout {
    pub(crate) page_size: u64,
    pub(crate) pages_per_block: u32,
    pub(crate) headers: u64,
    pub(crate) oob: u64,
    pub(crate) data: u64,
    /// Two checkpoint slots ("super segments") after the data area.
    pub(crate) checkpoints: u64,
    pub(crate) checkpoint_slot: u64,
    /// NVRAM: two cells per RAM-region slot, headers then pages.
    pub(crate) nvram_headers: u64,
    pub(crate) nvram_data: u64,
    pub(crate) nvram_pages: u32,
    pub(crate) total: u64,
}

impl Layout {
    pub(crate) fn of(g: &Geometry, nvram_pages: u32) -> Self {
        let headers = SUPERBLOCK_AREA_BYTES;
        let oob = (headers + u64::from(g.blocks) * BLOCK_HEADER_BYTES).next_multiple_of(ALIGN);
        let data = (oob + g.physical_pages() * OOB_BYTES as u64).next_multiple_of(ALIGN);
        let checkpoints = data + g.physical_pages() * g.page_size_bytes;
        let checkpoint_slot = (CHECKPOINT_HEADER_BYTES
            + u64::from(g.blocks) * (CHECKPOINT_BLOCK_BYTES as u64 + 4)
            + 4
            + g.logical_pages * 4)
            .next_multiple_of(ALIGN);
        let nvram_headers = checkpoints + 2 * checkpoint_slot;
        let cells = 2 * u64::from(nvram_pages);
        let nvram_data = (nvram_headers + cells * NVRAM_HEADER_BYTES).next_multiple_of(ALIGN);
        let total = nvram_data + cells * g.page_size_bytes;
        Self {
            page_size: g.page_size_bytes,
            pages_per_block: g.pages_per_block,
            headers,
            oob,
            data,
            checkpoints,
            checkpoint_slot,
            nvram_headers,
            nvram_data,
            nvram_pages,
            total,
        }
    }
    pub(crate) fn data_at(&self, ppn: Ppn) -> u64 {
        self.data + u64::from(ppn) * self.page_size
    }
    pub(crate) fn oob_at(&self, ppn: Ppn) -> u64 {
        self.oob + u64::from(ppn) * OOB_BYTES as u64
    }
    pub(crate) fn header_at(&self, block: BlockId) -> u64 {
        self.headers + u64::from(block) * BLOCK_HEADER_BYTES
    }
    pub(crate) fn nvram_header_at(&self, slot: u32, cell: u8) -> u64 {
        self.nvram_headers + (2 * u64::from(slot) + u64::from(cell)) * NVRAM_HEADER_BYTES
    }
    pub(crate) fn nvram_data_at(&self, slot: u32, cell: u8) -> u64 {
        self.nvram_data + (2 * u64::from(slot) + u64::from(cell)) * self.page_size
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
    /// rebuilds. Images from before it was recorded hold 1.
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
    // The plane count came later, in what earlier versions required to be zero: a one-plane
    // image is byte for byte what they wrote; more planes are recorded with a CRC of their own
    // (an earlier version refuses such an image: its padding is not zero).
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
    if version != VERSION {
        return Err(format!(
            "image format {version}; this nandlab reads format {VERSION} (images from before \
             format 2 lack mirrored metadata: create a new image)"
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

/// Picks the superblock from its two copies: `(info, repaired)`.
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

// ---- block headers ----------------------------------------------------------------------------

/// A block header: erase count and flags, twice (`BLOCK_HEADER_BYTES`).
pub(crate) fn encode_header(erase_count: u32, flags: u32) -> [u8; BLOCK_HEADER_BYTES as usize] {
    let mut copy = [0u8; 16];
    copy[..4].copy_from_slice(&erase_count.to_le_bytes());
    copy[4..8].copy_from_slice(&flags.to_le_bytes());
    let crc = crc32fast::hash(&copy[..12]);
    copy[12..16].copy_from_slice(&crc.to_le_bytes());
    let mut h = [0u8; 32];
    h[..16].copy_from_slice(&copy);
    h[16..].copy_from_slice(&copy);
    h
}

/// What a block header says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Header {
    /// Erase count and flags; `repaired` when one copy was unreadable.
    Valid { erase_count: u32, flags: u32, repaired: bool },
    /// Both copies unreadable: the count is unknown.
    Lost,
    /// A readable copy with an erase count no wear can reach (tampered).
    Implausible { erase_count: u32 },
}

pub(crate) fn decode_header(h: &[u8]) -> Header {
    let copy_valid =
        |c: &[u8]| c.iter().all(|&b| b == 0) || crc32fast::hash(&c[..12]) == le_u32(c, 12);
    let (a, b) = h.split_at(16);
    let read = |c: &[u8]| (le_u32(c, 0), le_u32(c, 4));
    let chosen = match (copy_valid(a), copy_valid(b)) {
        (true, true) if a == b => Some((read(a), false)),
        // Both readable but different: the larger count is the later write (a header is
        // rewritten only by erases, which count up); flags of that write.
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

pub(crate) fn encode_oob(oob: &Oob, data_crc: u32, has_payload: bool) -> [u8; OOB_BYTES] {
    let mut c = [0u8; COPY_BYTES];
    c[0] = if has_payload { STATE_PROGRAMMED } else { STATE_PROGRAMMED_NO_PAYLOAD };
    c[1] = oob.region;
    c[4..8].copy_from_slice(&oob.lpn.to_le_bytes());
    c[8..16].copy_from_slice(&oob.seq.to_le_bytes());
    c[16..20].copy_from_slice(&data_crc.to_le_bytes());
    seal(&mut c);
    mirror(&c)
}

/// The OOB record a power cut in the middle of a page's program leaves (fault injection,
/// `Media::tear`): both copies are written but neither seals (the cells of a page cut mid-program
/// hold neither the old nor the new bits), so the record decodes as `Damaged` — what a mount
/// takes as a torn page when it is the last programmed page of its block.
pub(crate) fn encode_torn_oob(oob: &Oob) -> [u8; OOB_BYTES] {
    let mut r = encode_oob(oob, 0, true);
    // Flip one bit of each copy's CRC: each copy fails its check, and no flip can make a
    // record look erased (the copies stay non-zero).
    r[COPY_BYTES - 1] ^= 0x01;
    r[2 * COPY_BYTES - 1] ^= 0x01;
    debug_assert_eq!(decode_oob(&r, u64::MAX), Record::Damaged);
    r
}

/// A decoded OOB record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Record {
    Erased,
    /// Erased, with one damaged byte repaired.
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

pub(crate) fn decode_oob(r: &[u8], logical_pages: u64) -> Record {
    let valid = |c: &[u8]| {
        (c[0] == STATE_PROGRAMMED || c[0] == STATE_PROGRAMMED_NO_PAYLOAD)
            && c[2..4] == [0, 0]
            && c[20..28].iter().all(|&b| b == 0)
            && copy_ok(c)
    };
    match pick(r, valid) {
        Mirrored::Erased => Record::Erased,
        Mirrored::ErasedRepaired => Record::ErasedRepaired,
        Mirrored::Damaged => Record::Damaged,
        Mirrored::Valid { copy, repaired } => {
            let oob = Oob { lpn: le_u32(copy, 4), seq: le_u64(copy, 8), region: copy[1] };
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

/// A cell header: state, LPN, sequence number, write order, data CRC (two copies).
pub(crate) fn encode_nvram(
    lpn: Lpn,
    seq: u64,
    order: u64,
    data_crc: u32,
    lost: bool,
) -> [u8; NVRAM_HEADER_BYTES as usize] {
    let mut c = [0u8; COPY_BYTES];
    c[0] = if lost { STATE_NVRAM_LOST } else { STATE_NVRAM_PAGE };
    c[4..8].copy_from_slice(&lpn.to_le_bytes());
    c[8..16].copy_from_slice(&seq.to_le_bytes());
    c[16..24].copy_from_slice(&order.to_le_bytes());
    c[24..28].copy_from_slice(&data_crc.to_le_bytes());
    seal(&mut c);
    mirror(&c)
}

/// A decoded NVRAM cell header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cell {
    Empty,
    /// Empty, with one damaged byte repaired.
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

pub(crate) fn decode_nvram(r: &[u8]) -> Cell {
    let valid = |c: &[u8]| {
        (c[0] == STATE_NVRAM_PAGE || c[0] == STATE_NVRAM_LOST) && c[1..4] == [0, 0, 0] && copy_ok(c)
    };
    match pick(r, valid) {
        Mirrored::Erased => Cell::Empty,
        Mirrored::ErasedRepaired => Cell::EmptyRepaired,
        Mirrored::Damaged => Cell::Damaged,
        Mirrored::Valid { copy, repaired } => Cell::Page {
            lpn: le_u32(copy, 4),
            seq: le_u64(copy, 8),
            order: le_u64(copy, 16),
            data_crc: le_u32(copy, 24),
            lost: copy[0] == STATE_NVRAM_LOST,
            repaired,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_torn_oob_record_is_damaged_never_erased_or_programmed() {
        for oob in [
            Oob { lpn: 0, seq: 1, region: 0 },
            Oob { lpn: 7, seq: 99, region: 2 },
            Oob { lpn: GARBAGE_LPN, seq: u64::MAX, region: 255 },
        ] {
            assert_eq!(decode_oob(&encode_torn_oob(&oob), 100), Record::Damaged, "{oob:?}");
        }
    }

    #[test]
    fn every_single_byte_flip_of_an_oob_record_is_repaired() {
        let oob = Oob { lpn: 7, seq: 99, region: 2 };
        let r = encode_oob(&oob, 0xDEAD_BEEF, true);
        assert_eq!(
            decode_oob(&r, 100),
            Record::Programmed { oob, data_crc: 0xDEAD_BEEF, has_payload: true, repaired: false }
        );
        for i in 0..OOB_BYTES {
            for flip in [0x01u8, 0x80, 0xFF] {
                let mut d = r;
                d[i] ^= flip;
                match decode_oob(&d, 100) {
                    Record::Programmed { oob: o, data_crc, repaired, .. } => {
                        assert_eq!((o, data_crc, repaired), (oob, 0xDEAD_BEEF, true), "byte {i}");
                    }
                    other => panic!("byte {i} flip {flip:#x}: {other:?}"),
                }
            }
        }
    }

    #[test]
    fn both_copies_damaged_is_detected_not_erased() {
        let r = encode_oob(&Oob { lpn: 7, seq: 99, region: 0 }, 1, true);
        let mut d = r;
        d[0] = 0;
        d[32] = 0;
        assert_eq!(decode_oob(&d, 100), Record::Damaged);
        assert_eq!(decode_oob(&[0u8; 64], 100), Record::Erased);
        let mut one = [0u8; 64];
        one[17] = 0x40;
        assert_eq!(decode_oob(&one, 100), Record::ErasedRepaired);
        // A readable copy naming a page past the device is tampering, not data.
        let big = encode_oob(&Oob { lpn: 500, seq: 1, region: 0 }, 1, true);
        assert_eq!(decode_oob(&big, 100), Record::Damaged);
        // Two readable copies that disagree: which is right cannot be known.
        let mut two = encode_oob(&Oob { lpn: 7, seq: 5, region: 0 }, 1, true);
        two[32..].copy_from_slice(&encode_oob(&Oob { lpn: 8, seq: 5, region: 0 }, 1, true)[32..]);
        assert_eq!(decode_oob(&two, 100), Record::Damaged);
    }

    #[test]
    fn headers_and_superblock_repair_one_copy() {
        let h = encode_header(41, BLOCK_WRITTEN);
        for i in 0..32 {
            let mut d = h;
            d[i] ^= 0x10;
            assert_eq!(
                decode_header(&d),
                Header::Valid { erase_count: 41, flags: BLOCK_WRITTEN, repaired: true }
            );
        }
        assert_eq!(
            decode_header(&[0u8; 32]),
            Header::Valid { erase_count: 0, flags: 0, repaired: false }
        );
        let huge = encode_header(u32::MAX, 0);
        assert_eq!(decode_header(&huge), Header::Implausible { erase_count: u32::MAX });
        let info = ImageInfo {
            page_size_bytes: 4096,
            pages_per_block: 64,
            blocks: 100,
            logical_pages: 5000,
            ftl_kind: "page".into(),
            placement: "dac".into(),
            flash_regions: 4,
            nvram_pages: 16,
            planes: 1,
        };
        // One plane is encoded as earlier versions did: zeros after the CRC.
        assert!(encode_superblock(&info)[72..].iter().all(|&b| b == 0));
        let four = ImageInfo { planes: 4, ..info.clone() };
        assert_eq!(decode_superblock(&encode_superblock(&four)), Ok(four.clone()));
        let mut bad = encode_superblock(&four);
        bad[72] = 2;
        assert!(decode_superblock(&bad).is_err(), "a damaged plane count is refused");
        let mut area = vec![0u8; SUPERBLOCK_AREA_BYTES as usize];
        for at in SUPERBLOCK_COPY_AT {
            area[at as usize..at as usize + SUPERBLOCK_BYTES]
                .copy_from_slice(&encode_superblock(&info));
        }
        assert_eq!(decode_superblock_area(&area), Ok((info.clone(), false)));
        for i in 0..SUPERBLOCK_BYTES {
            let mut d = area.clone();
            d[i] ^= 0x04;
            assert_eq!(decode_superblock_area(&d), Ok((info.clone(), true)), "byte {i}");
        }
    }

    #[test]
    fn nvram_cells_round_trip() {
        let c = encode_nvram(3, 10, 77, 0xAB, false);
        let want =
            Cell::Page { lpn: 3, seq: 10, order: 77, data_crc: 0xAB, lost: false, repaired: false };
        assert_eq!(decode_nvram(&c), want);
        let mut d = c;
        d[40] ^= 1;
        assert!(matches!(decode_nvram(&d), Cell::Page { order: 77, repaired: true, .. }));
        assert_eq!(decode_nvram(&[0u8; 64]), Cell::Empty);
    }
}
