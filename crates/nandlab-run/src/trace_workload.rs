//! Trace replay as a workload: sizing the device from a trace, fitting trace addresses onto it,
//! and turning records into timed requests.
//!
//! Sizing: with neither `device.blocks` nor `device.logical_bytes` set, the logical capacity is
//! the trace's footprint under `compact` fitting (distinct chunks touched × chunk size, chunk =
//! `workload.compact_chunk_bytes`, default one erase block), so sparse multi-terabyte address
//! spaces become a small dense device; physical size follows from `device.utilization`.
//! With an explicit size, `workload.fit = "auto"` means `error`: an address past the end stops
//! the run naming the file and line, unless `fold` or `compact` is chosen.
//!
//! Sequence: prefill (every logical page once, untimed; `workload.prefill`), warm-up replays,
//! the measurement marker, measured replays. Replay k's timestamps are shifted by k × (trace
//! duration + mean inter-arrival gap) so replays follow each other in time.
//!
//! Totals (records, duration, devices): the device's size and `compact` fitting need them before
//! the run, so the trace is scanned first then. Otherwise nothing in the first replay needs them
//! and they are counted on a thread of their own while the replay runs (a replay then parses the
//! trace once on the run's critical path, not twice; the thread is in the idle scheduling class,
//! so it takes no CPU the replay or its parser want); the first error it finds stops the run
//! (it is the error an up-front scan would have reported, whatever the replay was doing), and a
//! second replay's time shift waits for them.
//!
//! Measured replays: `workload.passes` × `workload.repeat`. For a trace, "repeat the measured
//! part K times" and "K times as many measured replays" are the same sequence (each replay is
//! the whole trace again), so `repeat` simply multiplies `passes` here; generated workloads get
//! the same from `nandlab_core::Repeated`.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::thread::JoinHandle;

use nandlab_core::Resolved;
use nandlab_core::TraceKeys;
use nandlab_core::{Config, ConfigError, Request, RequestKind, WorkItem};
use nandlab_trace::{
    AddressFit, FitMode, TraceError, TraceFormat, TraceOp, TraceOptions, TraceSummary,
};
use serde::Serialize;

/// What was learned about the trace while preparing the run. `records`, `duration_ns` and
/// `devices` are 0 and empty until the trace's totals are known (see the module doc); a run's
/// report carries them filled in.
#[derive(Clone, Debug, Serialize)]
pub struct TraceInfo {
    pub path: PathBuf,
    pub format: &'static str,
    pub records: u64,
    pub duration_ns: u64,
    pub devices: Vec<u64>,
    pub fit: &'static str,
    /// Whether the device size came from the trace.
    pub sized_from_trace: bool,
    #[serde(skip)]
    options: TraceOptions,
    #[serde(skip)]
    fit_mode: FitMode,
    #[serde(skip)]
    totals: Totals,
}

impl TraceInfo {
    /// Requests expected in the whole run (for progress bars); 0 while the totals are still
    /// being counted.
    #[must_use]
    pub fn expected_requests(&self, r: &Resolved) -> u64 {
        let records = match self.totals.poll() {
            Some(Ok(s)) => s.records,
            _ => return 0,
        };
        let w = &r.config.workload;
        let replays = (w.warmup_passes.unwrap_or(0.0) as u64).saturating_add(measured_replays(r));
        let prefill = if w.prefill == Some(true) { prefill_requests(r) } else { 0 };
        prefill.saturating_add(replays.saturating_mul(records))
    }

    /// This information with the trace's totals filled in, once they are counted; a trace that
    /// fails to parse, or holds no records, is the error.
    pub fn completed(&self) -> Result<TraceInfo, TraceError> {
        let s = self.totals.wait().clone()?;
        Ok(TraceInfo {
            records: s.records,
            duration_ns: s.duration_ns,
            devices: s.devices,
            ..self.clone()
        })
    }
}

