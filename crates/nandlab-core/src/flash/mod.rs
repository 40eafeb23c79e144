//! Flash media and the operation layer every FTL programs against.
//!
//! `Media` is the storage seam: per-page state and out-of-band (OOB) metadata (LPN, region,
//! sequence number), per-block erase counts and write pointers. `CountingMedia` keeps only that
//! metadata (no payload): the fast path. A payload-storing, file-backed media (NBD issue)
//! implements the same trait; FTL code never knows which one it runs on.
//!
//! `Flash` wraps a media with the timing model (the sim-engine, `engine`: every operation is
//! timed on its die and bus) and source-tagged operation counters (the MQSim idea: tag every
//! flash operation with why it happened — host, cleaner, wear leveling — so write amplification
//! and cleaning cost fall out of accounting).

mod counting;
mod faulty;
mod geometry;

pub use crate::engine::Timing;
pub use counting::CountingMedia;
pub use faulty::{Fault, FaultKind, FaultyMedia, Injected};
pub use geometry::Geometry;

use crate::engine::{Engine, Hardware, OpKind, OpRef};
use crate::fastdiv::Divisor;

/// Defines a page or block number: a `u32` of its own type, so that a physical page cannot be
/// passed where a logical page or a block is expected. The representation stays a bare `u32`
/// (`repr(transparent)`): tables of them keep their size and layout. Arithmetic that mixes
/// kinds goes through named helpers (`Geometry::ppn`, `Flash::block_of`, ...), not operators.
macro_rules! number_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        #[repr(transparent)]
        pub struct $name(u32);

        impl $name {
            /// "None here" in a table of them (`NONE`'s value, `u32::MAX`).
            pub const NONE: Self = Self(NONE);

            #[inline(always)]
            #[must_use]
            pub const fn new(n: u32) -> Self {
                Self(n)
            }

            #[inline(always)]
            #[must_use]
            pub const fn get(self) -> u32 {
                self.0
            }

            /// As an index into a table with one entry per number.
            #[inline(always)]
            #[must_use]
            pub const fn index(self) -> usize {
                self.0 as usize
            }

            /// From a number computed in 64 bits (a byte offset divided by the page size):
            /// below `u32::MAX` as every page and block number is (checked in debug builds).
            #[inline(always)]
            #[must_use]
            pub fn from_u64(n: u64) -> Self {
                debug_assert!(n < u64::from(NONE), "{n} is out of range");
                Self(n as u32)
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                std::fmt::Display::fmt(&self.0, f)
            }
        }

        impl From<$name> for u64 {
            #[inline(always)]
            fn from(n: $name) -> u64 {
                u64::from(n.0)
            }
        }
    };
}

number_type! {
    /// Physical page number: `block * pages_per_block + page_in_block` (`Geometry::ppn`).
    Ppn
}
number_type! {
    /// Logical page number.
    Lpn
}
number_type! {
    /// Erase block index.
    BlockId
}

/// Sentinel for "none" in tables of plain `u32` indexes (log slots, groups); tables of pages
/// and blocks use their type's `NONE`, which has this value.
pub const NONE: u32 = u32::MAX;

/// Out-of-band metadata programmed with every page (docs/ALGORITHMS.md §2.5: LPN, region, update
/// sequence).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Oob {
    pub lpn: Lpn,
    /// Global program sequence number: the newest copy of an LPN has the largest.
    pub seq: u64,
    pub region: u8,
}

