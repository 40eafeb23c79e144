//! `FaultyMedia`: a wrapper around any `Media` that injects the faults real NAND has — failed
//! programs, failed erases, read errors and torn writes — each at a chosen operation ("the 17th
//! program fails") or with a probability per operation, seeded and deterministic (the
//! TigerBeetle idea: a run with faults is a pure function of the seed and the operations), so
//! that tests can show how every FTL and the store react. The reactions are in
//! `docs/FAULTS.md`.
//!
//! What each fault does, as the FTL sees it (the FTLs check no program or erase status: the
//! media's one error path is `take_error`, which fails the request during which a fault
//! happened):
//! - **Program** (a program, or the program half of a copy, whose status says "failed"): the
//!   page is consumed and the inner media programmed as asked, so the FTL's tables and the
//!   media's OOB agree; but the page's content is lost for the rest of the session: every read
//!   of it reports an error (`InvalidData`) until its block is erased, and a copy of it (the
//!   cleaner moving it) is as lost as its source. A restart reads the inner media, which holds
//!   the page as programmed: a write that failed may or may not survive it, as on any disk.
//! - **Erase**: the block is erased, but its cells are left unreliable (a bad block the FTL does
//!   not retire): every program into it fails, as above, until it is erased again without fault.
//! - **Read** (an uncorrectable read): that one read reports an error and returns zeros; the page
//!   itself is intact (the next read succeeds). A copy whose read fails programs a lost page.
//! - **Torn write** (a power cut in the middle of a program; the host never gets the
//!   acknowledgement): the inner media is left as the cut leaves it (`Media::tear`: the page's
//!   OOB does not verify) and receives nothing more — the session is over. The FTL goes on
//!   against a RAM copy of the metadata (so its own assertions hold) and every request from then
//!   on fails; the test drops the device and restarts from the inner media, as a restart after
//!   the power cut would.
//!
//! Every fault is reported (with its `io_kind`, `Other` unless set) on the request during which
//! it happens, and logged (`log`) with its operation index and page or block. Damage it leaves
//! is reported again whenever a read hits it. Never is data a fault touched returned as good.
//!
//! Operation indices count from 1 per kind: programs and copies count as programs, reads and
//! copies as reads, erases as erases. A probability draws once per operation of its kind from
//! `Prng::for_stream(seed, "faults")`.

use std::collections::BTreeMap;
use std::io::ErrorKind;
use std::sync::{Arc, Mutex, PoisonError};

use super::{BlockId, Checkpoint, CountingMedia, Lpn, Media, NvramEntry, Oob, Ppn};
use crate::error::MediaError;
use crate::flash::Geometry;
use crate::rng::Prng;

/// What goes wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FaultKind {
    /// A program (or a copy's program) fails: the page's content is lost.
    Program,
    /// An erase fails: programs into the block fail until it is erased again.
    Erase,
    /// A read (or a copy's read) fails once.
    Read,
    /// The power is cut in the middle of a program (or a copy's program).
    TornWrite,
}

/// When a fault fires.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Trigger {
    /// At the n-th operation of its kind (1-based).
    At(u64),
    /// At each operation of its kind with this probability.
    Probability(f64),
}

/// One fault to inject.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fault {
    pub kind: FaultKind,
    pub trigger: Trigger,
    /// The kind of the error reported (e.g. `StorageFull` to see a server map it to ENOSPC).
    pub io_kind: ErrorKind,
}

impl Fault {
    /// `kind` at the `n`-th operation of its kind (1-based).
    #[must_use]
    pub fn at(kind: FaultKind, n: u64) -> Self {
        assert!(n >= 1, "operation indices count from 1");
        Self { kind, trigger: Trigger::At(n), io_kind: ErrorKind::Other }
    }

    /// `kind` at each operation of its kind with probability `p`.
    #[must_use]
    pub fn with_probability(kind: FaultKind, p: f64) -> Self {
        assert!((0.0..=1.0).contains(&p), "a probability is in [0, 1], not {p}");
        Self { kind, trigger: Trigger::Probability(p), io_kind: ErrorKind::Other }
    }

    /// The same fault reporting errors of `io_kind`.
    #[must_use]
    pub fn io_kind(self, io_kind: ErrorKind) -> Self {
        Self { io_kind, ..self }
    }
}

/// A fault that fired.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Injected {
    pub kind: FaultKind,
    /// The operation's index among those of its kind (1-based).
    pub index: u64,
    /// The page (program, read, torn write) or block (erase) it hit.
    pub target: u32,
}

