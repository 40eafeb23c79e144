//! The request-level device: the one API that trace replay, synthetic workloads, the NBD
//! virtual drive and the benchmarks all drive.
//!
//! A request — a read, write, trim or flush of a byte range arriving at a simulated time — is
//! *dispatched* at its arrival: split into pages, a write that covers part of a page merged
//! with the page's old content (read-modify-write: one flash read, which the page's program
//! waits for), and handed to the FTL, whose tables change at once. Every flash operation the
//! FTL issues is timed by the sim-engine (`engine`: dies and buses working in parallel, the
//! scheduler's queues); the request completes when its last operation ends, plus the RAM time
//! of the buffer and RAM region accesses it made. On a device with one die this is the
//! serialized timing of earlier versions: a request starts when it arrives or the flash
//! finishes what came before, and takes the sum of its operations' times.
//!
//! A request enters in one way, `dispatch` of a `Submission` that says its payload, its
//! further pieces and who takes its completion (`Wait`): the caller at once (`Wait::Now`, the
//! completion returned, queued operations timed first), the closed loop of queue depths above
//! one (`Wait::InFlight`, collected with `wait_one`), or nobody (`Wait::Never`, open-loop
//! arrivals that time passes: `advance_to`, `drain`; see `inflight`). Between requests, on an
//! idle device, background cleaning runs when `ftl.gc_mode = "background"`.
//!
//! An optional RAM buffer (`buffer/`, `[buffer]` in the config) sits between the page split
//! and the FTL: every whole-page read, write and trim goes through it.

mod inflight;

use inflight::{InFlight, Track, Waiting};

use crate::buffer::{Buffer, BufferCounters, FlushReason};
use crate::engine::{Class, EngineStats, OpRef, Outcome};
use crate::error::RequestError;
use crate::fastdiv::Divisor;
use crate::flash::Geometry;
use crate::flash::{FlashCounters, Lpn, Op, Source};
use crate::ftl::ram_region::RamWriteBack;
use crate::ftl::{Ftl, FtlCounters, FtlRecovery, RecycleKind};
use crate::metrics::{
    self, ExecTime, FlashTime, HostCounters, LatencyHistogram, LifetimeMetrics, Metrics,
    ParallelMetrics, RamRegionMetrics, WearSample, WearStats, WearSummary,
};
use crate::request::{Request, RequestKind};

/// A request admitted by `Device::begin`, not yet completed.
#[derive(Clone, Copy)]
struct Started {
    arrival_ns: u64,
    before: Effects,
}

/// How a dispatched request stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dispatched {
    /// Every operation is timed: the request completes as given.
    Timed(Completion),
    /// Some operations wait in the scheduler's queues: the request completes later (`wait_one`,
    /// `advance_to`, `drain` account for it).
    Queued,
}

impl Dispatched {
    /// The completion of a request dispatched with `Wait::Now`, which is always timed.
    ///
    /// # Panics
    /// For a request left in flight (`Wait::InFlight`, `Wait::Never`) whose operations wait in
    /// the queues: its completion comes later (a bug of the caller).
    #[must_use]
    pub fn completion(self) -> Completion {
        match self {
            Self::Timed(c) => c,
            Self::Queued => unreachable!("only Wait::Now guarantees a completion at dispatch"),
        }
    }
}

/// Who takes a dispatched request's completion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// The caller, at once: `dispatch` returns `Dispatched::Timed` (the engine runs up to the
    /// request's end when its operations were queued). Requests one at a time; the served
    /// drive (whose replies wait for their predicted completion).
    Now,
    /// The closed loop: in flight until `wait_one` takes its completion (queue depths above
    /// one).
    InFlight,
    /// Nobody: an open-loop arrival that time passes (`advance_to`, `drain`).
    Never,
}

/// One host request for `Device::dispatch`: the request, its payload, the further byte ranges
/// it is made of, and who takes its completion. `Submission::new(&req)` is a request without
/// payload whose caller waits; the builder methods say the rest.
#[derive(Debug)]
pub struct Submission<'a> {
    request: Request,
    io: Io<'a>,
    more: &'a [(u64, u64)],
    wait: Wait,
}

impl<'a> Submission<'a> {
    /// `request`, without payload (simulation only), its completion taken at once.
    #[must_use]
    pub fn new(request: &Request) -> Self {
        Self { request: *request, io: Io::None, more: &[], wait: Wait::Now }
    }

    /// Moves the payload to or from the media (its length must be the request's).
    #[must_use]
    pub fn io(mut self, io: Io<'a>) -> Self {
        self.io = io;
        self
    }

    /// More byte ranges of the same host request, all of its kind, arriving together: a trace
    /// request that address fitting split (`WorkItem::Continue`). The request counts as **one**
    /// host request with one latency, to the end of its last piece, while its bytes and pages
    /// are those of all pieces. No payload.
    #[must_use]
    pub fn pieces(mut self, more: &'a [(u64, u64)]) -> Self {
        self.more = more;
        self
    }

    /// Who takes the completion (default `Wait::Now`).
    #[must_use]
    pub fn wait(mut self, wait: Wait) -> Self {
        self.wait = wait;
        self
    }
}

/// What happened to one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    /// When the request arrived (closed-loop requests arrive when the device becomes idle).
    pub arrival_ns: u64,
    /// When its first flash operation started (its arrival if it had none): the time before is
    /// queueing delay.
    pub start_ns: u64,
    pub complete_ns: u64,
    /// `complete_ns - start_ns`: from its first flash operation to its end, RAM time included.
    pub service_ns: u64,
    /// Flash operations the request caused (its own and the cleaning it triggered); all zero
    /// while the device does not track them (`Device::track_effects`: off during
    /// `nandlab_core::run`, which reads no completion).
    pub effects: Effects,
}

/// Flash operations caused by one request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Effects {
    pub flash_read_pages: u64,
    pub flash_program_pages: u64,
    /// Of the programs, pages the cleaner copied.
    pub gc_copied_pages: u64,
    pub erases: u64,
}