/// The flash chip array as storage. Programs must go in ascending page order inside a block
/// (skipping erased pages is allowed) and only to erased pages; these are asserted (they are
/// FTL bugs, not user errors).
pub trait Media: Send {
    fn geometry(&self) -> &Geometry;
    fn program(&mut self, ppn: Ppn, oob: Oob, data: Option<&[u8]>);
    /// Reads a programmed page's payload (when the media keeps payloads) and returns its OOB.
    fn read(&mut self, ppn: Ppn, data: Option<&mut [u8]>) -> Oob;
    /// Copies a programmed page to an erased one with new OOB (copyback or read + program).
    fn copy(&mut self, from: Ppn, to: Ppn, oob: Oob);
    /// OOB of a programmed page; `None` for an erased page.
    fn oob(&self, ppn: Ppn) -> Option<Oob>;
    /// The LPN in a programmed page's OOB (the cleaner's hot path needs nothing else).
    fn lpn(&self, ppn: Ppn) -> Option<Lpn> {
        self.oob(ppn).map(|o| o.lpn)
    }
    /// Cache hint: the OOB of `block`'s pages will be read soon (the cleaner's victim).
    fn prefetch_block_oob(&self, _block: BlockId) {}
    /// The LPNs in the OOB of every page of `block`, in page order (`Lpn::NONE` for an erased
    /// page), when the media holds them as one slice: the cleaner reads a victim's LPNs in one
    /// step instead of one call per page. `None`: ask `lpn` page by page.
    fn block_lpns(&self, _block: BlockId) -> Option<&[Lpn]> {
        None
    }
    fn erase(&mut self, block: BlockId);
    /// Leaves page `ppn` as a power cut in the middle of its program leaves it (fault injection:
    /// `FaultyMedia`'s torn writes): part of the data written and an OOB record that does not
    /// verify, so that the next mount takes the page as torn (garbage) and the LPN's previous
    /// copy stands. Nothing but drop follows: the session ends with the cut. The default writes
    /// nothing — also a state a cut can leave (it came before the program started); a
    /// payload-storing media writes the damaged record its mount looks for.
    fn tear(&mut self, _ppn: Ppn, _oob: Oob) {}
    fn erase_count(&self, block: BlockId) -> u32;
    /// One past the highest page programmed since the block's last erase (the write pointer).
    fn programmed_pages(&self, block: BlockId) -> u32;
    /// Bytes of RAM this media uses for its own state.
    fn memory_bytes(&self) -> u64;
    /// Whether each page's OOB sequence number is kept, as recovery needs
    /// (`CountingMedia::without_write_order` keeps none).
    fn keeps_write_order(&self) -> bool {
        true
    }
    /// Makes everything programmed and erased so far durable (host FLUSH / FUA).
    fn sync(&mut self) -> Result<(), crate::error::MediaError> {
        Ok(())
    }
    /// The end of a clean stop: everything is written back and synced; a persistent media
    /// records that the stop was clean (and what its next start-up must find), so that it can
    /// tell damage from a write a crash cut short. The next program or erase undoes the record.
    fn record_clean_stop(&mut self) -> Result<(), crate::error::MediaError> {
        self.sync()
    }
    /// Persists an FTL checkpoint (LFSS super segments, docs/ALGORITHMS.md §3) so the next start-up
    /// can skip most of the OOB scan. Media that cannot store one say so.
    fn write_checkpoint(
        &mut self,
        _checkpoint: &Checkpoint<'_>,
    ) -> Result<(), crate::error::MediaError> {
        Err(crate::error::MediaError::new(
            std::io::ErrorKind::Unsupported,
            "this media does not store checkpoints",
        ))
    }
    /// The first storage failure since the last call (operations themselves cannot fail: a
    /// failing media keeps its RAM state consistent and reports here). This is the one error
    /// path: the device takes it at the end of every request and fails the request with it
    /// (`RequestError::Media`), so the simulation's hot path carries no `Result` per page.
    fn take_error(&mut self) -> Option<crate::error::MediaError> {
        None
    }
    /// Records a failure found above the media (e.g. a RAM-region page whose NVRAM copy was
    /// damaged), reported like the media's own through `take_error`. A media that reports
    /// errors keeps the one given here when none is pending (`Flash::error_pending` puts a
    /// taken error back this way).
    fn report_error(&mut self, _error: crate::error::MediaError) {}
    /// Pages of battery-backed RAM (NVRAM) this media persists for a RAM region (DEB's EBR,
    /// DAC's RAM region); 0 when it keeps none (the simulation's media: RAM is not persisted).
    fn nvram_pages(&self) -> u32 {
        0
    }
    /// Persists RAM-region slot `slot` now holding `lpn` (`seq`: the FTL's program sequence
    /// number at the write, so that a restart can tell it from older and newer flash copies).
    /// Called on every write into the region (write-through, as battery-backed RAM survives a
    /// power cut the moment it is written); `data` is the page, `None` without payloads.
    fn nvram_write(&mut self, _slot: u32, _lpn: Lpn, _seq: u64, _data: Option<&[u8]>) {}
    /// Marks slot `slot` as holding `lpn` whose content is lost (a damaged NVRAM page kept
    /// so that the page keeps reading as an error after another restart).
    fn nvram_poison(&mut self, _slot: u32, _lpn: Lpn, _seq: u64) {}
    /// The newest entry of every NVRAM slot found when the media was opened (taken once).
    fn take_nvram_entries(&mut self) -> Vec<NvramEntry> {
        Vec::new()
    }
}