/// The session after a torn write: the inner media is left as the cut left it.
struct Cut {
    /// The metadata as the FTL believes it, which the session goes on with.
    shadow: CountingMedia,
    /// What every request fails with from now on.
    error: MediaError,
}

pub struct FaultyMedia<M: Media> {
    inner: M,
    faults: Vec<Fault>,
    rng: Prng,
    programs: u64,
    reads: u64,
    erases: u64,
    /// One bit per page: its content is lost (a failed program, a program into a weak block, a
    /// copy of a lost page or a copy whose read failed). Cleared by the block's erase.
    lost: Vec<u64>,
    /// Blocks whose last erase failed, with the error kind their programs report.
    weak: BTreeMap<BlockId, ErrorKind>,
    cut: Option<Cut>,
    error: Option<MediaError>,
    log: Arc<Mutex<Vec<Injected>>>,
}

impl<M: Media> FaultyMedia<M> {
    /// `inner` with no fault yet; `seed` seeds the probabilities.
    #[must_use]
    pub fn new(inner: M, seed: u64) -> Self {
        let g = *inner.geometry();
        Self {
            faults: Vec::new(),
            rng: Prng::for_stream(seed, "faults"),
            programs: 0,
            reads: 0,
            erases: 0,
            lost: vec![0; (g.physical_pages() as usize).div_ceil(64)],
            weak: BTreeMap::new(),
            cut: None,
            error: None,
            log: Arc::new(Mutex::new(Vec::new())),
            inner,
        }
    }

    /// Adds a fault (several may be given; where two fire at one operation, the first added
    /// is the one reported).
    #[must_use]
    pub fn with_fault(mut self, fault: Fault) -> Self {
        self.faults.push(fault);
        self
    }

    /// The faults that fired, in order (shared: it stays readable after the media moves into a
    /// device).
    #[must_use]
    pub fn log(&self) -> Arc<Mutex<Vec<Injected>>> {
        Arc::clone(&self.log)
    }

    /// Operations seen so far: (programs, reads, erases), copies counted in the first two.
    #[must_use]
    pub fn operations(&self) -> (u64, u64, u64) {
        (self.programs, self.reads, self.erases)
    }

    /// A torn write has cut the power: the inner media receives nothing more.
    #[must_use]
    pub fn is_cut(&self) -> bool {
        self.cut.is_some()
    }

    #[must_use]
    pub fn inner(&self) -> &M {
        &self.inner
    }

    /// The inner media (after a torn write: as the cut left it).
    #[must_use]
    pub fn into_inner(self) -> M {
        self.inner
    }

    /// The fault of `kind` that fires at its `index`-th operation, if any. Every probability
    /// fault of the kind draws, whichever fires, so one fault's draws never depend on another's.
    fn fires(&mut self, kind: FaultKind, index: u64) -> Option<Fault> {
        let mut hit = None;
        for f in self.faults.iter().filter(|f| f.kind == kind) {
            let fires = match f.trigger {
                Trigger::At(n) => n == index,
                Trigger::Probability(p) => self.rng.unit_f64() < p,
            };
            if fires && hit.is_none() {
                hit = Some(*f);
            }
        }
        hit
    }

    /// Logs a fault that fired and reports it.
    #[cold]
    fn inject(&mut self, fault: Fault, index: u64, target: u32, context: String) {
        let injected = Injected { kind: fault.kind, index, target };
        self.log.lock().unwrap_or_else(PoisonError::into_inner).push(injected);
        self.report(MediaError::new(fault.io_kind, format!("{context} (injected fault)")));
    }

    fn report(&mut self, error: MediaError) {
        self.error.get_or_insert(error);
    }

    fn is_lost(&self, ppn: Ppn) -> bool {
        self.lost[ppn.index() / 64] & (1 << (ppn.get() % 64)) != 0
    }

    fn set_lost(&mut self, ppn: Ppn) {
        self.lost[ppn.index() / 64] |= 1 << (ppn.get() % 64);
    }

    /// What a program of `ppn` leaves, once the inner media has it: `failed`, the fault that
    /// fired on it; `source_lost`, a copy of content that was already lost.
    fn programmed(&mut self, ppn: Ppn, index: u64, failed: Option<Fault>, source_lost: bool) {
        let block = self.inner.geometry().block_of(ppn);
        if let Some(f) = failed {
            self.set_lost(ppn);
            self.inject(f, index, ppn.get(), format!("program #{index} of page {ppn} failed"));
        } else if let Some(&kind) = self.weak.get(&block) {
            self.set_lost(ppn);
            self.report(MediaError::new(
                kind,
                format!("program #{index} of page {ppn} failed: block {block}'s erase had failed"),
            ));
        } else if source_lost {
            self.set_lost(ppn);
        }
    }