impl Effects {
    fn of(c: &FlashCounters) -> Self {
        Self {
            flash_read_pages: FlashCounters::total(&c.reads) + c.mapping_reads,
            flash_program_pages: FlashCounters::total(&c.programs) + c.mapping_programs,
            gc_copied_pages: FlashCounters::total(&c.copies),
            erases: FlashCounters::total(&c.erases),
        }
    }

    fn since(self, before: Self) -> Self {
        Self {
            flash_read_pages: self.flash_read_pages - before.flash_read_pages,
            flash_program_pages: self.flash_program_pages - before.flash_program_pages,
            gc_copied_pages: self.gc_copied_pages - before.gc_copied_pages,
            erases: self.erases - before.erases,
        }
    }
}

impl Completion {
    #[must_use]
    pub fn latency_ns(&self) -> u64 {
        self.complete_ns - self.arrival_ns
    }
}

#[derive(Clone, Debug, Default)]
struct Snapshot {
    host: HostCounters,
    flash: FlashCounters,
    ftl: FtlCounters,
    buffer: BufferCounters,
    engine: EngineStats,
    time_ns: u64,
}

/// The payload side of a request: nothing (simulation only), the bytes to write, or the
/// buffer to read into. Lengths must equal the request's length.
#[derive(Debug)]
pub enum Io<'a> {
    None,
    Write(&'a [u8]),
    Read(&'a mut [u8]),
}

pub struct Device {
    ftl: Box<dyn Ftl>,
    /// The RAM buffer in front of the FTL, if the config asks for one.
    buffer: Option<Box<dyn Buffer>>,
    /// One page of scratch space for merging partial-page writes and splitting reads.
    scratch: Vec<u8>,
    geometry: Geometry,
    /// Divides by the page size.
    page: Divisor,
    /// The latest completion of anything the device did (host requests, syncs, write-backs).
    last_complete_ns: u64,
    last_arrival_ns: u64,
    host: HostCounters,
    read_latency: LatencyHistogram,
    write_latency: LatencyHistogram,
    /// Queueing delay (arrival to first flash operation) of reads and writes.
    read_queue: LatencyHistogram,
    write_queue: LatencyHistogram,
    window_start: Snapshot,
    /// Counts measurement windows, so a request completing after a window started is measured
    /// only if it was dispatched in it.
    window: u32,
    lifetime: Lifetime,
    recovery: FtlRecovery,
    inflight: InFlight,
    /// Background cleaning is on (`ftl.gc_mode = "background"`).
    background: bool,
    /// Driven in real time (a served drive, `set_real_time`).
    real_time: bool,
    /// Cache hints pay off (the FTL's tables are large, or a buffer's index may be).
    prefetch: bool,
    /// Counts only (`run.timing = "off"`, `count_only`).
    counting: bool,
    /// Completions carry their `Effects` (two snapshots of the flash counters per request).
    effects: bool,
}

impl Device {
    /// What the last `recover` repaired or completed (all zero for a new device).
    #[must_use]
    pub fn recovery(&self) -> FtlRecovery {
        self.recovery
    }

    /// Writes a checkpoint of the FTL's tables to the media (LFSS fast mount), stamped with the
    /// device's current simulated time.
    pub fn checkpoint(&mut self) -> Result<(), crate::error::MediaError> {
        let now = self.now_ns();
        self.ftl.checkpoint(now)
    }

    /// Makes every acknowledged write durable (what a host FLUSH does): writes the buffer's
    /// dirty pages back, then syncs the media. The flash time this takes is charged to the
    /// device's clock (`now_ns` afterwards is when it ends).
    pub fn sync(&mut self) -> Result<(), crate::error::MediaError> {
        self.sync_until().map(|_| ())
    }

    /// `sync`, returning when its write-back ends (`None`: there was nothing to write back).
    pub fn sync_until(&mut self) -> Result<Option<u64>, crate::error::MediaError> {
        let end = self.write_back(FlushReason::Host);
        self.ftl.sync().map(|()| end)
    }

    /// Ends a run: the buffer's dirty pages are written back (counted as
    /// `buffer.final_written_pages`), then the RAM region's pages (`final_write_back_pages`),
    /// so the metrics include what RAM only deferred; then everything queued is timed.
    pub fn finish(&mut self) {
        self.drain();
        self.write_back(FlushReason::EndOfRun);
        self.flush_ram_region(RamWriteBack::EndOfRun);
        self.drain();
    }

    /// Ends the prefill (`WorkItem::PrefillDone`): what the buffer and the RAM region hold is
    /// written back, as at the end of a run, so the workload starts with the prefill on flash.
    pub fn end_prefill(&mut self) {
        self.finish();
    }

    /// Shuts the device down (the served drive stops): the buffer and the RAM region are
    /// written back (`shutdown_write_back_pages`) and the media synced, so the image holds
    /// everything. A host FLUSH does not empty the RAM region: it is battery-backed.
    pub fn shutdown(&mut self) -> Result<(), crate::error::MediaError> {
        self.write_back(FlushReason::Host);
        self.flush_ram_region(RamWriteBack::Shutdown);
        self.ftl.sync()
    }

    /// Records on the media that the device stopped cleanly (after `shutdown` and the last
    /// checkpoint): the next start-up then takes any unreadable metadata as damage, never as
    /// a write a crash interrupted (see `Media::record_clean_stop`).
    pub fn record_clean_stop(&mut self) -> Result<(), crate::error::MediaError> {
        self.ftl.flash_mut().media_mut().record_clean_stop()
    }

    fn flush_ram_region(&mut self, reason: RamWriteBack) {
        self.device_work(|d, now| {
            d.ftl.flush_ram_region(now, reason);
        });
    }

    /// Writes the buffer's dirty pages back; returns when that ends (`None` without a buffer).
    fn write_back(&mut self, reason: FlushReason) -> Option<u64> {
        self.buffer.as_ref()?;
        Some(self.device_work(|d, now| {
            if let Some(b) = &mut d.buffer {
                b.flush(d.ftl.as_mut(), now, reason);
            }
        }))
    }

    /// Work of the device's own (a sync's or shutdown's write-back, the end of a run), as a
    /// request starting now; the device's clock moves to its end, which is returned.
    fn device_work(&mut self, work: impl FnOnce(&mut Self, u64)) -> u64 {
        let now = self.now_ns().max(self.ftl.flash().engine().now_ns());
        self.advance_to(now);
        let now = self.now_ns().max(self.ftl.flash().engine().now_ns());
        let tag = self.ftl.flash_mut().engine_mut().begin(Class::HostWrite, now);
        work(self, now);
        let ram = self.take_ram_ns();
        let end = match self.ftl.flash_mut().engine_mut().end() {
            Outcome::Timed { end_ns, .. } => end_ns,
            Outcome::Queued { tag: t } => {
                debug_assert_eq!(t, tag);
                let mut w = Waiting::device(now);
                w.track = self.wait_track();
                self.inflight.expect(t, w);
                self.completion_of(t).complete_ns
            }
        };
        let end = end.max(now).saturating_add(ram);
        self.last_complete_ns = self.last_complete_ns.max(end);
        end
    }

    /// Installs (or removes) a RAM buffer; an existing one must be empty.
    pub(crate) fn set_buffer(&mut self, buffer: Option<Box<dyn Buffer>>) {
        assert!(self.buffer.as_ref().is_none_or(|b| b.is_empty()), "replacing a non-empty buffer");
        self.buffer = buffer;
        if let Some(b) = &mut self.buffer {
            b.attach(self.ftl.as_ref());
        }
        self.prefetch = self.buffer.is_some() || self.ftl.takes_prefetch_hints();
    }

    /// Removes the RAM buffer; it must hold no dirty page (call `sync` first).
    pub fn take_buffer(&mut self) -> Option<Box<dyn Buffer>> {
        let b = self.buffer.take();
        assert!(b.as_ref().is_none_or(|b| !b.has_dirty()), "taking a buffer with dirty pages");
        b
    }

    #[must_use]
    pub fn buffer(&self) -> Option<&dyn Buffer> {
        self.buffer.as_deref()
    }

    #[must_use]
    pub(crate) fn with_ftl(ftl: Box<dyn Ftl>) -> Self {
        let geometry = *ftl.geometry();
        let prefetch = ftl.takes_prefetch_hints();
        Self {
            ftl,
            buffer: None,
            scratch: vec![0; geometry.page_size_bytes as usize],
            geometry,
            page: Divisor::new(geometry.page_size_bytes),
            last_complete_ns: 0,
            last_arrival_ns: 0,
            host: HostCounters::default(),
            read_latency: LatencyHistogram::default(),
            write_latency: LatencyHistogram::default(),
            read_queue: LatencyHistogram::default(),
            write_queue: LatencyHistogram::default(),
            window_start: Snapshot::default(),
            window: 0,
            lifetime: Lifetime::default(),
            recovery: FtlRecovery::default(),
            inflight: InFlight::default(),
            background: false,
            real_time: false,
            prefetch,
            counting: false,
            effects: true,
        }
    }

    /// Drives the device in real time (a served drive): requests arrive as the host sends
    /// them, so the engine must never run ahead of the arrivals. `Wait::Now` then does not wait
    /// for a request whose operations are queued: its completion is *predicted* by timing the
    /// queued operations on a copy of the engine as if nothing else arrived (exact under FIFO
    /// scheduling on dies that do not share a bus; a later request's transfer may take a
    /// shared bus slot first, or a later read pass a queued write under `read-priority`), and
    /// the engine times them for real as later arrivals move simulated time on.
    pub fn set_real_time(&mut self, on: bool) {
        self.real_time = on;
    }

    /// Who takes the completion of a request someone waits for (`Wait::Now`, the device's own
    /// work): in real time, nobody — its completion is predicted (`set_real_time`).
    fn wait_track(&self) -> Track {
        if self.real_time {
            Track::Open
        } else {
            Track::Wait
        }
    }

    /// Turns background cleaning on: on an idle device, the FTL cleans while it wants to
    /// (`Ftl::wants_background_clean`), its operations ranked last by the scheduler.
    pub(crate) fn set_background_cleaning(&mut self, on: bool) {
        self.background = on;
    }

    /// A device around an FTL whose tables were rebuilt from the media (`assemble`'s
    /// `Device::recover`), resuming at simulated time `now_ns` (its engine started there:
    /// `Engine::start_at`). Work recovery did on the flash (sealing, repair merges,
    /// write-backs) delays the first request like any background work.
    #[must_use]
    pub(crate) fn resumed(mut ftl: Box<dyn Ftl>, recovery: FtlRecovery, now_ns: u64) -> Self {
        let ram_ns = ftl.flash_mut().take_ram_ns();
        let horizon = ftl.flash().engine().horizon_ns();
        let mut device = Self::with_ftl(ftl);
        device.recovery = recovery;
        device.last_complete_ns = now_ns.max(horizon).saturating_add(ram_ns);
        device.last_arrival_ns = now_ns;
        device
    }

    #[must_use]
    pub fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    #[must_use]
    pub fn ftl(&self) -> &dyn Ftl {
        self.ftl.as_ref()
    }

    /// The device's clock: the later of the last arrival and the last completion known (when
    /// a closed-loop request issued now arrives; for one request at a time, when the flash
    /// became idle).
    #[must_use]
    pub fn now_ns(&self) -> u64 {
        self.last_complete_ns.max(self.last_arrival_ns)
    }

    /// Arrival time of the last request dispatched.
    #[must_use]
    pub fn last_arrival_ns(&self) -> u64 {
        self.last_arrival_ns
    }

    /// Pages `[first, end)` a byte range touches.
    #[must_use]
    pub fn page_range(&self, offset_bytes: u64, length_bytes: u64) -> (u64, u64) {
        (self.page.quotient(offset_bytes), self.page.div_ceil(offset_bytes + length_bytes))
    }

    fn check_range(&self, req: &Request) -> Result<(), RequestError> {
        let capacity_bytes = self.geometry.logical_bytes();
        let end = req.offset_bytes.checked_add(req.length_bytes);
        if end.is_none_or(|e| e > capacity_bytes) {
            return Err(RequestError::OutOfRange {
                offset_bytes: req.offset_bytes,
                length_bytes: req.length_bytes,
                capacity_bytes,
            });
        }
        Ok(())
    }

    /// Cache hint for a request a few steps ahead (first stage: translation entries, and the
    /// buffer's index cell).
    #[inline]
    pub fn prefetch_far(&self, req: &Request) {
        if !self.prefetch {
            return;
        }
        match &self.buffer {
            None => self.prefetch_pages(req, |ftl, lpn| ftl.prefetch_translation(lpn)),
            Some(b) => {
                // A buffered write reaches the FTL only as some later victim (which the buffer
                // prefetches itself): only reads may go to the FTL now.
                let read = matches!(req.kind, RequestKind::Read);
                self.prefetch_pages(req, |ftl, lpn| {
                    b.prefetch(lpn, false);
                    if read {
                        ftl.prefetch_translation(lpn);
                    }
                });
            }
        }
    }

    /// Cache hint for a request about to be served (second stage: what translation points at).
    #[inline]
    pub fn prefetch_near(&self, req: &Request) {
        if !self.prefetch {
            return;
        }
        match &self.buffer {
            None => self.prefetch_pages(req, |ftl, lpn| ftl.prefetch_mapped(lpn)),
            Some(b) => {
                let read = matches!(req.kind, RequestKind::Read);
                self.prefetch_pages(req, |ftl, lpn| {
                    b.prefetch(lpn, true);
                    if read {
                        ftl.prefetch_mapped(lpn);
                    }
                });
            }
        }
    }

    #[inline]
    fn prefetch_pages(&self, req: &Request, mut f: impl FnMut(&dyn Ftl, Lpn)) {
        if matches!(req.kind, RequestKind::Flush) {
            return;
        }
        let first = self.page.quotient(req.offset_bytes);
        // Long requests are sequential: the hardware prefetcher handles them after a few pages.
        let end =
            self.page.div_ceil(req.offset_bytes.saturating_add(req.length_bytes)).min(first + 4);
        for lpn in first..end.min(self.geometry.logical_pages) {
            f(self.ftl.as_ref(), Lpn::from_u64(lpn));
        }
    }

    /// The one way a host request enters the device: serves `s` (see `Submission`; the
    /// module doc for timing). With `Wait::Now` the result is `Dispatched::Timed` with the
    /// request's completion (operations the scheduler queued are timed first: the device's
    /// engine runs up to the request's end); otherwise the request may stay in flight
    /// (`wait_one`, `advance_to`, `drain`).
    #[inline]
    pub fn dispatch(&mut self, s: Submission<'_>) -> Result<Dispatched, RequestError> {
        let track = match s.wait {
            Wait::Now => self.wait_track(),
            Wait::InFlight => Track::Closed,
            Wait::Never => Track::Open,
        };
        match (self.dispatch_inner(&s.request, s.io, s.more, track)?, s.wait) {
            ((Dispatched::Queued, tag), Wait::Now) => {
                Ok(Dispatched::Timed(self.completion_of(tag)))
            }
            ((d, _), _) => Ok(d),
        }
    }

    #[inline(always)]
    fn dispatch_inner(
        &mut self,
        req: &Request,
        io: Io<'_>,
        more: &[(u64, u64)],
        track: Track,
    ) -> Result<(Dispatched, u64), RequestError> {
        self.check_range(req)?;
        let got = match &io {
            Io::None => req.length_bytes,
            Io::Write(d) => d.len() as u64,
            Io::Read(d) => d.len() as u64,
        };
        let kind_matches = matches!(
            (&io, req.kind),
            (Io::None, _) | (Io::Write(_), RequestKind::Write) | (Io::Read(_), RequestKind::Read)
        );
        assert!(kind_matches, "payload direction does not match the request kind");
        assert!(more.is_empty() || matches!(io, Io::None), "pieces of a request carry no payload");
        if got != req.length_bytes {
            return Err(RequestError::PayloadLength {
                expected_bytes: req.length_bytes,
                got_bytes: got,
            });
        }
        for &(offset_bytes, length_bytes) in more {
            self.check_range(&Request { offset_bytes, length_bytes, ..*req })?;
        }
        if self.counting {
            return self.dispatch_counted(req, io, more);
        }
        let (started, tag) = self.begin(req)?;
        let served = self.serve_pieces(req, io, more, started.arrival_ns);
        self.complete(req.kind, started, tag, served, track)
    }

    /// The flash and buffer work of a request and of the further byte ranges it came with
    /// (`Submission::pieces`, which carry no payload), stopping at the first that fails.
    #[inline(always)]
    fn serve_pieces(
        &mut self,
        req: &Request,
        io: Io<'_>,
        more: &[(u64, u64)],
        now_ns: u64,
    ) -> Result<(), RequestError> {
        self.serve_range(req, io, now_ns)?;
        for &(offset_bytes, length_bytes) in more {
            self.serve_range(&Request { offset_bytes, length_bytes, ..*req }, Io::None, now_ns)?;
        }
        Ok(())
    }

    /// A request on a device that only counts (`count_only`): its flash and buffer work, no
    /// clock, no engine, no latency; it completes at once at time 0. The wear-out stop and the
    /// host counters are `begin`'s.
    #[inline(never)]
    fn dispatch_counted(
        &mut self,
        req: &Request,
        io: Io<'_>,
        more: &[(u64, u64)],
    ) -> Result<(Dispatched, u64), RequestError> {
        self.check_worn_out(req)?;
        self.count_request(req.kind);
        let served = self.serve_pieces(req, io, more, 0);
        // RAM time is not kept either.
        self.take_ram_ns();
        let media = self.ftl.flash_mut().media_mut().take_error();
        served?;
        if let Some(e) = media {
            return Err(RequestError::Media(e));
        }
        let c = Completion {
            arrival_ns: 0,
            start_ns: 0,
            complete_ns: 0,
            service_ns: 0,
            effects: Effects::default(),
        };
        Ok((Dispatched::Timed(c), 0))
    }

    /// Whether completions carry their `Effects` (default on); returns the previous setting.
    /// Off, a request costs two snapshots of the flash counters less.
    pub fn track_effects(&mut self, on: bool) -> bool {
        std::mem::replace(&mut self.effects, on)
    }

    /// Makes the device count only (`run.timing = "off"`; docs/ALGORITHMS.md "Counts only"):
    /// requests are served without the sim-engine (`Engine::count_only`), the clock stays at
    /// its start, latency is not measured. Only for configurations whose counts do not depend
    /// on time (`Resolved` refuses the others).
    pub fn count_only(&mut self) {
        assert!(!self.background, "background cleaning is driven by time");
        self.ftl.flash_mut().engine_mut().count_only();
        self.counting = true;
    }

    /// The wear-out stop: no write is served once the flash is unusable.
    #[inline(always)]
    fn check_worn_out(&self, req: &Request) -> Result<(), RequestError> {
        if matches!(req.kind, RequestKind::Write) && self.lifetime.unusable_host_bytes.is_some() {
            let state = self.ftl.lifetime();
            return Err(RequestError::WornOut {
                retired_blocks: state.retired_blocks,
                host_write_bytes: self.host.write_bytes,
            });
        }
        Ok(())
    }

    #[inline(always)]
    fn count_request(&mut self, kind: RequestKind) {
        let h = &mut self.host;
        match kind {
            RequestKind::Write => h.write_requests += 1,
            RequestKind::Read => h.read_requests += 1,
            RequestKind::Trim => h.trim_requests += 1,
            RequestKind::Flush => h.flush_requests += 1,
        }
    }

    /// Admits a request: its arrival time (checked not to go backwards), the wear-out stop, the
    /// host request count; background work due before it runs, and the engine opens the
    /// request. Returns its engine tag.
    #[inline(always)]
    fn begin(&mut self, req: &Request) -> Result<(Started, u64), RequestError> {
        let arrival_ns = match req.arrival_ns {
            Some(a) => {
                if a < self.last_arrival_ns {
                    return Err(RequestError::TimeWentBackwards {
                        arrival_ns: a,
                        previous_arrival_ns: self.last_arrival_ns,
                    });
                }
                a
            }
            None => self.now_ns(),
        };
        self.check_worn_out(req)?;
        // What the engine still has to time before this arrival (and background cleaning on
        // the idle device) comes first.
        self.advance_to(arrival_ns);
        self.last_arrival_ns = arrival_ns;
        self.count_request(req.kind);
        let class = if req.kind == RequestKind::Read { Class::HostRead } else { Class::HostWrite };
        // One call through the FTL's vtable for both.
        let flash = self.ftl.flash_mut();
        let tag = flash.engine_mut().begin(class, arrival_ns);
        let before = if self.effects { Effects::of(&flash.counters) } else { Effects::default() };
        Ok((Started { arrival_ns, before }, tag))
    }

    /// The flash and buffer work of one byte range of an admitted request.
    fn serve_range(
        &mut self,
        req: &Request,
        mut io: Io<'_>,
        now_ns: u64,
    ) -> Result<(), RequestError> {
        let (first, end) = self.page_range(req.offset_bytes, req.length_bytes);
        let h = &mut self.host;
        match req.kind {
            RequestKind::Write => {
                h.write_bytes += req.length_bytes;
                let data = match &io {
                    Io::Write(d) => Some(*d),
                    _ => None,
                };
                // Without payload, the buffer takes the run of whole pages in one call; partial
                // pages at either end go through read-modify-write, in page order.
                let whole_first = self.page.div_ceil(req.offset_bytes);
                let whole_end = self.page.quotient(req.offset_bytes + req.length_bytes);
                if data.is_none() && self.buffer.is_some() && whole_first < whole_end {
                    for lpn in first..whole_first {
                        self.write_page(req, Lpn::from_u64(lpn), now_ns, None);
                    }
                    if let Some(b) = &mut self.buffer {
                        let run = Lpn::from_u64(whole_first)..Lpn::from_u64(whole_end);
                        b.write_pages(self.ftl.as_mut(), run, now_ns);
                    }
                    for lpn in whole_end..end {
                        self.write_page(req, Lpn::from_u64(lpn), now_ns, None);
                    }
                } else {
                    for lpn in first..end {
                        self.write_page(req, Lpn::from_u64(lpn), now_ns, data);
                    }
                }
                self.host.write_pages += end - first;
                self.note_lifetime();
            }
            RequestKind::Read => {
                h.read_bytes += req.length_bytes;
                h.read_pages += end - first;
                // Without payload, the buffer takes the request's pages in one call.
                let batched = matches!(io, Io::None) && self.buffer.is_some();
                if let (true, Some(b)) = (batched, &mut self.buffer) {
                    let run = Lpn::from_u64(first)..Lpn::from_u64(end);
                    self.host.unmapped_read_pages += b.read_pages(self.ftl.as_mut(), run, now_ns);
                }
                for lpn in if batched { end..end } else { first..end } {
                    let buf = match &mut io {
                        Io::Read(d) => Some(&mut **d),
                        _ => None,
                    };
                    self.read_page(req, Lpn::from_u64(lpn), now_ns, buf);
                }
            }
            RequestKind::Trim => {
                // Only pages the range covers entirely are discarded.
                let whole_first = self.page.div_ceil(req.offset_bytes);
                let whole_end = self.page.quotient(req.offset_bytes + req.length_bytes);
                for lpn in whole_first..whole_end.max(whole_first) {
                    if let Some(b) = &mut self.buffer {
                        b.trim(Lpn::from_u64(lpn));
                    }
                    self.ftl.trim_page(Lpn::from_u64(lpn), now_ns);
                }
                self.host.trim_pages += whole_end.saturating_sub(whole_first);
            }
            RequestKind::Flush => {
                if let Some(b) = &mut self.buffer {
                    b.flush(self.ftl.as_mut(), now_ns, FlushReason::Host);
                }
                if let Err(e) = self.ftl.sync() {
                    return Err(RequestError::Media(e));
                }
            }
        }
        Ok(())
    }

    /// Ends an admitted request: the engine closes it, then media errors, its completion (now
    /// if all its operations are timed, else when the queued ones are) and latency.
    #[inline(always)]
    fn complete(
        &mut self,
        kind: RequestKind,
        started: Started,
        tag: u64,
        served: Result<(), RequestError>,
        track: Track,
    ) -> Result<(Dispatched, u64), RequestError> {
        let Started { arrival_ns, before } = started;
        let buffer_ram_ns = self.buffer.as_mut().map_or(0, |b| b.take_pending_ns());
        // One call through the FTL's vtable for the flash's part (this runs per request).
        let flash = self.ftl.flash_mut();
        let ram_ns = buffer_ram_ns + flash.take_ram_ns();
        let outcome = flash.engine_mut().end();
        let effects = if self.effects {
            Effects::of(&flash.counters).since(before)
        } else {
            Effects::default()
        };
        let media = flash.media_mut().take_error();
        let window = self.window;
        match outcome {
            Outcome::Timed { first_start_ns, end_ns } => {
                let times =
                    self.finish_request(kind, arrival_ns, ram_ns, window, first_start_ns, end_ns);
                if served.is_err() || media.is_some() {
                    return Err(served.err().or(media.map(RequestError::Media)).expect("failed"));
                }
                let Some((start_ns, complete_ns)) = times else {
                    let waiting = Waiting { kind, arrival_ns, ram_ns, window, track, effects };
                    return Err(overflow(&waiting, end_ns));
                };
                self.inflight.completes(track, complete_ns);
                let c = Completion {
                    arrival_ns,
                    start_ns,
                    complete_ns,
                    service_ns: complete_ns - start_ns,
                    effects,
                };
                Ok((Dispatched::Timed(c), tag))
            }
            Outcome::Queued { tag: t } => {
                debug_assert_eq!(t, tag);
                let waiting = Waiting { kind, arrival_ns, ram_ns, window, track, effects };
                self.inflight.expect(tag, waiting);
                match served.err().or(media.map(RequestError::Media)) {
                    // The request failed: its queued operations still run (the flash was
                    // changed), but nobody waits for it.
                    Some(e) => {
                        self.inflight.forget(tag);
                        Err(e)
                    }
                    None => Ok((Dispatched::Queued, tag)),
                }
            }
        }
    }

    /// A request's completion once its operations are all timed (the first started at
    /// `first_start_ns`, the last ends at `end_ns`): the end of its last operation (its arrival
    /// if none) plus its RAM time; latency and queueing delay recorded. Returns (start,
    /// completion), or `None` when the completion would pass the end of simulated time.
    #[inline(always)]
    fn finish_request(
        &mut self,
        kind: RequestKind,
        arrival_ns: u64,
        ram_ns: u64,
        window: u32,
        first_start_ns: u64,
        end_ns: u64,
    ) -> Option<(u64, u64)> {
        let start_ns = first_start_ns.max(arrival_ns);
        // Simulated time is u64 ns (584 years); the engine saturates at its end. A request
        // that would complete there fails rather than wrap.
        let complete_ns = end_ns.max(arrival_ns).checked_add(ram_ns).filter(|&c| c < u64::MAX)?;
        self.last_complete_ns = self.last_complete_ns.max(complete_ns);
        if window == self.window {
            let latency = complete_ns - arrival_ns;
            let queue = start_ns - arrival_ns;
            match kind {
                RequestKind::Read => {
                    self.read_latency.record(latency);
                    self.read_queue.record(queue);
                }
                RequestKind::Write => {
                    self.write_latency.record(latency);
                    self.write_queue.record(queue);
                }
                RequestKind::Trim | RequestKind::Flush => {}
            }
        }
        Some((start_ns, complete_ns))
    }

    /// RAM time of the request under way: the buffer's and the RAM region's.
    fn take_ram_ns(&mut self) -> u64 {
        let buffer = self.buffer.as_mut().map_or(0, |b| b.take_pending_ns());
        buffer + self.ftl.flash_mut().take_ram_ns()
    }

    /// The part of page `lpn` that `req` covers: (offset in the page, offset in the request,
    /// length), all in bytes.
    fn overlap(&self, req: &Request, lpn: Lpn) -> (usize, usize, usize) {
        let p = self.geometry.page_size_bytes;
        let page_start = u64::from(lpn) * p;
        let start = req.offset_bytes.max(page_start);
        let end = (req.offset_bytes + req.length_bytes).min(page_start + p);
        ((start - page_start) as usize, (start - req.offset_bytes) as usize, (end - start) as usize)
    }

    /// Writes one page of a write request; a partial page merges with the old content
    /// (read-modify-write: one flash read when the page holds data).
    fn write_page(&mut self, req: &Request, lpn: Lpn, now_ns: u64, data: Option<&[u8]>) {
        let (in_page, in_req, len) = self.overlap(req, lpn);
        let whole = len as u64 == self.geometry.page_size_bytes;
        if whole {
            let d = data.map(|d| &d[in_req..in_req + len]);
            page_write(&mut self.buffer, self.ftl.as_mut(), lpn, now_ns, d);
            return;
        }
        let scratch = data.map(|_| &mut self.scratch[..]);
        let reads = FlashCounters::total(&self.ftl.flash().counters.reads);
        let had_data = page_read(&mut self.buffer, self.ftl.as_mut(), lpn, now_ns, scratch);
        if had_data {
            self.host.rmw_read_pages += 1;
        }
        // The merged page's program (and what it causes) waits for the read when it went to
        // flash.
        let waits = FlashCounters::total(&self.ftl.flash().counters.reads) > reads;
        if waits {
            let read = self.ftl.flash().last_read();
            self.ftl.flash_mut().engine_mut().set_after(read);
        }
        match data {
            // A failed read left `scratch` without the page's old bytes: merging into it would
            // store damage as good data. The page keeps its old copy; the request fails.
            Some(_) if self.ftl.flash_mut().error_pending() => {}
            Some(d) => {
                if !had_data {
                    self.scratch.fill(0);
                }
                self.scratch[in_page..in_page + len].copy_from_slice(&d[in_req..in_req + len]);
                page_write(&mut self.buffer, self.ftl.as_mut(), lpn, now_ns, Some(&self.scratch));
            }
            None => page_write(&mut self.buffer, self.ftl.as_mut(), lpn, now_ns, None),
        }
        if waits {
            self.ftl.flash_mut().engine_mut().set_after(OpRef::Done(0));
        }
    }

    /// Reads one page of a read request into its part of `buf`; unmapped pages read as zeros.
    fn read_page(&mut self, req: &Request, lpn: Lpn, now_ns: u64, buf: Option<&mut [u8]>) {
        let (in_page, in_req, len) = self.overlap(req, lpn);
        let whole = len as u64 == self.geometry.page_size_bytes;
        let (buffer, ftl) = (&mut self.buffer, self.ftl.as_mut());
        let mapped = match buf {
            None => page_read(buffer, ftl, lpn, now_ns, None),
            Some(b) if whole => {
                let target = &mut b[in_req..in_req + len];
                let mapped = page_read(buffer, ftl, lpn, now_ns, Some(&mut *target));
                if !mapped {
                    target.fill(0);
                }
                mapped
            }
            Some(b) => {
                let mapped = page_read(buffer, ftl, lpn, now_ns, Some(&mut self.scratch));
                let target = &mut b[in_req..in_req + len];
                if mapped {
                    target.copy_from_slice(&self.scratch[in_page..in_page + len]);
                } else {
                    target.fill(0);
                }
                mapped
            }
        };
        if !mapped {
            self.host.unmapped_read_pages += 1;
        }
    }

    /// Records the host bytes written when the flash first wore a block out and when it became
    /// unusable (checked after every write request: lifetime is resolved to a request).
    #[inline]
    fn note_lifetime(&mut self) {
        if self.lifetime.unusable_host_bytes.is_some() {
            return;
        }
        let state = self.ftl.lifetime();
        if state.worn && self.lifetime.first_wear_out_host_bytes.is_none() {
            self.lifetime.first_wear_out_host_bytes = Some(self.host.write_bytes);
        }
        if state.unusable {
            self.lifetime.unusable_host_bytes = Some(self.host.write_bytes);
        }
    }

    /// Whether the flash is worn out beyond use (writes are refused).
    #[must_use]
    pub fn is_worn_out(&self) -> bool {
        self.lifetime.unusable_host_bytes.is_some()
    }

    /// Starts the measurement window: counters and latencies reported by `metrics` count from
    /// here (warm-up before it is excluded).
    pub fn start_measurement(&mut self) {
        self.window += 1;
        self.window_start = self.snapshot();
        self.read_latency.reset();
        self.write_latency.reset();
        self.read_queue.reset();
        self.write_queue.reset();
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot {
            host: self.host,
            flash: self.ftl.flash().counters,
            ftl: self.ftl.counters(),
            buffer: self.buffer.as_ref().map(|b| b.counters()).unwrap_or_default(),
            engine: self.ftl.flash().engine().stats(),
            time_ns: self.now_ns(),
        }
    }

    /// The measurement window's metrics (wall-clock fields are left for the front end).
    #[must_use]
    pub fn metrics(&self) -> Metrics {
        let now = self.snapshot();
        let w = &self.window_start;
        let host = now.host - w.host;
        let total = |a: &[u64; 3], b: &[u64; 3]| FlashCounters::total(a) - FlashCounters::total(b);
        let mapping_read_pages = now.flash.mapping_reads - w.flash.mapping_reads;
        let mapping_program_pages = now.flash.mapping_programs - w.flash.mapping_programs;
        let flash_program_pages =
            total(&now.flash.programs, &w.flash.programs) + mapping_program_pages;
        let gc_copied_pages = now.flash.copies[1] - w.flash.copies[1];
        let erases = total(&now.flash.erases, &w.flash.erases);
        let wear = WearSummary::from_counts(self.ftl.erase_counts());
        let table = self.ftl.table_memory_bytes();
        let media = self.ftl.flash().media().memory_bytes();
        let ppb = self.geometry.pages_per_block;
        let recycle = |k: RecycleKind| now.ftl.recycles[k as usize] - w.ftl.recycles[k as usize];
        Metrics {
            host_read_requests: host.read_requests,
            host_write_requests: host.write_requests,
            host_trim_requests: host.trim_requests,
            host_flush_requests: host.flush_requests,
            host_read_pages: host.read_pages,
            host_write_pages: host.write_pages,
            host_trim_pages: host.trim_pages,
            host_read_bytes: host.read_bytes,
            host_write_bytes: host.write_bytes,
            unmapped_read_pages: host.unmapped_read_pages,
            rmw_read_pages: host.rmw_read_pages,
            flash_read_pages: total(&now.flash.reads, &w.flash.reads) + mapping_read_pages,
            flash_program_pages,
            gc_copied_pages,
            erases,
            gc_victims: now.ftl.gc_victims - w.ftl.gc_victims,
            victim_searches_capped: now.ftl.victim_searches_capped - w.ftl.victim_searches_capped,
            write_amplification: per(flash_program_pages, host.write_pages),
            cleaning_cost: metrics::cleaning_cost(erases, gc_copied_pages, ppb),
            wear_mean: wear.mean,
            wear_stddev: wear.stddev,
            wear_min: wear.min,
            wear_max: wear.max,
            wear_histogram: wear.histogram,
            // Filled by the run loop (`sim::run`), which knows when to sample.
            wear_samples: Vec::new(),
            flash_busy_ns: now.flash.busy_ns - w.flash.busy_ns,
            flash_time_ns: flash_time(&now.flash, &w.flash),
            exec_time_ns: ExecTime::from_counters(
                &now.flash,
                &w.flash,
                self.ftl.flash().timing(),
                (now.buffer - w.buffer).ram_ns + (now.ftl.ram - w.ftl.ram).ram_ns,
            ),
            buffer_kind: self.buffer.as_ref().map_or("none", |b| b.name()),
            buffer_pages: self.buffer.as_ref().map_or(0, |b| u64::from(b.capacity_pages())),
            buffer: now.buffer - w.buffer,
            mapping_zone_loads: now.ftl.zones.loads - w.ftl.zones.loads,
            mapping_zone_write_backs: now.ftl.zones.write_backs - w.ftl.zones.write_backs,
            mapping_read_pages,
            mapping_program_pages,
            switch_merges: recycle(RecycleKind::SwitchMerge),
            partial_merges: recycle(RecycleKind::PartialMerge),
            full_merges: recycle(RecycleKind::FullMerge),
            migrations: recycle(RecycleKind::Migration),
            log_discards: recycle(RecycleKind::Discard),
            sim_time_ns: now.time_ns - w.time_ns,
            read_latency_ns: self.read_latency.summary(),
            write_latency_ns: self.write_latency.summary(),
            read_latency_histogram_ns: self.read_latency.buckets(),
            write_latency_histogram_ns: self.write_latency.buckets(),
            read_queue_ns: self.read_queue.summary(),
            write_queue_ns: self.write_queue.summary(),
            parallel: ParallelMetrics::over(
                &now.engine,
                &w.engine,
                now.time_ns - w.time_ns,
                host.read_requests + host.write_requests + host.trim_requests + host.flush_requests,
                host.read_bytes + host.write_bytes,
            ),
            table_memory_bytes: table,
            media_memory_bytes: media,
            memory_bytes_per_page: (table + media) as f64 / self.geometry.physical_pages() as f64,
            wear_leveling: self.ftl.wear_leveling(),
            wear_leveling_erases: now.flash.erases[Source::WearLeveling as usize]
                - w.flash.erases[Source::WearLeveling as usize],
            wear_leveling_copies: now.flash.copies[Source::WearLeveling as usize]
                - w.flash.copies[Source::WearLeveling as usize],
            lifetime: self.lifetime_metrics(),
            ram_region: self.ftl.ram_region().map(|info| RamRegionMetrics {
                capacity_pages: info.capacity_pages,
                threshold_pages: info.threshold_pages,
                used_pages: info.used_pages,
                counters: now.ftl.ram - w.ftl.ram,
            }),
            wall_seconds: 0.0,
            measured_wall_seconds: 0.0,
            host_writes_per_wall_second: 0.0,
        }
    }

    fn lifetime_metrics(&self) -> LifetimeMetrics {
        LifetimeMetrics {
            endurance_cycles: self.ftl.lifetime().endurance_cycles,
            retired_blocks: self.ftl.lifetime().retired_blocks,
            first_wear_out_host_bytes: self.lifetime.first_wear_out_host_bytes,
            unusable_host_bytes: self.lifetime.unusable_host_bytes,
        }
    }

    /// Bytes written by the host since the device was created (or recovered): unlike
    /// `metrics().host_write_bytes`, not reset by `start_measurement`.
    #[inline]
    #[must_use]
    pub fn host_write_bytes(&self) -> u64 {
        self.host.write_bytes
    }

    /// The device's wear now, cumulative since it was created or recovered
    /// (`metrics::WearSample`). O(blocks) for the erase-count statistics.
    #[must_use]
    pub fn wear_sample(&self) -> WearSample {
        let c = &self.ftl.flash().counters;
        let wear = WearStats::from_counts(self.ftl.erase_counts());
        WearSample {
            host_write_bytes: self.host.write_bytes,
            erases: FlashCounters::total(&c.erases),
            wear_leveling_erases: c.erases[Source::WearLeveling as usize],
            wear_leveling_copies: c.copies[Source::WearLeveling as usize],
            flash_program_pages: FlashCounters::total(&c.programs) + c.mapping_programs,
            wear_mean: wear.mean,
            wear_stddev: wear.stddev,
            wear_max: wear.max,
            wear_min: wear.min,
        }
    }

    /// Runs the FTL's full invariant check (and the engine's).
    pub fn check(&self) {
        self.ftl.check();
        self.ftl.flash().engine().check();
        if let Some(b) = &self.buffer {
            b.check();
        }
    }
}

/// The error of a request whose completion would pass the end of simulated time.
#[cold]
fn overflow(w: &Waiting, end_ns: u64) -> RequestError {
    RequestError::TimeOverflow {
        start_ns: w.arrival_ns,
        service_ns: end_ns.saturating_sub(w.arrival_ns).saturating_add(w.ram_ns),
    }
}

/// Host bytes written (since the device was created) at the two lifetime events.
#[derive(Clone, Copy, Debug, Default)]
struct Lifetime {
    first_wear_out_host_bytes: Option<u64>,
    unusable_host_bytes: Option<u64>,
}

/// Writes one whole page through the buffer, or straight to the FTL without one.
#[inline]
fn page_write(
    buffer: &mut Option<Box<dyn Buffer>>,
    ftl: &mut dyn Ftl,
    lpn: Lpn,
    now_ns: u64,
    data: Option<&[u8]>,
) {
    match buffer {
        Some(b) => b.write(ftl, lpn, now_ns, data),
        None => ftl.write_page(lpn, now_ns, data),
    }
}

/// Reads one whole page through the buffer, or straight from the FTL without one.
#[inline]
fn page_read(
    buffer: &mut Option<Box<dyn Buffer>>,
    ftl: &mut dyn Ftl,
    lpn: Lpn,
    now_ns: u64,
    out: Option<&mut [u8]>,
) -> bool {
    match buffer {
        Some(b) => b.read(ftl, lpn, now_ns, out),
        None => ftl.read_page(lpn, now_ns, out),
    }
}

/// `a / b`, 0 when `b` is 0 (a ratio of nothing happened).
fn per(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// Flash time per operation kind between two counter snapshots.
fn flash_time(now: &FlashCounters, start: &FlashCounters) -> FlashTime {
    let d = |op: Op| now.op_ns[op as usize] - start.op_ns[op as usize];
    FlashTime {
        read: d(Op::Read),
        program: d(Op::Program),
        copy: d(Op::Copy),
        erase: d(Op::Erase),
        mapping: d(Op::Mapping),
    }
}

#[cfg(test)]
mod tests;