/// A RAM-region page found in a media's NVRAM at start-up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NvramEntry {
    /// The slot it was found in: the RAM region slot it goes back into, so that restoring it
    /// writes nothing (a rewrite into another slot would hide that slot's own entry).
    pub slot: u32,
    pub lpn: Lpn,
    /// The FTL's program sequence number when it was written: the entry is newer than a flash
    /// copy of the same LPN with a sequence number ≤ this.
    pub seq: u64,
    /// Global write order of NVRAM entries (the newest of two entries of one LPN wins).
    pub order: u64,
    /// The page (`None`: no payload kept, or damaged).
    pub data: Option<Vec<u8>>,
    /// The entry's header is intact but its data failed its CRC (or it was marked lost): the
    /// LPN must read as an error, never as an older version.
    pub damaged: bool,
}

/// Largest erase count recovery accepts from flash metadata: far above any rated endurance
/// (10^5–10^6 cycles), so a larger value is damage, not wear (and would make per-count tables
/// absurdly large).
pub const MAX_PLAUSIBLE_ERASE_COUNT: u32 = 1 << 22;

/// One erase block's state in a checkpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockRecord {
    pub erase_count: u32,
    pub region: u8,
    /// 0 free, 1 open (a region's active block), 2 closed.
    pub state: u8,
    pub write_pointer: u32,
    pub valid_pages: u32,
}

/// The FTL state a checkpoint persists: enough to rebuild the tables by reading the checkpoint
/// and rolling forward only the blocks written or erased after it.
#[derive(Clone, Copy, Debug)]
pub struct Checkpoint<'a> {
    /// Highest sequence number programmed before the checkpoint.
    pub seq: u64,
    /// Simulated time of the checkpoint (the LFSS "update time").
    pub time_ns: u64,
    pub blocks: &'a [BlockRecord],
    /// LPN → PPN (`Ppn::NONE` = unmapped).
    pub l2p: &'a [Ppn],
    /// Free blocks in the order they will be allocated: after the checkpoint, blocks are opened
    /// in this order, so roll-forward can stop at the first one still erased.
    pub free_order: &'a [BlockId],
}

/// OOB LPN of a page that was programmed but cannot be trusted (torn write found at recovery):
/// it occupies its slot until the block is erased and never maps to a logical page.
pub const GARBAGE_LPN: Lpn = Lpn::new(u32::MAX - 1);

/// Why a flash operation happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    Host = 0,
    Cleaner = 1,
    WearLeveling = 2,
}

const SOURCES: usize = 3;

/// Flash operation counts by source, and busy time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlashCounters {
    pub reads: [u64; SOURCES],
    pub programs: [u64; SOURCES],
    /// Page copies (each also counted as one read and one program of its source).
    pub copies: [u64; SOURCES],
    pub erases: [u64; SOURCES],
    /// Mapping-table pages read and programmed by a partly resident table (`ftl::zones`,
    /// `ftl.mapping_zone_bytes`). Kept apart from the per-source arrays, which the per-request
    /// accounting sums: two scalars cost less there than a fourth source.
    pub mapping_reads: u64,
    pub mapping_programs: u64,
    pub busy_ns: u64,
    /// Busy time by operation: `[read, program, copy, erase, mapping]` (block-recycling paper
    /// breaks flash time down this way; mapping-table pages apart). Sums to `busy_ns`.
    pub op_ns: [u64; 5],
}

/// Index into `FlashCounters::op_ns`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Read = 0,
    Program = 1,
    Copy = 2,
    Erase = 3,
    /// Mapping-table page reads and programs (`FlashCounters::mapping_reads`, `mapping_programs`).
    Mapping = 4,
}

impl FlashCounters {
    #[must_use]
    pub fn total(a: &[u64; SOURCES]) -> u64 {
        a.iter().sum()
    }
}

/// A media plus the timing model: every operation is counted by source and handed to the
/// sim-engine (`engine`), which times it on its die and bus. RAM time (a RAM region's page
/// accesses) is collected apart: the device adds it to the current request.
pub struct Flash {
    media: Box<dyn Media>,
    timing: Timing,
    engine: Engine,
    pages_per_block: u32,
    ppb: Divisor,
    planes_div: Divisor,
    /// Planes of the device (block `b` is on plane `b mod planes`).
    planes: u32,
    /// The last read issued: a read-modify-write's program waits for it (`Flash::last_read`).
    last_read: OpRef,
    ram_ns: u64,
    /// `timing.copy_cost_ns()`, the busy time a page copy is charged on one plane.
    copy_ns: u64,
    pub counters: FlashCounters,
}

