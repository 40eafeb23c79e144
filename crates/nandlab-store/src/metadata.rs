//! The metadata-only store's rule set (`serve.store = "metadata-only"`, docs/ALGORITHMS.md §7):
//! which written pages keep their payload. Everything else is simulated (the FTL, timing and wear
//! see every write) but reads back as zeros, so a 1 TiB drive needs storage only for its
//! file-system metadata. Benchmarks that do not verify data run unchanged; `e2fsck` still passes.
//!
//! Rules, in order, for each written page:
//! 1. An all-zero page is dropped: zeros are what a dropped page reads back anyway.
//! 2. Until a file system is recognized, every non-zero page is kept: before its superblock is
//!    written, a fresh disk receives almost nothing but mkfs output.
//! 3. Pages in a known metadata range are kept. ext2/3/4 (superblock magic 0xEF53 at byte 1080):
//!    the superblock, group descriptor table and reserved GDT blocks, and — from the group
//!    descriptors, parsed whenever they are written — every group's block bitmap, inode bitmap
//!    and inode table. FAT (boot sector with 0x55AA and "FAT"): reserved sectors and the FATs.
//! 4. Pages whose content is recognized are kept: an ext directory block (a `rec_len` chain
//!    covering the block exactly, valid inode numbers), an extent-tree block (magic 0xF30A), a
//!    JBD2 journal block (0xC03B3998), an xattr block (0xEA020000), an NTFS boot sector, `FILE`
//!    (MFT) or `INDX` record, a FAT directory cluster (32-byte entries that all look valid).
//! 5. Anything else (file data) is dropped.
//!
//! Limits: ext4 `meta_bg` layouts and backup superblocks/GDTs are not tracked (e2fsck reads the
//! primary ones); NTFS metadata is recognized only by content (`$Bitmap` and `$LogFile` data are
//! dropped, so `chkdsk`-style checks of them would fail); a data page that happens to look like
//! metadata is kept (harmless). A cleaner copy keeps whatever its source kept.

use std::collections::HashMap;

/// Pages of the disk's start whose payloads are remembered until a file system is recognized,
/// so its group descriptors can be parsed even if they were written before its superblock.
pub const STASH_PAGES: u64 = 4096;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Ext {
    block_bytes: u64,
    /// Blocks in the file system.
    blocks: u64,
    inodes_count: u32,
    inodes_per_group: u32,
    inode_bytes: u64,
    desc_bytes: u64,
    desc_64bit: bool,
    groups: u64,
    /// First and one-past-last block of the primary GDT (reserved GDT blocks included).
    gdt_blocks: (u64, u64),
}

/// Decides which pages keep their payload. See the module doc for the rules.
pub struct Classifier {
    page_bytes: u64,
    ext: Option<Ext>,
    recognized: bool,
    /// One bit per logical page: inside a known metadata range.
    ranges: Vec<u64>,
    /// One bit per logical page: part of an inode table (its inodes are parsed when written).
    itable: Vec<u64>,
    stash: HashMap<u64, Vec<u8>>,
    pub kept_pages: u64,
    pub dropped_pages: u64,
}

fn le16(b: &[u8], i: usize) -> u64 {
    u64::from(u16::from_le_bytes([b[i], b[i + 1]]))
}
fn le32(b: &[u8], i: usize) -> u64 {
    u64::from(u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]))
}

impl Classifier {
    #[must_use]
    pub fn new(page_bytes: u64, logical_pages: u64) -> Self {
        Self {
            page_bytes,
            ext: None,
            recognized: false,
            ranges: vec![0; logical_pages.div_ceil(64) as usize],
            itable: vec![0; logical_pages.div_ceil(64) as usize],
            stash: HashMap::new(),
            kept_pages: 0,
            dropped_pages: 0,
        }
    }

    /// Whether a file system has been recognized.
    #[must_use]
    pub fn recognized(&self) -> bool {
        self.recognized
    }

    fn mark_bytes(&mut self, start: u64, len: u64) {
        if len == 0 {
            return;
        }
        let first = start / self.page_bytes;
        let last = (start + len - 1) / self.page_bytes;
        for lpn in first..=last {
            if let Some(w) = self.ranges.get_mut((lpn / 64) as usize) {
                *w |= 1 << (lpn % 64);
            }
        }
    }

