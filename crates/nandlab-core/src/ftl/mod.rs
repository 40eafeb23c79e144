//! Flash translation layers behind one trait. The device (request level) splits host requests
//! into pages and calls an `Ftl`; the FTL owns the `Flash` it programs. Later FTL kinds (hybrid
//! BAST/SAST/FAST) are new modules behind the same trait.

pub mod block_table;
mod page;

pub use page::PageFtl;

use crate::config::Geometry;
use crate::flash::{Flash, Lpn};

/// Counters an FTL keeps about its own work (flash operation counts live in `Flash`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FtlCounters {
    /// Victim blocks cleaned.
    pub gc_victims: u64,
    /// Victim searches that hit the scan limit (approximate choices).
    pub victim_searches_capped: u64,
    /// Valid pages found in victims (= pages copied by the cleaner).
    pub gc_valid_pages: u64,
}

pub trait Ftl: Send {
    fn name(&self) -> &'static str;
    fn geometry(&self) -> &Geometry;
    /// Writes one whole logical page.
    fn write_page(&mut self, lpn: Lpn, now_ns: u64, data: Option<&[u8]>);
    /// Reads one logical page; returns false (and reads nothing from flash) if it is unmapped.
    fn read_page(&mut self, lpn: Lpn, now_ns: u64, data: Option<&mut [u8]>) -> bool;
    /// Discards one logical page.
    fn trim_page(&mut self, lpn: Lpn, now_ns: u64);
    fn is_mapped(&self, lpn: Lpn) -> bool;
    /// Where a logical page lives: its physical page and region (for inspection and tests).
    fn locate(&self, lpn: Lpn) -> Option<(crate::flash::Ppn, u8)>;
    fn flash(&self) -> &Flash;
    fn flash_mut(&mut self) -> &mut Flash;
    fn counters(&self) -> FtlCounters;
    /// Erase count of every block (index = block).
    fn erase_counts(&self) -> &[u32];
    /// Bytes of RAM used by the FTL's tables (translation, region, lookup tables, indexes).
    fn table_memory_bytes(&self) -> u64;
    /// Cache hint, first stage: a write or read of `lpn` is coming soon (a few requests ahead).
    fn prefetch_translation(&self, _lpn: Lpn) {}
    /// Cache hint, second stage (closer): touch what the access will need after translation.
    fn prefetch_mapped(&self, _lpn: Lpn) {}
    /// Makes all acknowledged writes durable on the media.
    fn sync(&mut self) -> Result<(), crate::error::MediaError> {
        self.flash_mut().media_mut().sync()
    }
    /// Writes a checkpoint of the tables to the media (see `flash::Checkpoint`).
    fn checkpoint(&mut self, _now_ns: u64) -> Result<(), crate::error::MediaError> {
        Err(crate::error::MediaError("this FTL does not write checkpoints".into()))
    }
    /// Full invariant check (O(pages)); panics on a violation.
    fn check(&self);
}
