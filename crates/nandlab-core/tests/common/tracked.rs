//! `Tracked`: a metadata-only media that records every flash and NVRAM operation and follows
//! each physical page's *origin* (the id of the host write whose data it holds), so that a
//! recovery test can rebuild the media as it was after any operation (a crash there), recover
//! an FTL from it and check that every LPN's newest copy holds the right data.
//!
//! - A program's origin is the first 8 bytes of its payload (little-endian) when it has one
//!   (tests that write payloads stamp each host write with its id; an FTL writing back a RAM
//!   page passes that page's payload on), else the OOB sequence number (the hybrid tests write
//!   no payload: their host write ids are sequence numbers). A copy inherits its source's.
//! - NVRAM (a RAM region's battery-backed pages, `Media::nvram_write`) is emulated like the
//!   store's image (`nandlab-store`, `FileMedia::write_nvram_cell` / `read_nvram`): each slot has
//!   two cells; a write goes to the cell not holding the slot's newest version, stamped with a
//!   write order one above any before; at start-up each slot's cell with the highest order is
//!   its entry (`take_nvram_entries`). A write is atomic at the granularity of an operation
//!   (the store writes the page first and the header last: a cut write leaves the previous cell
//!   the newest).
//! - `Image` is what the flash and NVRAM hold at one instant; `apply` replays one recorded
//!   operation, `cut_erase` an erase cut short, `checkpoint_view` the OOB view the store's
//!   checkpoint mount builds, `media` the media a restart gets.

use std::sync::{Arc, Mutex};

use nandlab_core::media::{
    BlockId, BlockRecord, Checkpoint, CountingMedia, Lpn, Media, NvramEntry, Oob, Ppn, GARBAGE_LPN,
};
use nandlab_core::parts::Ftl;
use nandlab_core::Geometry;
use nandlab_core::MediaError;

/// A checkpoint as the store would persist it.
#[derive(Clone, Debug)]
pub struct SavedCheckpoint {
    pub seq: u64,
    pub blocks: Vec<BlockRecord>,
    pub l2p: Vec<Ppn>,
    pub free_order: Vec<BlockId>,
}

/// One NVRAM cell's content (the store's cell header plus what its page holds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NvramCell {
    pub lpn: Lpn,
    pub seq: u64,
    /// Global write order (the newest cell of a slot has the highest).
    pub order: u64,
    /// The host write whose data the page holds (0 for a poisoned cell).
    pub origin: u64,
    /// The page is lost: poisoned (`nvram_poison`) or, in a hand-made image, failing its CRC.
    pub damaged: bool,
}

/// A slot's two cells.
pub type NvramSlot = [Option<NvramCell>; 2];

#[derive(Clone, Copy, Debug)]
pub enum Op {
    Program {
        ppn: Ppn,
        oob: Oob,
        /// The origin the page got (see the module doc).
        origin: u64,
    },
    Copy {
        from: Ppn,
        to: Ppn,
        oob: Oob,
    },
    Erase {
        block: BlockId,
    },
    /// NVRAM cell `cell` of `slot` now holds `value`.
    Nvram {
        slot: u32,
        cell: u8,
        value: NvramCell,
    },
    /// Not a media operation: the host trimmed `lpn` here.
    Trim {
        lpn: Lpn,
    },
    /// Not a flash operation: checkpoint number `n` was written here.
    Checkpoint {
        n: usize,
    },
}

#[derive(Default)]
pub struct Track {
    pub ops: Vec<Op>,
    /// Per physical page: the origin of the data it holds.
    pub origin: Vec<u64>,
    pub checkpoints: Vec<SavedCheckpoint>,
    /// The NVRAM cells (empty: the media has no NVRAM).
    pub nvram: Vec<NvramSlot>,
}

pub struct Tracked {
    inner: CountingMedia,
    track: Arc<Mutex<Track>>,
    /// Per slot: the cell holding its newest version (0 or 1; 2 = none yet).
    current: Vec<u8>,
    next_order: u64,
    /// What `take_nvram_entries` hands out (read at "mount").
    entries: Vec<NvramEntry>,
    error: Option<MediaError>,
}