impl Flash {
    /// A flash with one serialized channel and die (the default hardware) and FIFO scheduling.
    #[must_use]
    pub fn new(media: Box<dyn Media>, timing: Timing) -> Self {
        let engine =
            Engine::new(Hardware::default(), &timing, &crate::engine::scheduler::fifo::Fifo);
        Self::with_engine(media, timing, engine)
    }

    /// A flash timed by `engine` (its hardware must match the media's geometry).
    #[must_use]
    pub fn with_engine(media: Box<dyn Media>, timing: Timing, engine: Engine) -> Self {
        let geometry = *media.geometry();
        let planes = engine.hardware().planes();
        assert!(
            geometry.blocks.is_multiple_of(planes),
            "{} blocks do not fill {planes} planes evenly",
            geometry.blocks
        );
        Self {
            media,
            timing,
            engine,
            pages_per_block: geometry.pages_per_block,
            ppb: Divisor::new(u64::from(geometry.pages_per_block)),
            planes_div: Divisor::new(u64::from(planes)),
            planes,
            last_read: OpRef::Done(0),
            ram_ns: 0,
            copy_ns: timing.copy_cost_ns(),
            counters: FlashCounters::default(),
        }
    }

    /// Gives back the media, the engine's state dropped.
    #[must_use]
    pub fn into_media(self) -> Box<dyn Media> {
        self.media
    }

    #[must_use]
    pub fn media(&self) -> &dyn Media {
        self.media.as_ref()
    }

    #[must_use]
    pub fn geometry(&self) -> &Geometry {
        self.media.geometry()
    }

    pub fn media_mut(&mut self) -> &mut dyn Media {
        self.media.as_mut()
    }

    #[must_use]
    pub fn timing(&self) -> &Timing {
        &self.timing
    }

    /// The sim-engine timing this flash's operations.
    #[must_use]
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    pub fn engine_mut(&mut self) -> &mut Engine {
        &mut self.engine
    }

    /// The plane holding block `block`.
    #[inline]
    #[must_use]
    pub fn plane_of(&self, block: BlockId) -> u32 {
        if self.planes == 1 {
            0
        } else {
            self.planes_div.rem32(block.get())
        }
    }

    /// The block holding `ppn` (`Geometry::block_of` without its division when pages per
    /// block is a power of two: the request path's version).
    #[inline(always)]
    #[must_use]
    pub fn block_of(&self, ppn: Ppn) -> BlockId {
        BlockId(self.ppb.div32(ppn.0))
    }

    /// The offset of `ppn` in its block (see `block_of`).
    #[inline(always)]
    #[must_use]
    pub fn page_in_block(&self, ppn: Ppn) -> u32 {
        self.ppb.rem32(ppn.0)
    }

    /// Page `page_in_block` of `block` (`Geometry::ppn`).
    #[inline(always)]
    #[must_use]
    pub fn ppn(&self, block: BlockId, page_in_block: u32) -> Ppn {
        Ppn(block.0 * self.pages_per_block + page_in_block)
    }

    /// Planes of the device.
    #[inline]
    #[must_use]
    pub fn planes(&self) -> u32 {
        self.planes
    }

    #[inline]
    fn charge(&mut self, op: Op, ns: u64) {
        self.counters.busy_ns += ns;
        self.counters.op_ns[op as usize] += ns;
    }

    /// The plane of `ppn` and its offset in its block (one die of one plane needs neither).
    #[inline(always)]
    fn at(&self, ppn: Ppn) -> (u32, u32) {
        if self.engine.single() {
            return (0, 0);
        }
        (self.plane_of(self.block_of(ppn)), self.page_in_block(ppn))
    }

    /// Adds RAM access time (a RAM region's page accesses) to the current request's service
    /// time; it is not flash busy time.
    #[inline]
    pub fn charge_ram(&mut self, ns: u64) {
        self.ram_ns += ns;
    }

    /// RAM time charged since the last call.
    pub fn take_ram_ns(&mut self) -> u64 {
        std::mem::take(&mut self.ram_ns)
    }

    /// The last read issued (a read-modify-write's program must wait for it:
    /// `Engine::set_after`).
    #[must_use]
    pub fn last_read(&self) -> OpRef {
        self.last_read
    }

    /// Whether the media has a failure waiting to be reported; it stays waiting (the request
    /// still fails with it). For callers about to build on what a read returned — a
    /// read-modify-write merging into the page, a buffer caching it — which must not when the
    /// read failed: the bytes are not the page's.
    #[must_use]
    pub fn error_pending(&mut self) -> bool {
        match self.media.take_error() {
            Some(e) => {
                self.media.report_error(e);
                true
            }
            None => false,
        }
    }