    fn mark_itable(&mut self, start: u64, len: u64) {
        let first = start / self.page_bytes;
        let last = (start + len.max(1) - 1) / self.page_bytes;
        for lpn in first..=last {
            if let Some(w) = self.itable.get_mut((lpn / 64) as usize) {
                *w |= 1 << (lpn % 64);
            }
        }
    }

    fn in_itable(&self, lpn: u64) -> bool {
        self.itable.get((lpn / 64) as usize).is_some_and(|w| w & (1 << (lpn % 64)) != 0)
    }

    /// Inodes mapped by block pointers (ext2/3 files, ext4's resize inode) keep their indirect
    /// blocks in `i_block[12..15]`: those are metadata too. Extent-mapped inodes need nothing
    /// here (their tree blocks carry the extent magic).
    fn parse_inodes(&mut self, data: &[u8]) {
        let Some(ext) = self.ext else { return };
        for inode in data.chunks(ext.inode_bytes as usize) {
            if inode.len() < 100 || le16(inode, 0) == 0 || le32(inode, 28) == 0 {
                continue; // Free, or owns no blocks.
            }
            let flags = le32(inode, 32);
            if flags & 0x0008_0000 != 0 || flags & 0x1000_0000 != 0 {
                continue; // Extents or inline data.
            }
            for i in 12..15 {
                let b = le32(inode, 40 + 4 * i);
                if b != 0 && b < ext.blocks {
                    self.mark_bytes(b * ext.block_bytes, ext.block_bytes);
                }
            }
        }
    }

    fn in_range(&self, lpn: u64) -> bool {
        self.ranges.get((lpn / 64) as usize).is_some_and(|w| w & (1 << (lpn % 64)) != 0)
    }

    /// Learns from a page that already holds data (after a restart) without counting it.
    pub fn learn(&mut self, lpn: u64, data: &[u8]) {
        self.observe(lpn, data);
    }

    /// Decides whether a written page keeps its payload.
    pub fn keep(&mut self, lpn: u64, data: &[u8]) -> bool {
        let keep = if data.iter().all(|&b| b == 0) {
            false
        } else {
            self.observe(lpn, data);
            !self.recognized || self.in_range(lpn) || self.sniff(data)
        };
        if keep {
            self.kept_pages += 1;
        } else {
            self.dropped_pages += 1;
        }
        keep
    }

    /// Updates what is known about the file system from a written page.
    fn observe(&mut self, lpn: u64, data: &[u8]) {
        if lpn < STASH_PAGES && !self.recognized {
            self.stash.insert(lpn, data.to_vec());
        }
        let page_start = lpn * self.page_bytes;
        // ext superblock: bytes 1024..2048 of the disk.
        if page_start <= 1024 && page_start + self.page_bytes >= 2048 {
            let sb = &data[(1024 - page_start) as usize..(2048 - page_start) as usize];
            if le16(sb, 56) == 0xEF53 {
                self.recognize_ext(sb);
            }
        }
        if lpn == 0 && data.len() >= 512 && data[510] == 0x55 && data[511] == 0xAA {
            self.recognize_fat(data);
            if &data[3..11] == b"NTFS    " {
                self.recognized = true;
            }
        }
        if self.in_itable(lpn) {
            self.parse_inodes(data);
        }
        if let Some(ext) = self.ext {
            let (g0, g1) = ext.gdt_blocks;
            let (b0, b1) = (g0 * ext.block_bytes, g1 * ext.block_bytes);
            if page_start < b1 && page_start + self.page_bytes > b0 {
                self.parse_gdt_page(&ext, page_start, data);
            }
        }
    }