/// A page's payload stamped with `origin` (the rest zero).
#[must_use]
pub fn payload(origin: u64, page_bytes: usize) -> Vec<u8> {
    let mut page = vec![0; page_bytes];
    page[..8].copy_from_slice(&origin.to_le_bytes());
    page
}

/// The origin a payload is stamped with.
#[must_use]
pub fn origin_of(page: &[u8]) -> u64 {
    u64::from_le_bytes(page[..8].try_into().expect("a page holds 8 bytes"))
}

impl Tracked {
    /// A media without NVRAM.
    pub fn new(inner: CountingMedia, origin: Vec<u64>) -> (Self, Arc<Mutex<Track>>) {
        Self::with_nvram(inner, origin, Vec::new())
    }

    /// A media whose NVRAM has `nvram.len()` slots holding `nvram`; the entries a restart finds
    /// are read from it as the store's mount reads them.
    pub fn with_nvram(
        inner: CountingMedia,
        origin: Vec<u64>,
        nvram: Vec<NvramSlot>,
    ) -> (Self, Arc<Mutex<Track>>) {
        assert_eq!(origin.len() as u64, inner.geometry().physical_pages());
        let page_bytes = inner.geometry().page_size_bytes as usize;
        let mut current = vec![2; nvram.len()];
        let mut max_order = 0;
        let mut entries = Vec::new();
        for (slot, cells) in nvram.iter().enumerate() {
            let best = (0..2u8)
                .filter_map(|c| cells[c as usize].map(|v| (c, v)))
                .max_by_key(|&(_, v)| v.order);
            let Some((c, v)) = best else { continue };
            current[slot] = c;
            max_order = max_order.max(cells.iter().flatten().map(|v| v.order).max().unwrap_or(0));
            entries.push(NvramEntry {
                slot: slot as u32,
                lpn: v.lpn,
                seq: v.seq,
                order: v.order,
                data: (!v.damaged).then(|| payload(v.origin, page_bytes)),
                damaged: v.damaged,
            });
        }
        let track = Arc::new(Mutex::new(Track { origin, nvram, ..Track::default() }));
        let media = Self {
            inner,
            track: Arc::clone(&track),
            current,
            next_order: max_order + 1,
            entries,
            error: None,
        };
        (media, track)
    }

    fn write_cell(&mut self, slot: u32, lpn: Lpn, seq: u64, origin: u64, damaged: bool) {
        let s = slot as usize;
        assert!(s < self.current.len(), "NVRAM slot {slot} past the NVRAM area");
        let cell = if self.current[s] == 0 { 1 } else { 0 };
        let value = NvramCell { lpn, seq, order: self.next_order, origin, damaged };
        self.next_order += 1;
        self.current[s] = cell;
        let mut t = self.track.lock().unwrap();
        t.nvram[s][cell as usize] = Some(value);
        t.ops.push(Op::Nvram { slot, cell, value });
    }
}