/// The trace's totals: known, or being counted on a thread of their own (see the module doc).
/// Clones share the count; the last one dropped stops it.
#[derive(Clone, Debug)]
struct Totals(Arc<Counting>);

#[derive(Debug)]
struct Counting {
    result: Arc<OnceLock<Result<TraceSummary, TraceError>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
    stop: Arc<AtomicBool>,
}

/// Records between two looks at whether the count has failed.
const COUNT_POLL_EVERY: u64 = 65_536;

impl Totals {
    fn known(summary: TraceSummary) -> Self {
        let result = OnceLock::new();
        result.set(Ok(summary)).expect("a new cell is empty");
        Totals(Arc::new(Counting {
            result: Arc::new(result),
            thread: Mutex::new(None),
            stop: Arc::new(AtomicBool::new(false)),
        }))
    }

    fn start(path: PathBuf, options: TraceOptions) -> Self {
        let result = Arc::new(OnceLock::new());
        let stop = Arc::new(AtomicBool::new(false));
        let (cell, flag) = (result.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            // On a machine with no spare core the count, the replay and its parser thread
            // would share the CPUs equally and the replay would lose a third of its speed
            // while the count runs; in the idle class it uses only what they leave.
            nandlab_prefetch::idle_priority();
            let _ = cell.set(nandlab_trace::scan_until(&path, &options, &flag));
        });
        Totals(Arc::new(Counting { result, thread: Mutex::new(Some(thread)), stop }))
    }

    /// The totals if they are counted, without waiting.
    fn poll(&self) -> Option<&Result<TraceSummary, TraceError>> {
        self.0.result.get()
    }

    /// The totals, waiting for the count to end.
    fn wait(&self) -> &Result<TraceSummary, TraceError> {
        if let Some(r) = self.poll() {
            return r;
        }
        // Joined under the lock: a second waiter finds the result set once it gets the lock.
        let mut thread = self.0.thread.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(t) = thread.take() {
            if let Err(panic) = t.join() {
                std::panic::resume_unwind(panic);
            }
        }
        drop(thread);
        self.poll().expect("the counting thread sets its result before it ends")
    }
}

impl Drop for Counting {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let thread = self.thread.get_mut().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(t) = thread {
            let _ = t.join();
        }
    }
}

const PREFILL_REQUEST_PAGES: u64 = 64;

/// Measured replays of the trace: `passes` × `repeat` (see the module doc).
fn measured_replays(r: &Resolved) -> u64 {
    let w = &r.config.workload;
    (w.passes.unwrap_or(1.0) as u64).saturating_mul(w.repeat.max(1))
}

/// The trace keys of a resolved trace workload.
fn trace_keys(r: &Resolved) -> TraceKeys {
    let plan = r.workload.plan.as_any().downcast_ref::<nandlab_core::TracePlan>();
    plan.expect("a trace workload").keys.clone()
}

fn prefill_requests(r: &Resolved) -> u64 {
    r.geometry.logical_pages.div_ceil(PREFILL_REQUEST_PAGES)
}

fn options_of(keys: &TraceKeys) -> Result<TraceOptions, ConfigError> {
    let format = match &keys.format {
        None => None,
        Some(name) => Some(TraceFormat::from_name(name).ok_or_else(|| {
            let names: Vec<&str> = TraceFormat::ALL.iter().map(|f| f.name()).collect();
            ConfigError::new(
                "workload.format",
                format!("unknown trace format {name:?}; expected one of {}", names.join(", ")),
            )
        })?),
    };
    Ok(TraceOptions { format, device: keys.device })
}