    fn recognize_ext(&mut self, sb: &[u8]) {
        let block_bytes = 1024u64 << le32(sb, 24).min(6);
        let blocks_per_group = le32(sb, 32).max(1);
        let incompat = le32(sb, 96);
        let desc_64bit = incompat & 0x80 != 0;
        let mut blocks = le32(sb, 4);
        if desc_64bit {
            blocks |= le32(sb, 336) << 32;
        }
        let first_data_block = le32(sb, 20);
        let groups = blocks.saturating_sub(first_data_block).div_ceil(blocks_per_group);
        let desc_bytes = if desc_64bit { le16(sb, 254).max(32) } else { 32 };
        let inode_bytes = if le32(sb, 76) >= 1 { le16(sb, 88).max(128) } else { 128 };
        let gdt_first = first_data_block + 1;
        let gdt_len = (groups * desc_bytes).div_ceil(block_bytes) + le16(sb, 206);
        let ext = Ext {
            block_bytes,
            blocks,
            inodes_count: le32(sb, 0) as u32,
            inodes_per_group: le32(sb, 40) as u32,
            inode_bytes,
            desc_bytes,
            desc_64bit,
            groups,
            gdt_blocks: (gdt_first, gdt_first + gdt_len),
        };
        let fresh = self.ext != Some(ext);
        self.ext = Some(ext);
        self.recognized = true;
        // Boot block + superblock, then the GDT with its reserved blocks.
        self.mark_bytes(0, 2048.max(block_bytes * gdt_first));
        self.mark_bytes(gdt_first * block_bytes, gdt_len * block_bytes);
        if fresh {
            let stash = std::mem::take(&mut self.stash);
            for (lpn, data) in &stash {
                let start = lpn * self.page_bytes;
                if start < (gdt_first + gdt_len) * block_bytes {
                    self.parse_gdt_page(&ext, start, data);
                }
            }
        }
    }

    /// Marks the bitmaps and inode tables of the group descriptors in one page of the GDT.
    fn parse_gdt_page(&mut self, ext: &Ext, page_start: u64, data: &[u8]) {
        let gdt_start = ext.gdt_blocks.0 * ext.block_bytes;
        let itable_bytes = u64::from(ext.inodes_per_group) * ext.inode_bytes;
        let first = page_start.max(gdt_start);
        let end = page_start + data.len() as u64;
        let mut at =
            first + (ext.desc_bytes - (first - gdt_start) % ext.desc_bytes) % ext.desc_bytes;
        while at + ext.desc_bytes <= end {
            let group = (at - gdt_start) / ext.desc_bytes;
            if group >= ext.groups {
                break;
            }
            let d = &data[(at - page_start) as usize..(at - page_start + ext.desc_bytes) as usize];
            let field = |lo: usize, hi: usize| {
                let mut v = le32(d, lo);
                if ext.desc_64bit && ext.desc_bytes >= 64 {
                    v |= le32(d, hi) << 32;
                }
                v
            };
            let (block_bitmap, inode_bitmap, inode_table) =
                (field(0, 0x20), field(4, 0x24), field(8, 0x28));
            for b in [block_bitmap, inode_bitmap] {
                if b != 0 {
                    self.mark_bytes(b * ext.block_bytes, ext.block_bytes);
                }
            }
            if inode_table != 0 {
                self.mark_bytes(inode_table * ext.block_bytes, itable_bytes);
                self.mark_itable(inode_table * ext.block_bytes, itable_bytes);
            }
            at += ext.desc_bytes;
        }
    }

    fn recognize_fat(&mut self, boot: &[u8]) {
        let fat_label = &boot[54..57] == b"FAT" || &boot[82..85] == b"FAT";
        if !fat_label {
            return;
        }
        let bytes_per_sector = le16(boot, 11).max(512);
        let reserved = le16(boot, 14);
        let fats = u64::from(boot[16]);
        let mut fat_sectors = le16(boot, 22);
        if fat_sectors == 0 {
            fat_sectors = le32(boot, 36); // FAT32
        }
        self.recognized = true;
        self.mark_bytes(0, (reserved + fats * fat_sectors) * bytes_per_sector);
    }

    /// Content rules (module doc, rule 4), applied to each file-system block in the page.
    fn sniff(&self, data: &[u8]) -> bool {
        let block = self.ext.map_or(4096, |e| e.block_bytes as usize).min(data.len()).max(512);
        data.chunks(block).any(|b| self.sniff_block(b))
            || data.chunks(1024).any(|r| &r[..4] == b"FILE" || &r[..4] == b"INDX")
            || (data.len() >= 512 && &data[3..11] == b"NTFS    ")
    }