impl Media for Tracked {
    fn geometry(&self) -> &Geometry {
        self.inner.geometry()
    }
    fn program(&mut self, ppn: Ppn, oob: Oob, data: Option<&[u8]>) {
        self.inner.program(ppn, oob, data);
        let origin = data.map_or(oob.seq, origin_of);
        let mut t = self.track.lock().unwrap();
        t.ops.push(Op::Program { ppn, oob, origin });
        t.origin[ppn.index()] = origin;
    }
    fn read(&mut self, ppn: Ppn, data: Option<&mut [u8]>) -> Oob {
        let oob = self.inner.read(ppn, None);
        if let Some(d) = data {
            let origin = self.track.lock().unwrap().origin[ppn.index()];
            d.fill(0);
            d[..8].copy_from_slice(&origin.to_le_bytes());
        }
        oob
    }
    fn copy(&mut self, from: Ppn, to: Ppn, oob: Oob) {
        self.inner.copy(from, to, oob);
        let mut t = self.track.lock().unwrap();
        t.ops.push(Op::Copy { from, to, oob });
        t.origin[to.index()] = t.origin[from.index()];
    }
    fn oob(&self, ppn: Ppn) -> Option<Oob> {
        self.inner.oob(ppn)
    }
    fn erase(&mut self, block: BlockId) {
        self.inner.erase(block);
        self.track.lock().unwrap().ops.push(Op::Erase { block });
    }
    /// A program a power cut interrupted (`FaultyMedia`'s torn write): recorded as a program of
    /// a garbage page, which is what the store's mount makes of a torn page (an OOB record that
    /// fails its CRC at the end of its block's programmed pages). The RAM state is left alone:
    /// after a cut the session ends, and only the recorded operations matter (`Image::apply`).
    fn tear(&mut self, ppn: Ppn, _oob: Oob) {
        let garbage = Oob { lpn: GARBAGE_LPN, seq: 0, region: 0 };
        let mut t = self.track.lock().unwrap();
        t.ops.push(Op::Program { ppn, oob: garbage, origin: 0 });
        t.origin[ppn.index()] = 0;
    }
    fn erase_count(&self, block: BlockId) -> u32 {
        self.inner.erase_count(block)
    }
    fn programmed_pages(&self, block: BlockId) -> u32 {
        self.inner.programmed_pages(block)
    }
    fn memory_bytes(&self) -> u64 {
        self.inner.memory_bytes()
    }
    fn write_checkpoint(&mut self, cp: &Checkpoint<'_>) -> Result<(), MediaError> {
        let mut t = self.track.lock().unwrap();
        let n = t.checkpoints.len();
        t.checkpoints.push(SavedCheckpoint {
            seq: cp.seq,
            blocks: cp.blocks.to_vec(),
            l2p: cp.l2p.to_vec(),
            free_order: cp.free_order.to_vec(),
        });
        t.ops.push(Op::Checkpoint { n });
        Ok(())
    }
    fn take_error(&mut self) -> Option<MediaError> {
        self.error.take()
    }
    fn report_error(&mut self, error: MediaError) {
        self.error.get_or_insert(error);
    }
    fn nvram_pages(&self) -> u32 {
        self.current.len() as u32
    }
    fn nvram_write(&mut self, slot: u32, lpn: Lpn, seq: u64, data: Option<&[u8]>) {
        // Without a payload the store writes a zero page: origin 0.
        self.write_cell(slot, lpn, seq, data.map_or(0, origin_of), false);
    }
    fn nvram_poison(&mut self, slot: u32, lpn: Lpn, seq: u64) {
        self.write_cell(slot, lpn, seq, 0, true);
    }
    fn take_nvram_entries(&mut self) -> Vec<NvramEntry> {
        std::mem::take(&mut self.entries)
    }
}

/// What the flash and the NVRAM hold at one instant: the image a restart reads.
#[derive(Clone)]
pub struct Image {
    pub geometry: Geometry,
    pub pages: Vec<Option<Oob>>,
    pub erase_counts: Vec<u32>,
    pub origin: Vec<u64>,
    pub nvram: Vec<NvramSlot>,
}

impl Image {
    /// An erased device without NVRAM.
    #[must_use]
    pub fn empty(geometry: Geometry) -> Self {
        Self::with_nvram(geometry, 0)
    }

    /// An erased device with `nvram_pages` empty NVRAM slots.
    #[must_use]
    pub fn with_nvram(geometry: Geometry, nvram_pages: u32) -> Self {
        let pages = geometry.physical_pages() as usize;
        Self {
            geometry,
            pages: vec![None; pages],
            erase_counts: vec![0; geometry.blocks as usize],
            origin: vec![0; pages],
            nvram: vec![[None; 2]; nvram_pages as usize],
        }
    }

    /// The image of a live FTL's media (a `Tracked` whose track is `track`).
    pub fn of(ftl: &dyn Ftl, track: &Arc<Mutex<Track>>) -> Self {
        let geometry = *ftl.geometry();
        let media = ftl.flash().media();
        let t = track.lock().unwrap();
        Self {
            geometry,
            pages: geometry.ppns().map(|p| media.oob(p)).collect(),
            erase_counts: geometry.block_ids().map(|b| media.erase_count(b)).collect(),
            origin: t.origin.clone(),
            nvram: t.nvram.clone(),
        }
    }

    pub fn apply(&mut self, op: Op) {
        let ppb = self.geometry.pages_per_block as usize;
        match op {
            Op::Program { ppn, oob, origin } => {
                self.pages[ppn.index()] = Some(oob);
                self.origin[ppn.index()] = origin;
            }
            Op::Copy { from, to, oob } => {
                self.pages[to.index()] = Some(oob);
                self.origin[to.index()] = self.origin[from.index()];
            }
            Op::Erase { block } => {
                let b = block.index();
                self.pages[b * ppb..(b + 1) * ppb].fill(None);
                self.erase_counts[b] += 1;
            }
            Op::Nvram { slot, cell, value } => {
                self.nvram[slot as usize][cell as usize] = Some(value);
            }
            Op::Trim { .. } | Op::Checkpoint { .. } => {}
        }
    }

