//! The run loop: feeds a workload's items to a device, starts the measurement window at the
//! workload's marker, places timed arrivals after the untimed prefill, checks invariants on
//! request, and reports progress.

use std::collections::VecDeque;

use crate::device::Device;
use crate::error::RequestError;
use crate::metrics::Metrics;
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
}

/// Drives `device` with `items` to the end and returns the measurement window's metrics.
///
/// Timed arrivals are relative to the first timed request, which arrives when the device has
/// finished everything before it (the untimed prefill).
pub fn run<E>(
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
    loop {
        while !exhausted && window.len() < PREFETCH_FAR {
            match items.next() {
                None => exhausted = true,
                Some(item) => {
                    if let Ok(WorkItem::Request(req)) = &item {
                        device.prefetch_far(req);
                    }
                    window.push_back(item);
                }
            }
        }
        if let Some(Ok(WorkItem::Request(req))) = window.get(PREFETCH_NEAR) {
            device.prefetch_near(req);
        }
        let Some(item) = window.pop_front() else { break };
        match item.map_err(RunError::Workload)? {
            WorkItem::StartMeasurement => {
                assert!(!measuring, "workload announced measurement twice");
                measuring = true;
                device.start_measurement();
                observer(Event::MeasurementStarted);
            }
            WorkItem::Request(mut req) => {
                if let Some(a) = req.arrival_ns {
                    let base = *time_base.get_or_insert_with(|| device.now_ns());
                    req.arrival_ns = Some(base + a);
                }
                device.submit(&req).map_err(|error| RunError::Request { index, error })?;
                index += 1;
                if options.check_every_requests > 0 && index % options.check_every_requests == 0 {
                    device.check();
                }
                if options.progress_every_requests > 0
                    && index % options.progress_every_requests == 0
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
    // The buffer's dirty pages reach flash within the run, so its metrics count them.
    device.finish();
    if options.check_every_requests > 0 {
        device.check();
    }
    observer(Event::Progress { requests: index });
    Ok(device.metrics())
}
