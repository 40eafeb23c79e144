//! The run loop: feeds a workload's items to a device, starts the measurement window at the
//! workload's marker, places timed arrivals after the untimed prefill, checks invariants on
//! request, samples wear as the host writes (`RunOptions::sample_every_bytes`), and reports
//! progress. A run ends early when the flash wears out (`RequestError::WornOut`).

use std::collections::VecDeque;

use crate::device::{Device, Submission, Wait};
use crate::error::RequestError;
use crate::metrics::{Metrics, WearSample};
use crate::request::Request;
use crate::workload::WorkItem;

/// Why a run stopped early.
#[derive(Debug)]
pub enum RunError<E> {
    /// The workload source failed (e.g. a malformed trace line).
    Workload(E),
    /// The device rejected a request (index counts requests from 0).
    Request { index: u64, error: RequestError },
}

impl<E: std::fmt::Display> std::fmt::Display for RunError<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Workload(e) => write!(f, "{e}"),
            Self::Request { index, error } => write!(f, "request #{index}: {error}"),
        }
    }
}

impl<E: std::fmt::Debug + std::fmt::Display> std::error::Error for RunError<E> {}

/// What the run loop tells its observer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// This many requests have been served so far.
    Progress { requests: u64 },
    /// The measurement window starts now (after warm-up).
    MeasurementStarted,
}

const PREFETCH_FAR: usize = 24;
const PREFETCH_NEAR: usize = 6;

/// Options of the run loop.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunOptions {
    /// Run the device's O(n) invariant check every this many requests (0 = never).
    pub check_every_requests: u64,
    /// Call the progress callback every this many requests (0 = never).
    pub progress_every_requests: u64,
    /// Take a wear sample (`Device::wear_sample`) each time the device's cumulative host write
    /// bytes reach the next multiple of this, and one at the end (0 = never; see `run`).
    pub sample_every_bytes: u64,
    /// Closed-loop requests kept in flight at once (`workload.queue_depth`; 0 or 1: one at a
    /// time).
    pub queue_depth: u32,
}

impl RunOptions {
    /// The options a resolved config asks for (`run.*`); progress reporting stays off.
    #[must_use]
    pub fn of(r: &crate::config::Resolved) -> Self {
        Self {
            check_every_requests: r.config.run.check_every_requests,
            progress_every_requests: 0,
            sample_every_bytes: r.config.run.sample_every_bytes.unwrap_or(0),
            queue_depth: r.config.workload.queue_depth,
        }
    }
}

/// Drives `device` with `items` to the end and returns the measurement window's metrics.
///
/// Closed-loop requests (no arrival time) keep `options.queue_depth` requests in flight: each
/// arrives when the device is idle (one at a time) or when one in flight completes. Timed
/// arrivals are relative to the first timed request, which arrives when the device has
/// finished everything before it (the untimed prefill); they are dispatched at their times
/// whatever is in flight (open loop). The measurement window starts with nothing in flight:
/// the requests before the workload's marker complete first.
///
/// Wear samples (`Metrics::wear_samples`): after each request that brings the device's host
/// write bytes (since the device was created: prefill and warm-up count) to or past the next
/// multiple of `options.sample_every_bytes`, one sample; a request that passes several
/// multiples at once gives one sample, so host bytes strictly increase from sample to sample.
/// The last sample is taken at the end, after the buffer's write-back, and replaces a sample
/// taken at the same host byte count: a run writing B bytes on a fresh device gives
/// max(1, ⌈B / interval⌉) samples when no request spans a multiple.
pub fn run<E>(
    device: &mut Device,
    items: impl Iterator<Item = Result<WorkItem, E>>,
    options: RunOptions,
    observer: &mut dyn FnMut(Event),
) -> Result<Metrics, RunError<E>> {
    // Nobody here reads a completion's effects: no snapshots per request (restored below).
    let tracked = device.track_effects(false);
    let outcome = run_items(device, items, options, observer);
    device.track_effects(tracked);
    outcome
}