    #[inline(always)]
    pub fn read(&mut self, ppn: Ppn, source: Source, data: Option<&mut [u8]>) -> Oob {
        self.counters.reads[source as usize] += 1;
        self.charge(Op::Read, self.timing.read_page_ns + self.timing.transfer_page_ns);
        let (plane, page) = self.at(ppn);
        self.last_read = self.engine.op(OpKind::Read, plane, page, OpRef::Done(0));
        self.media.read(ppn, data)
    }

    #[inline(always)]
    pub fn program(&mut self, ppn: Ppn, oob: Oob, source: Source, data: Option<&[u8]>) {
        self.counters.programs[source as usize] += 1;
        self.charge(Op::Program, self.timing.transfer_page_ns + self.timing.program_page_ns);
        let (plane, page) = self.at(ppn);
        self.engine.op(OpKind::Program, plane, page, OpRef::Done(0));
        self.media.program(ppn, oob, data);
    }

    /// Moves a page: on-chip copyback when the chip has it and both pages are in one plane,
    /// otherwise a read (data out to the controller) and a program that waits for it.
    #[inline(always)]
    pub fn copy(&mut self, from: Ppn, to: Ppn, oob: Oob, source: Source) {
        let s = source as usize;
        self.counters.copies[s] += 1;
        self.counters.reads[s] += 1;
        self.counters.programs[s] += 1;
        let ns = if self.engine.copy_fast() {
            // One die of one plane: both pages share the plane, so copyback applies if present.
            self.copy_ns
        } else {
            let (from_plane, from_page) = self.at(from);
            let (to_plane, to_page) = self.at(to);
            let t = &self.timing;
            // Copyback needs both pages in one plane (`at` gives plane 0 for all on a one-plane
            // device, where that holds).
            if t.copy_page_ns.is_some() && from_plane == to_plane {
                self.engine.op(OpKind::Copyback, to_plane, to_page, OpRef::Done(0));
                self.copy_ns
            } else {
                let read = (OpKind::Read, from_plane, from_page);
                self.engine.op_then(read, (OpKind::Program, to_plane, to_page));
                t.read_page_ns + 2 * t.transfer_page_ns + t.program_page_ns
            }
        };
        self.charge(Op::Copy, ns);
        self.media.copy(from, to, oob);
    }

    /// Reads (`program` false) or programs `pages` pages of mapping table (a zone's table
    /// loaded into RAM or written back: `ftl::zones`). They live in a reserved area outside
    /// the data blocks (not in the media; its cleaning is not modelled): only their time and
    /// counts are charged, page `i` on plane `(first_plane + i) mod planes`. Returns the last
    /// operation (what a lookup waits for).
    pub fn mapping_pages(&mut self, program: bool, pages: u32, first_plane: u32) -> OpRef {
        let t = &self.timing;
        let (kind, ns) = if program {
            self.counters.mapping_programs += u64::from(pages);
            (OpKind::Program, t.transfer_page_ns + t.program_page_ns)
        } else {
            self.counters.mapping_reads += u64::from(pages);
            (OpKind::Read, t.read_page_ns + t.transfer_page_ns)
        };
        let mut last = OpRef::Done(0);
        for i in 0..pages {
            self.charge(Op::Mapping, ns);
            let plane = self.planes_div.remainder(u64::from(first_plane) + u64::from(i)) as u32;
            last = self.engine.op(kind, plane, 0, OpRef::Done(0));
        }
        last
    }

    #[inline(always)]
    pub fn erase(&mut self, block: BlockId, source: Source) {
        self.counters.erases[source as usize] += 1;
        self.charge(Op::Erase, self.timing.erase_block_ns);
        let (plane, _) = self.at(self.ppn(block, 0));
        self.engine.op(OpKind::Erase, plane, 0, OpRef::Done(0));
        self.media.erase(block);
    }

    #[inline]
    #[must_use]
    pub fn oob(&self, ppn: Ppn) -> Option<Oob> {
        self.media.oob(ppn)
    }

    #[inline]
    #[must_use]
    pub fn lpn(&self, ppn: Ppn) -> Option<Lpn> {
        self.media.lpn(ppn)
    }

    #[inline]
    pub fn prefetch_block_oob(&self, block: BlockId) {
        self.media.prefetch_block_oob(block);
    }

    /// See `Media::block_lpns`.
    #[inline]
    pub fn block_lpns(&self, block: BlockId) -> Option<&[Lpn]> {
        self.media.block_lpns(block)
    }

    #[must_use]
    pub fn erase_count(&self, block: BlockId) -> u32 {
        self.media.erase_count(block)
    }
}