    /// An erase of `block` cut short: the header counts it, only the pages `cleared` picks lose
    /// their OOB.
    pub fn cut_erase(&mut self, block: BlockId, cleared: impl Fn(u32) -> bool) {
        for (i, ppn) in self.geometry.pages_of(block).enumerate() {
            if cleared(i as u32) {
                self.pages[ppn.index()] = None;
            }
        }
        self.erase_counts[block.index()] += 1;
    }

    /// The media a restart reads (`Tracked`, keeping the origins and the NVRAM), and its track.
    #[must_use]
    pub fn media(&self) -> (Box<dyn Media>, Arc<Mutex<Track>>) {
        let inner = CountingMedia::restore(self.geometry, &self.erase_counts, &self.pages);
        let (media, track) = Tracked::with_nvram(inner, self.origin.clone(), self.nvram.clone());
        (Box::new(media), track)
    }

    /// The OOB view the store's checkpoint mount builds (`FileMedia::open` with
    /// `Mount::Checkpoint`): closed blocks unchanged since `cp` keep only the pages it maps
    /// (seq = the checkpoint's, region = the block's), the rest read again; pages older than
    /// the checkpoint that it does not map are garbage. The NVRAM is read as after a scan.
    /// `first_page_walk`: blocks free at the checkpoint are rolled forward in `free_order`
    /// until the first whose first page is erased (the store's former rule); otherwise every
    /// one with any programmed page is read (the store's "programmed since erase" flag).
    #[must_use]
    pub fn checkpoint_view(&self, cp: &SavedCheckpoint, first_page_walk: bool) -> Self {
        let ppb = self.geometry.pages_per_block as usize;
        let mut view = self.clone();
        view.pages.fill(None);
        let unchanged =
            |b: usize| cp.blocks[b].state == 2 && cp.blocks[b].erase_count == self.erase_counts[b];
        let mut rescan = Vec::new();
        for (block, rec) in self.geometry.block_ids().zip(&cp.blocks) {
            let b = block.index();
            if rec.state == 0 && rec.erase_count == self.erase_counts[b] {
                continue;
            }
            if !unchanged(b) {
                rescan.push(block);
                continue;
            }
            for slot in &mut view.pages[b * ppb..(b + 1) * ppb] {
                *slot = Some(Oob { lpn: GARBAGE_LPN, seq: 0, region: rec.region });
            }
        }
        for &block in &cp.free_order {
            let b = block.index();
            if cp.blocks[b].erase_count != self.erase_counts[b] {
                continue;
            }
            let written = if first_page_walk {
                self.pages[b * ppb].is_some()
            } else {
                self.pages[b * ppb..(b + 1) * ppb].iter().any(Option::is_some)
            };
            if written {
                rescan.push(block);
            } else if first_page_walk {
                break;
            }
        }
        for (lpn, &ppn) in (0..).map(Lpn::new).zip(&cp.l2p) {
            let b = self.geometry.block_of(ppn).index();
            if ppn != Ppn::NONE && unchanged(b) {
                let region = cp.blocks[b].region;
                view.pages[ppn.index()] = Some(Oob { lpn, seq: cp.seq, region });
            }
        }
        for &block in &rescan {
            for ppn in self.geometry.pages_of(block) {
                let Some(oob) = self.pages[ppn.index()] else { continue };
                view.pages[ppn.index()] = Some(if oob.seq > cp.seq || oob.lpn == GARBAGE_LPN {
                    oob
                } else if cp.l2p.get(oob.lpn.index()) == Some(&ppn) {
                    Oob { seq: cp.seq, ..oob }
                } else {
                    Oob { lpn: GARBAGE_LPN, ..oob }
                });
            }
        }
        view
    }
}

/// What the host last did to each LPN.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Last {
    Never,
    /// Written by the host write with this id (its origin).
    Written(u64),
    Trimmed,
}