    /// A read of a page whose content is lost: zeros and an error, never the bytes.
    #[cold]
    fn read_lost(&mut self, ppn: Ppn, data: Option<&mut [u8]>) -> Oob {
        let oob = self.inner.read(ppn, None);
        if let Some(d) = data {
            d.fill(0);
        }
        self.report(MediaError::new(
            ErrorKind::InvalidData,
            format!("page {ppn} (LPN {}) is unreadable: a failed operation lost it", oob.lpn),
        ));
        oob
    }

    /// The power is cut in the middle of programming `ppn` (fault `fault`, program `index`).
    #[cold]
    fn tear(&mut self, ppn: Ppn, oob: Oob, index: u64, fault: Fault) {
        let mut shadow = CountingMedia::snapshot(&self.inner);
        self.inner.tear(ppn, oob);
        // The FTL believes the page programmed: so does the metadata it goes on with.
        shadow.program(ppn, oob, None);
        let injected = Injected { kind: FaultKind::TornWrite, index, target: ppn.get() };
        self.log.lock().unwrap_or_else(PoisonError::into_inner).push(injected);
        let error = MediaError::new(
            fault.io_kind,
            format!(
                "power cut during program #{index} of page {ppn} (injected torn write): the \
                 media keeps what it held at the cut; restart from it"
            ),
        );
        self.cut = Some(Cut { shadow, error });
    }

    /// The media the FTL's metadata queries go to: the shadow after a cut.
    fn meta(&self) -> &dyn Media {
        match &self.cut {
            Some(c) => &c.shadow,
            None => &self.inner,
        }
    }
}

impl<M: Media> Media for FaultyMedia<M> {
    fn geometry(&self) -> &Geometry {
        self.inner.geometry()
    }

    fn program(&mut self, ppn: Ppn, oob: Oob, data: Option<&[u8]>) {
        if let Some(c) = &mut self.cut {
            c.shadow.program(ppn, oob, None);
            return;
        }
        self.programs += 1;
        let n = self.programs;
        if let Some(f) = self.fires(FaultKind::TornWrite, n) {
            self.tear(ppn, oob, n, f);
            return;
        }
        let failed = self.fires(FaultKind::Program, n);
        self.inner.program(ppn, oob, data);
        self.programmed(ppn, n, failed, false);
    }

    fn read(&mut self, ppn: Ppn, data: Option<&mut [u8]>) -> Oob {
        if let Some(c) = &mut self.cut {
            if let Some(d) = data {
                d.fill(0);
            }
            return c.shadow.read(ppn, None);
        }
        self.reads += 1;
        let n = self.reads;
        if let Some(f) = self.fires(FaultKind::Read, n) {
            let oob = self.inner.read(ppn, None);
            if let Some(d) = data {
                d.fill(0);
            }
            self.inject(f, n, ppn.get(), format!("read #{n} of page {ppn} failed"));
            return oob;
        }
        if self.is_lost(ppn) {
            return self.read_lost(ppn, data);
        }
        self.inner.read(ppn, data)
    }

    fn copy(&mut self, from: Ppn, to: Ppn, oob: Oob) {
        if let Some(c) = &mut self.cut {
            c.shadow.copy(from, to, oob);
            return;
        }
        self.reads += 1;
        self.programs += 1;
        let (read_index, program_index) = (self.reads, self.programs);
        if let Some(f) = self.fires(FaultKind::TornWrite, program_index) {
            self.tear(to, oob, program_index, f);
            return;
        }
        let read_failed = self.fires(FaultKind::Read, read_index);
        let program_failed = self.fires(FaultKind::Program, program_index);
        self.inner.copy(from, to, oob);
        if let Some(f) = read_failed {
            let what = format!("read #{read_index} of page {from} (copy to page {to}) failed");
            self.inject(f, read_index, from.get(), what);
        }
        let source_lost = read_failed.is_some() || self.is_lost(from);
        self.programmed(to, program_index, program_failed, source_lost);
    }

    fn oob(&self, ppn: Ppn) -> Option<Oob> {
        self.meta().oob(ppn)
    }