/// Scans the trace, sizes the device if no size is given, and fixes the fit mode.
pub fn prepare(config: &Config) -> Result<(Config, TraceInfo), crate::Error> {
    let mut c = config.clone();
    let mut keys = TraceKeys::of(&c.workload)?;
    let path = PathBuf::from(keys.path.clone().ok_or_else(|| {
        ConfigError::new("workload.path", "a trace workload needs a trace file path")
    })?);
    let mut options = options_of(&keys)?;
    // Opening checks the file and detects its format: the errors a user should see at once.
    options.format = Some(nandlab_trace::open(&path, &options)?.format());
    // Page size and block size for the chunk default: resolve a copy with a placeholder size.
    let probe = {
        let mut p = c.clone();
        if p.device.blocks.is_none() && p.device.logical_bytes.is_none() {
            p.device.blocks = Some(1024);
            // The placeholder's RAM budget says nothing about the real device's.
            p.device.ram_bytes.get_or_insert(u64::MAX / 4);
        }
        p.resolve()?
    };
    let block_bytes = probe.geometry.page_size_bytes * u64::from(probe.geometry.pages_per_block);
    let chunk_bytes = keys.compact_chunk_bytes.unwrap_or(block_bytes);
    let sized_from_trace = c.device.blocks.is_none() && c.device.logical_bytes.is_none();
    let fit_name = match (keys.fit.as_str(), sized_from_trace) {
        ("auto", true) => "compact",
        ("auto", false) => "error",
        (other, _) => match other {
            "error" => "error",
            "fold" => "fold",
            _ => "compact",
        },
    };
    let fit_mode = match fit_name {
        "error" => FitMode::Error,
        "fold" => FitMode::Fold,
        _ => FitMode::Compact { chunk_bytes },
    };
    // The device's size and compact fitting (which keys chunks by device when there are
    // several) need the totals now; otherwise they are counted during the run.
    let known = sized_from_trace || matches!(fit_mode, FitMode::Compact { .. });
    let totals = if known {
        Totals::known(nandlab_trace::scan(&path, &options)?)
    } else {
        Totals::start(path.clone(), options.clone())
    };
    if sized_from_trace {
        let summary = totals.wait().as_ref().expect("scanned above");
        let logical = match fit_mode {
            FitMode::Compact { chunk_bytes } => {
                nandlab_trace::compact_footprint_bytes(&path, &options, chunk_bytes)?
            }
            _ => summary.max_end_bytes.div_ceil(block_bytes) * block_bytes,
        };
        // A tiny trace still needs a device the cleaner can work in: enough logical blocks
        // that the spare space (at the configured utilization) holds the cleaner's reserve
        // plus one open block per log.
        let u = c.device.utilization.unwrap_or(0.8);
        // Hybrid FTLs need their log blocks plus a merge destination as spare, and map whole
        // logical blocks (SAST: whole groups).
        let (hybrid, spare_blocks, granule_blocks) = match &probe.ftl {
            nandlab_core::FtlSpec::Hybrid(h) => {
                (true, f64::from(h.log_blocks + 1), h.mapping_granule_blocks())
            }
            nandlab_core::FtlSpec::Page(_) => (false, f64::from(2 * probe.regions + 3), 1),
        };
        let granule_bytes = granule_blocks.max(1) * block_bytes;
        let min_blocks = ((spare_blocks * u / (1.0 - u)).ceil() as u64).max(4) + 1;
        let logical = logical.max(min_blocks * block_bytes);
        c.device.logical_bytes =
            Some(if hybrid { logical.next_multiple_of(granule_bytes) } else { logical });
    }
    keys.fit = fit_name.to_string();
    keys.compact_chunk_bytes.get_or_insert(chunk_bytes);
    keys.store(&mut c.workload);
    let (records, duration_ns, devices) = match totals.poll() {
        Some(Ok(s)) if known => (s.records, s.duration_ns, s.devices.clone()),
        _ => (0, 0, Vec::new()),
    };
    let info = TraceInfo {
        path,
        format: options.format.expect("detected above").name(),
        records,
        duration_ns,
        devices,
        fit: fit_name,
        sized_from_trace,
        options,
        fit_mode,
        totals,
    };
    Ok((c, info))
}

