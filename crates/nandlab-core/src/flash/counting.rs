//! `CountingMedia`: the metadata-only media. It stores what real flash would let an FTL read
//! back (per-page OOB, per-block erase count and write pointer) but no payload, so simulations
//! of large devices need little RAM: 12 bytes per page plus 9 per block, or 4 bytes per page
//! when nothing will ever be recovered from it (`without_write_order`).

use super::{BlockId, Lpn, Media, Oob, Ppn};
use crate::flash::Geometry;

pub struct CountingMedia {
    geometry: Geometry,
    pages_per_block: u32,
    /// OOB LPN of each page; `Lpn::NONE` when erased.
    lpn: Vec<Lpn>,
    /// OOB sequence number of each page: what recovery orders copies of one LPN by. Empty when
    /// the media is built `without_write_order`.
    seq: Vec<u64>,
    /// Region written in the block header at its first program.
    block_region: Vec<u8>,
    erase_count: Vec<u32>,
    write_pointer: Vec<u32>,
}

impl CountingMedia {
    #[must_use]
    pub fn new(geometry: Geometry) -> Self {
        Self::build(geometry, true)
    }

    /// A media for a simulation that never recovers from it (`nandlab run`): the pages' OOB
    /// sequence numbers, which only recovery reads (to tell the newest of several copies of a
    /// page), are not kept, saving 8 bytes per page (never allocated: the memory estimate
    /// counts on it). `oob` reports 0 for them; `Media::keeps_write_order` says so, and
    /// recovery asserts it.
    #[must_use]
    pub fn without_write_order(geometry: Geometry) -> Self {
        Self::build(geometry, false)
    }

    fn build(geometry: Geometry, keep_order: bool) -> Self {
        let pages = geometry.physical_pages() as usize;
        let blocks = geometry.blocks as usize;
        Self {
            geometry,
            pages_per_block: geometry.pages_per_block,
            lpn: vec![Lpn::NONE; pages],
            seq: if keep_order { vec![0; pages] } else { Vec::new() },
            block_region: vec![0; blocks],
            erase_count: vec![0; blocks],
            write_pointer: vec![0; blocks],
        }
    }

    /// Rebuilds the metadata from a scan of persistent flash: each page's OOB (`None` =
    /// erased) and each block's erase count. A block's write pointer is one past its last
    /// programmed page; an erased slot below it (a torn erase) becomes `GARBAGE_LPN`.
    #[must_use]
    pub fn restore(geometry: Geometry, erase_counts: &[u32], pages: &[Option<Oob>]) -> Self {
        let mut m = Self::new(geometry);
        let ppb = geometry.pages_per_block as usize;
        assert_eq!(pages.len(), m.lpn.len());
        assert_eq!(erase_counts.len(), m.erase_count.len());
        m.erase_count.copy_from_slice(erase_counts);
        for (b, block_pages) in pages.chunks(ppb).enumerate() {
            let Some(last) = block_pages.iter().rposition(Option::is_some) else { continue };
            m.write_pointer[b] = last as u32 + 1;
            let mut region = None;
            for (i, page) in block_pages[..=last].iter().enumerate() {
                let ppn = b * ppb + i;
                match page {
                    Some(oob) if oob.lpn != Lpn::NONE => {
                        m.lpn[ppn] = oob.lpn;
                        m.seq[ppn] = oob.seq;
                        region.get_or_insert(oob.region);
                    }
                    _ => m.lpn[ppn] = super::GARBAGE_LPN,
                }
            }
            m.block_region[b] = region.unwrap_or(0);
        }
        m
    }

    /// A copy of another media's metadata as it is now: every page's OOB (holes below a
    /// write pointer stay erased, unlike `restore`), erase counts and write pointers.
    /// `FaultyMedia` goes on with it after a power cut, leaving the media itself as the cut
    /// left it. O(pages), once per cut: never on the simulation's path.
    #[must_use]
    pub(crate) fn snapshot(m: &dyn Media) -> Self {
        let geometry = *m.geometry();
        let mut c = Self::new(geometry);
        for b in geometry.block_ids() {
            c.erase_count[b.index()] = m.erase_count(b);
            c.write_pointer[b.index()] = m.programmed_pages(b);
            for ppn in geometry.pages_of(b) {
                let Some(oob) = m.oob(ppn) else { continue };
                let pointer = c.write_pointer[b.index()];
                assert!(geometry.page_in_block(ppn) < pointer, "page {ppn} above its pointer");
                c.lpn[ppn.index()] = oob.lpn;
                c.seq[ppn.index()] = oob.seq;
                c.block_region[b.index()] = oob.region;
            }
        }
        c
    }