    fn lpn(&self, ppn: Ppn) -> Option<Lpn> {
        self.meta().lpn(ppn)
    }

    fn prefetch_block_oob(&self, block: BlockId) {
        self.meta().prefetch_block_oob(block);
    }

    fn erase(&mut self, block: BlockId) {
        if let Some(c) = &mut self.cut {
            c.shadow.erase(block);
            return;
        }
        self.erases += 1;
        let n = self.erases;
        let failed = self.fires(FaultKind::Erase, n);
        self.inner.erase(block);
        for ppn in self.inner.geometry().pages_of(block) {
            self.lost[ppn.index() / 64] &= !(1 << (ppn.get() % 64));
        }
        match failed {
            Some(f) => {
                self.weak.insert(block, f.io_kind);
                self.inject(f, n, block.get(), format!("erase #{n} of block {block} failed"));
            }
            None => {
                self.weak.remove(&block);
            }
        }
    }

    fn tear(&mut self, ppn: Ppn, oob: Oob) {
        if self.cut.is_none() {
            self.inner.tear(ppn, oob);
        }
    }

    fn erase_count(&self, block: BlockId) -> u32 {
        self.meta().erase_count(block)
    }

    fn programmed_pages(&self, block: BlockId) -> u32 {
        self.meta().programmed_pages(block)
    }

    fn memory_bytes(&self) -> u64 {
        let shadow = self.cut.as_ref().map_or(0, |c| c.shadow.memory_bytes());
        self.inner.memory_bytes() + self.lost.len() as u64 * 8 + shadow
    }

    fn sync(&mut self) -> Result<(), MediaError> {
        if let Some(c) = &self.cut {
            return Err(c.error.clone());
        }
        match self.error.take() {
            Some(e) => Err(e),
            None => self.inner.sync(),
        }
    }

    fn write_checkpoint(&mut self, checkpoint: &Checkpoint<'_>) -> Result<(), MediaError> {
        match &self.cut {
            Some(c) => Err(c.error.clone()),
            None => self.inner.write_checkpoint(checkpoint),
        }
    }

    fn record_clean_stop(&mut self) -> Result<(), MediaError> {
        if let Some(c) = &self.cut {
            return Err(c.error.clone());
        }
        match self.error.take() {
            Some(e) => Err(e),
            None => self.inner.record_clean_stop(),
        }
    }

    /// After a cut, every call: the drive is gone until it is restarted.
    fn take_error(&mut self) -> Option<MediaError> {
        if let Some(c) = &self.cut {
            return Some(c.error.clone());
        }
        self.error.take().or_else(|| self.inner.take_error())
    }

    fn report_error(&mut self, error: MediaError) {
        if self.cut.is_none() {
            self.report(error);
        }
    }

    fn nvram_pages(&self) -> u32 {
        self.inner.nvram_pages()
    }

    /// After a cut NVRAM writes are dropped too: nothing reaches the inner media.
    fn nvram_write(&mut self, slot: u32, lpn: Lpn, seq: u64, data: Option<&[u8]>) {
        if self.cut.is_none() {
            self.inner.nvram_write(slot, lpn, seq, data);
        }
    }

    fn nvram_poison(&mut self, slot: u32, lpn: Lpn, seq: u64) {
        if self.cut.is_none() {
            self.inner.nvram_poison(slot, lpn, seq);
        }
    }