/// The whole run's work items for a trace workload.
pub fn items(r: &Resolved, info: &TraceInfo) -> Result<TraceItems, crate::Error> {
    let w = &r.config.workload;
    let warmup = w.warmup_passes.unwrap_or(0.0) as u64;
    let measured = measured_replays(r);
    // Only compact fitting keys by device, and its totals are known before the run.
    let multi_device = match info.totals.poll() {
        Some(Ok(s)) => s.devices.len() > 1,
        _ => false,
    };
    Ok(TraceItems {
        page_size_bytes: r.geometry.page_size_bytes,
        logical_pages: r.geometry.logical_pages,
        prefill_next: 0,
        prefill_total: if w.prefill == Some(true) { prefill_requests(r) } else { 0 },
        prefill_done_due: false,
        replay: 0,
        warmup,
        replays: warmup.saturating_add(measured),
        marker_sent: false,
        reader: None,
        fit: AddressFit::new(info.fit_mode, r.geometry.logical_bytes(), multi_device),
        extents: Vec::new(),
        pending: std::collections::VecDeque::new(),
        path: info.path.clone(),
        options: info.options.clone(),
        timed: trace_keys(r).timed(),
        period_ns: None,
        totals: info.totals.clone(),
        totals_checked: false,
        records_read: 0,
    })
}

/// Iterator over a trace run's items (see the module doc for the sequence).
pub struct TraceItems {
    page_size_bytes: u64,
    logical_pages: u64,
    prefill_next: u64,
    prefill_total: u64,
    /// The last prefill request has been issued and `PrefillDone` not yet.
    prefill_done_due: bool,
    replay: u64,
    warmup: u64,
    replays: u64,
    marker_sent: bool,
    /// The replay under way, parsed on a second thread (`BackgroundReader`).
    reader: Option<nandlab_trace::BackgroundReader>,
    /// Shared by all replays, so a compacted chunk keeps its place from one replay to the next.
    fit: AddressFit,
    extents: Vec<(u64, u64)>,
    /// Pieces of the current record, each flagged when it continues the one before.
    pending: std::collections::VecDeque<(bool, Request)>,
    path: PathBuf,
    options: TraceOptions,
    timed: bool,
    /// Trace duration + mean gap: replay k is shifted by k of these (computed from the totals
    /// when the second replay starts).
    period_ns: Option<u64>,
    totals: Totals,
    /// The totals' own error, if any, has been looked at after the last replay.
    totals_checked: bool,
    records_read: u64,
}

impl TraceItems {
    fn stop(&mut self) {
        self.replay = self.replays;
        self.reader = None;
    }

    /// Ends the run with `e`, unless counting the totals failed: that error is the one an
    /// up-front scan reports, so it wins whatever the replay ran into (and a run's error does
    /// not depend on which thread got there first).
    fn fail(&mut self, e: TraceError) -> Option<Result<WorkItem, TraceError>> {
        self.stop();
        self.totals_checked = true;
        match self.totals.wait() {
            Err(first) => Some(Err(first.clone())),
            Ok(_) => Some(Err(e)),
        }
    }

    fn period_ns(&mut self) -> Result<u64, TraceError> {
        if let Some(p) = self.period_ns {
            return Ok(p);
        }
        let s = self.totals.wait().as_ref().map_err(Clone::clone)?;
        let gap = if s.records > 1 { s.duration_ns / (s.records - 1) } else { 1_000_000 };
        let p = s.duration_ns.saturating_add(gap.max(1));
        self.period_ns = Some(p);
        Ok(p)
    }

    /// The arrival time of a record of the current replay (`None` untimed).
    fn arrival_ns(
        &mut self,
        record: &nandlab_trace::TraceRecord,
    ) -> Result<Option<u64>, TraceError> {
        if !self.timed {
            return Ok(None);
        }
        if self.replay == 0 {
            return Ok(Some(record.time_ns));
        }
        // Replay k is shifted by k periods; a trace long enough (or replayed often enough) to
        // pass u64 nanoseconds stops here rather than wrapping around.
        let period = self.period_ns()?;
        let at =
            self.replay.checked_mul(period).and_then(|shift| shift.checked_add(record.time_ns));
        at.map(Some).ok_or_else(|| TraceError::Parse {
            path: self.path.clone(),
            line: record.line,
            message: format!(
                "replay {} of this request arrives after the end of simulated time (u64 \
                 nanoseconds, 584 years): the trace spans {} s; use fewer passes or \
                 workload.trace_timing = \"closed\"",
                self.replay + 1,
                period / 1_000_000_000
            ),
        })
    }