    #[inline]
    fn split(&self, ppn: Ppn) -> (usize, u32) {
        (self.geometry.block_of(ppn).index(), self.geometry.page_in_block(ppn))
    }
}

impl Media for CountingMedia {
    fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    #[inline]
    fn program(&mut self, ppn: Ppn, oob: Oob, _data: Option<&[u8]>) {
        let (block, offset) = self.split(ppn);
        // NAND rule: pages of a block are programmed in ascending order, each once per erase.
        // Skipping pages is allowed (a block-mapped FTL leaves holes at never-written offsets).
        assert!(self.write_pointer[block] <= offset, "out-of-order program of page {ppn}");
        assert_eq!(self.lpn[ppn.index()], Lpn::NONE, "program of a programmed page {ppn}");
        assert_ne!(oob.lpn, Lpn::NONE);
        if self.write_pointer[block] == 0 {
            self.block_region[block] = oob.region;
        } else {
            assert_eq!(self.block_region[block], oob.region, "block {block} mixes regions");
        }
        self.write_pointer[block] = offset + 1;
        self.lpn[ppn.index()] = oob.lpn;
        if let Some(s) = self.seq.get_mut(ppn.index()) {
            *s = oob.seq;
        }
    }

    #[inline]
    fn read(&mut self, ppn: Ppn, _data: Option<&mut [u8]>) -> Oob {
        self.oob(ppn).unwrap_or_else(|| panic!("read of erased page {ppn}"))
    }

    #[inline]
    fn copy(&mut self, from: Ppn, to: Ppn, oob: Oob) {
        assert_ne!(self.lpn[from.index()], Lpn::NONE, "copy from erased page {from}");
        self.program(to, oob, None);
    }

    #[inline]
    fn oob(&self, ppn: Ppn) -> Option<Oob> {
        let lpn = self.lpn[ppn.index()];
        (lpn != Lpn::NONE).then(|| Oob {
            lpn,
            seq: self.seq.get(ppn.index()).copied().unwrap_or(0),
            region: self.block_region[self.geometry.block_of(ppn).index()],
        })
    }

    #[inline]
    fn lpn(&self, ppn: Ppn) -> Option<Lpn> {
        let lpn = self.lpn[ppn.index()];
        (lpn != Lpn::NONE).then_some(lpn)
    }

    fn prefetch_block_oob(&self, block: BlockId) {
        let first = self.geometry.ppn(block, 0).index();
        // One hint per cache line (16 LPNs of 4 bytes).
        for i in (first..first + self.pages_per_block as usize).step_by(16) {
            nandlab_prefetch::prefetch(&self.lpn, i);
        }
    }

    fn block_lpns(&self, block: BlockId) -> Option<&[Lpn]> {
        let first = self.geometry.ppn(block, 0).index();
        Some(&self.lpn[first..first + self.pages_per_block as usize])
    }

    fn erase(&mut self, block: BlockId) {
        let b = block.index();
        let first = self.geometry.ppn(block, 0).index();
        self.lpn[first..first + self.pages_per_block as usize].fill(Lpn::NONE);
        self.write_pointer[b] = 0;
        self.erase_count[b] += 1;
    }

    fn erase_count(&self, block: BlockId) -> u32 {
        self.erase_count[block.index()]
    }

    fn programmed_pages(&self, block: BlockId) -> u32 {
        self.write_pointer[block.index()]
    }

    fn keeps_write_order(&self) -> bool {
        self.seq.len() == self.lpn.len()
    }

    fn memory_bytes(&self) -> u64 {
        (self.lpn.len() * 4 + self.seq.len() * 8) as u64
            + (self.block_region.len() + self.erase_count.len() * 4 + self.write_pointer.len() * 4)
                as u64
    }
}