    fn sniff_block(&self, b: &[u8]) -> bool {
        let magic32 = le32(b, 0);
        le16(b, 0) == 0xF30A && le16(b, 4) > 0 && le16(b, 6) <= 5
            || u32::from_be_bytes([b[0], b[1], b[2], b[3]]) == 0xC03B_3998
            || magic32 == 0xEA02_0000
            || self.ext_directory(b)
            || (self.ext.is_none() && fat_directory(b))
    }

    /// An ext directory block: entries whose `rec_len`s chain exactly to the block's end.
    fn ext_directory(&self, b: &[u8]) -> bool {
        let Some(ext) = self.ext else { return false };
        let mut off = 0usize;
        let mut named = 0;
        while off + 8 <= b.len() {
            let inode = le32(b, off);
            let rec_len = le16(b, off + 4) as usize;
            let name_len = b[off + 6] as usize;
            if rec_len < 8
                || !rec_len.is_multiple_of(4)
                || off + rec_len > b.len()
                || name_len + 8 > rec_len
            {
                return false;
            }
            if inode > u64::from(ext.inodes_count) {
                return false;
            }
            if inode != 0 && name_len > 0 {
                named += 1;
            }
            off += rec_len;
        }
        // Empty directory blocks (one unused entry spanning the block, plus the checksum
        // tail with metadata_csum) are directory blocks too: lost+found is made of them.
        let _ = named;
        off == b.len()
    }
}

/// A FAT directory cluster: every 32-byte entry is free (0x00 / 0xE5 first byte), a long-name
/// entry (attribute 0x0F), or a short entry with printable name bytes and sane attributes;
/// at least one entry is in use.
fn fat_directory(b: &[u8]) -> bool {
    let mut used = 0;
    for e in b.chunks(32) {
        if e.len() < 32 || e[0] == 0x00 {
            if e.iter().any(|&x| x != 0) && e[0] == 0x00 {
                return false;
            }
            continue;
        }
        let attr = e[11];
        if e[0] == 0xE5 {
            continue;
        }
        if attr == 0x0F {
            used += 1;
            continue;
        }
        let name_ok = e[..11].iter().all(|&c| c == 0x05 || (0x20..0x7F).contains(&c));
        if !name_ok || attr & 0xC0 != 0 {
            return false;
        }
        used += 1;
    }
    used > 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_pages_dropped_everything_kept_before_recognition() {
        let mut c = Classifier::new(4096, 1024);
        assert!(!c.keep(5, &[0u8; 4096]));
        assert!(c.keep(5, &[1u8; 4096]));
        assert!(!c.recognized());
    }

    #[test]
    fn directory_chain() {
        let mut c = Classifier::new(4096, 1024);
        c.ext = Some(Ext {
            block_bytes: 4096,
            blocks: 1000,
            inodes_count: 100,
            inodes_per_group: 100,
            inode_bytes: 256,
            desc_bytes: 32,
            desc_64bit: false,
            groups: 1,
            gdt_blocks: (1, 2),
        });
        c.recognized = true;
        let mut dir = vec![0u8; 4096];
        // "." (inode 2, rec_len 12), ".." (inode 2, rec_len 4084).
        dir[0..4].copy_from_slice(&2u32.to_le_bytes());
        dir[4..6].copy_from_slice(&12u16.to_le_bytes());
        dir[6] = 1;
        dir[8] = b'.';
        dir[12..16].copy_from_slice(&2u32.to_le_bytes());
        dir[16..18].copy_from_slice(&4084u16.to_le_bytes());
        dir[18] = 2;
        dir[20..22].copy_from_slice(b"..");
        assert!(c.keep(50, &dir));
        let data: Vec<u8> = (0..4096u32).map(|i| (i * 7 + 3) as u8).collect();
        assert!(!c.keep(51, &data), "file data is dropped once a file system is known");
    }
}