    /// The next record of the current replay, opening it first; `None` at its end.
    fn next_record(&mut self) -> Option<Result<nandlab_trace::TraceRecord, TraceError>> {
        if self.reader.is_none() {
            match nandlab_trace::open(&self.path, &self.options) {
                Ok(reader) => self.reader = Some(nandlab_trace::BackgroundReader::new(reader)),
                Err(e) => return Some(Err(e)),
            }
        }
        self.records_read += 1;
        // The count's error, once found, ends the run without replaying up to it.
        if self.records_read.is_multiple_of(COUNT_POLL_EVERY) {
            if let Some(Err(e)) = self.totals.poll() {
                return Some(Err(e.clone()));
            }
        }
        self.reader.as_mut().and_then(Iterator::next)
    }
}

impl Iterator for TraceItems {
    type Item = Result<WorkItem, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if self.prefill_next < self.prefill_total {
                let first = self.prefill_next * PREFILL_REQUEST_PAGES;
                let pages = PREFILL_REQUEST_PAGES.min(self.logical_pages - first);
                self.prefill_next += 1;
                self.prefill_done_due = self.prefill_next == self.prefill_total;
                let p = self.page_size_bytes;
                return Some(Ok(WorkItem::Request(Request::write(first * p, pages * p))));
            }
            if self.prefill_done_due {
                self.prefill_done_due = false;
                return Some(Ok(WorkItem::PrefillDone));
            }
            if let Some((continues, req)) = self.pending.pop_front() {
                let item = if continues { WorkItem::Continue(req) } else { WorkItem::Request(req) };
                return Some(Ok(item));
            }
            if self.replay == self.warmup && !self.marker_sent {
                self.marker_sent = true;
                return Some(Ok(WorkItem::StartMeasurement));
            }
            if self.replay >= self.replays {
                if !self.totals_checked {
                    self.totals_checked = true;
                    if let Err(e) = self.totals.wait() {
                        return Some(Err(e.clone()));
                    }
                }
                return None;
            }
            let record = match self.next_record() {
                None => {
                    self.reader = None;
                    self.replay += 1;
                    continue;
                }
                Some(Err(e)) => return self.fail(e),
                Some(Ok(rec)) => rec,
            };
            let arrival_ns = match self.arrival_ns(&record) {
                Ok(at) => at,
                Err(e) => return self.fail(e),
            };
            let kind = match record.op {
                TraceOp::Read => RequestKind::Read,
                TraceOp::Write => RequestKind::Write,
                TraceOp::Trim => RequestKind::Trim,
                TraceOp::Flush => {
                    let flush = Request {
                        kind: RequestKind::Flush,
                        offset_bytes: 0,
                        length_bytes: 0,
                        arrival_ns,
                    };
                    return Some(Ok(WorkItem::Request(flush)));
                }
            };
            self.extents.clear();
            if let Err(e) = self.fit.map(&self.path, &record, &mut self.extents) {
                return self.fail(e);
            }
            // One piece (always, unless compact fitting splits the request at chunk
            // boundaries) goes out at once; a split request's later pieces continue it as one
            // host request.
            if let [(offset_bytes, length_bytes)] = self.extents[..] {
                return Some(Ok(WorkItem::Request(Request {
                    kind,
                    offset_bytes,
                    length_bytes,
                    arrival_ns,
                })));
            }
            for (i, &(offset_bytes, length_bytes)) in self.extents.iter().enumerate() {
                let piece = Request { kind, offset_bytes, length_bytes, arrival_ns };
                self.pending.push_back((i > 0, piece));
            }
        }
    }
}