fn run_items<E>(
    device: &mut Device,
    items: impl Iterator<Item = Result<WorkItem, E>>,
    options: RunOptions,
    observer: &mut dyn FnMut(Event),
) -> Result<Metrics, RunError<E>> {
    let mut index = 0u64;
    let mut time_base: Option<u64> = None;
    let mut measuring = false;
    // Look-ahead window: the loop is bound by cache misses on tables indexed by random pages,
    // so requests are announced to the device PREFETCH_FAR steps before they are served (to
    // fetch their translation entries) and again PREFETCH_NEAR steps before (to fetch what
    // those entries point at). Items are still served strictly in order.
    let mut items = items.into_iter();
    let mut window: VecDeque<Result<WorkItem, E>> = VecDeque::with_capacity(PREFETCH_FAR + 1);
    let mut exhausted = false;
    let mut samples = Vec::new();
    // Off: a threshold no byte count reaches, so the per-request cost is one compare.
    let every = options.sample_every_bytes;
    let mut next_sample =
        if every > 0 { next_multiple(device.host_write_bytes(), every) } else { u64::MAX };
    let mut pieces: Vec<(u64, u64)> = Vec::new();
    let queue_depth = options.queue_depth.max(1) as usize;
    // The closed loop's clock: when its next request may arrive.
    let mut clock = device.now_ns();
    loop {
        while !exhausted && window.len() < PREFETCH_FAR {
            exhausted = !pull(device, &mut items, &mut window);
        }
        if let Some(Ok(WorkItem::Request(req))) = window.get(PREFETCH_NEAR) {
            device.prefetch_near(req);
        }
        let Some(item) = window.pop_front() else { break };
        match item.map_err(RunError::Workload)? {
            WorkItem::StartMeasurement => {
                assert!(!measuring, "workload announced measurement twice");
                measuring = true;
                device.drain_host();
                device.start_measurement();
                clock = device.now_ns();
                observer(Event::MeasurementStarted);
            }
            WorkItem::PrefillDone => {
                device.end_prefill();
                clock = device.now_ns();
            }
            WorkItem::Continue(_) => {
                unreachable!("a WorkItem::Continue is consumed with the request it continues")
            }
            WorkItem::Request(mut req) => {
                if let Some(a) = req.arrival_ns {
                    let base = *time_base.get_or_insert_with(|| device.now_ns());
                    let Some(at) = base.checked_add(a) else {
                        let error = RequestError::TimeOverflow { start_ns: base, service_ns: a };
                        return Err(RunError::Request { index, error });
                    };
                    req.arrival_ns = Some(at);
                }
                // Pieces of a split request follow it directly; they are served with it.
                pieces.clear();
                while let Some(Ok(WorkItem::Continue(piece))) = window.front() {
                    assert!(piece.kind == req.kind, "a continued request changed kind");
                    pieces.push((piece.offset_bytes, piece.length_bytes));
                    window.pop_front();
                    if !exhausted && window.is_empty() {
                        exhausted = !pull(device, &mut items, &mut window);
                    }
                }
                let wait = who_waits(device, &mut req, queue_depth, &mut clock);
                match device.dispatch(Submission::new(&req).pieces(&pieces).wait(wait)) {
                    Ok(_) => {}
                    // The flash wore out: the run ends here (lifetime experiments run until
                    // this happens); the metrics record when.
                    Err(RequestError::WornOut { .. }) => break,
                    Err(error) => return Err(RunError::Request { index, error }),
                }
                index += 1;
                if device.host_write_bytes() >= next_sample {
                    samples.push(device.wear_sample());
                    next_sample = next_multiple(device.host_write_bytes(), every);
                }
                if options.check_every_requests > 0
                    && index.is_multiple_of(options.check_every_requests)
                {
                    device.check();
                }
                if options.progress_every_requests > 0
                    && index.is_multiple_of(options.progress_every_requests)
                {
                    observer(Event::Progress { requests: index });
                }
            }
        }
    }
    if !measuring {
        device.start_measurement();
        observer(Event::MeasurementStarted);
    }
    Ok(finish(device, options, index, samples, observer))
}

/// The end of a run: the buffer's dirty pages reach flash within it (so its metrics count
/// them), the last check and progress report, the metrics with the wear samples and the last
/// one (see `run`).
#[inline(never)]
fn finish(
    device: &mut Device,
    options: RunOptions,
    requests: u64,
    mut samples: Vec<WearSample>,
    observer: &mut dyn FnMut(Event),
) -> Metrics {
    device.finish();
    if options.check_every_requests > 0 {
        device.check();
    }
    observer(Event::Progress { requests });
    let mut metrics = device.metrics();
    if options.sample_every_bytes > 0 {
        let last = device.wear_sample();
        if samples.last().is_some_and(|s| s.host_write_bytes == last.host_write_bytes) {
            samples.pop();
        }
        samples.push(last);
    }
    metrics.wear_samples = samples;
    metrics
}

/// Who takes `req`'s completion. One at a time (queue depth 1, no arrival time): the loop,
/// at once; the request arrives when the device is idle. A timed arrival: nobody (open loop:
/// at its time, whatever is in flight). The closed loop: it arrives at `clock`, when a slot
/// of the queue is free (waiting for a completion when none is), and is left in flight.
#[inline(always)]
fn who_waits(device: &mut Device, req: &mut Request, queue_depth: usize, clock: &mut u64) -> Wait {
    if req.arrival_ns.is_none() && queue_depth == 1 {
        Wait::Now
    } else if req.arrival_ns.is_some() {
        Wait::Never
    } else {
        if device.in_flight() >= queue_depth {
            if let Some(t) = device.wait_one() {
                *clock = (*clock).max(t);
            }
        }
        *clock = (*clock).max(device.last_arrival_ns());
        req.arrival_ns = Some(*clock);
        Wait::InFlight
    }
}

/// Moves the next item into the look-ahead window, announcing a request to the device;
/// `false` when the workload has ended.
fn pull<E>(
    device: &Device,
    items: &mut impl Iterator<Item = Result<WorkItem, E>>,
    window: &mut VecDeque<Result<WorkItem, E>>,
) -> bool {
    match items.next() {
        None => false,
        Some(item) => {
            if let Ok(WorkItem::Request(req) | WorkItem::Continue(req)) = &item {
                device.prefetch_far(req);
            }
            window.push_back(item);
            true
        }
    }
}

/// The smallest multiple of `every` above `bytes` (saturating: past u64 there is no sample;
/// `every` = 0 never samples).
fn next_multiple(bytes: u64, every: u64) -> u64 {
    bytes.checked_div(every).map_or(u64::MAX, |m| m.saturating_add(1).saturating_mul(every))
}