    fn take_nvram_entries(&mut self) -> Vec<NvramEntry> {
        self.inner.take_nvram_entries()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geometry() -> Geometry {
        Geometry {
            page_size_bytes: 512,
            sector_size_bytes: 512,
            pages_per_block: 4,
            blocks: 4,
            logical_pages: 8,
        }
    }

    fn oob(lpn: u32, seq: u64) -> Oob {
        Oob { lpn: Lpn::new(lpn), seq, region: 0 }
    }

    fn p(n: u32) -> Ppn {
        Ppn::new(n)
    }

    fn some_lpn(n: u32) -> Option<Lpn> {
        Some(Lpn::new(n))
    }

    #[test]
    fn the_nth_program_fails_and_its_page_reads_as_an_error_until_erased() {
        let mut m = FaultyMedia::new(CountingMedia::new(geometry()), 1)
            .with_fault(Fault::at(FaultKind::Program, 2));
        m.program(p(0), oob(0, 1), None);
        assert_eq!(m.take_error(), None);
        m.program(p(1), oob(1, 2), None);
        let e = m.take_error().expect("program #2 fails");
        assert_eq!(e.kind(), ErrorKind::Other);
        assert!(e.to_string().contains("program #2 of page 1"), "{e}");
        // Page 1 is consumed (its OOB names LPN 1) but lost; page 0 is intact.
        assert_eq!(m.lpn(p(1)), some_lpn(1));
        m.read(p(0), None);
        assert_eq!(m.take_error(), None);
        let mut buf = [0xEEu8; 512];
        m.read(p(1), Some(&mut buf));
        assert_eq!(m.take_error().map(|e| e.kind()), Some(ErrorKind::InvalidData));
        assert!(buf.iter().all(|&b| b == 0));
        // A copy of the lost page is lost too, silently: the damage follows the data.
        m.copy(p(1), p(2), oob(1, 3));
        assert_eq!(m.take_error(), None);
        m.read(p(2), None);
        assert!(m.take_error().is_some());
        m.erase(BlockId::new(0));
        m.program(p(0), oob(1, 4), None);
        m.read(p(0), None);
        assert_eq!(m.take_error(), None);
        let log = m.log();
        let log = log.lock().unwrap();
        assert_eq!(*log, [Injected { kind: FaultKind::Program, index: 2, target: 1 }]);
        assert_eq!(m.operations(), (4, 5, 1));
    }

    #[test]
    fn a_failed_erase_fails_every_program_into_its_block_until_the_next_erase() {
        let mut m = FaultyMedia::new(CountingMedia::new(geometry()), 1)
            .with_fault(Fault::at(FaultKind::Erase, 1).io_kind(ErrorKind::StorageFull));
        m.erase(BlockId::new(1));
        assert_eq!(m.take_error().map(|e| e.kind()), Some(ErrorKind::StorageFull));
        m.program(p(4), oob(0, 1), None);
        assert_eq!(m.take_error().map(|e| e.kind()), Some(ErrorKind::StorageFull));
        m.program(p(0), oob(1, 2), None);
        assert_eq!(m.take_error(), None);
        m.erase(BlockId::new(1));
        assert_eq!(m.take_error(), None);
        m.program(p(4), oob(0, 3), None);
        assert_eq!(m.take_error(), None);
    }

    #[test]
    fn a_read_fault_fails_one_read_only() {
        let mut m = FaultyMedia::new(CountingMedia::new(geometry()), 1)
            .with_fault(Fault::at(FaultKind::Read, 1));
        m.program(p(0), oob(0, 1), None);
        m.read(p(0), None);
        assert!(m.take_error().is_some());
        m.read(p(0), None);
        assert_eq!(m.take_error(), None);
    }

    #[test]
    fn a_torn_write_cuts_the_power_the_inner_media_keeps_the_state_at_the_cut() {
        let mut m = FaultyMedia::new(CountingMedia::new(geometry()), 1)
            .with_fault(Fault::at(FaultKind::TornWrite, 2));
        m.program(p(0), oob(0, 1), None);
        m.program(p(1), oob(1, 2), None);
        assert!(m.is_cut());
        // The session goes on against the shadow: the FTL's view holds page 1 programmed.
        assert_eq!(m.lpn(p(1)), some_lpn(1));
        m.program(p(2), oob(2, 3), None);
        m.erase(BlockId::new(3));
        assert!(m.take_error().is_some());
        assert!(m.take_error().is_some(), "every request fails after the cut");
        assert!(m.sync().is_err());
        let inner = m.into_inner();
        // The counting media's `tear` writes nothing: the inner media stops at page 0.
        assert_eq!((inner.lpn(p(0)), inner.lpn(p(1)), inner.lpn(p(2))), (some_lpn(0), None, None));
        assert_eq!(inner.erase_count(BlockId::new(3)), 0);
    }

    #[test]
    fn probabilities_are_seeded_and_deterministic() {
        let run = |seed: u64| {
            let mut m = FaultyMedia::new(CountingMedia::new(geometry()), seed)
                .with_fault(Fault::with_probability(FaultKind::Read, 0.5));
            m.program(p(0), oob(0, 1), None);
            (0..64)
                .map(|_| {
                    m.read(p(0), None);
                    m.take_error().is_some()
                })
                .collect::<Vec<bool>>()
        };
        assert_eq!(run(7), run(7));
        assert_ne!(run(7), run(8));
        let failures = run(7).iter().filter(|&&f| f).count();
        assert!((16..=48).contains(&failures), "{failures} of 64 at p = 0.5");
    }
}
