//! `workload.repeat`: a generated workload whose measured part is issued K times in a row.
//!
//! Wear-leveling and stability studies (the lazy wear-leveling paper) run one workload over and
//! over on the same device and watch how erase counts spread. Sequence: prefill and warm-up once,
//! then `StartMeasurement`, then K repetitions of the measured part — what replaying a recorded
//! trace K times does (trace workloads get the same from `nandlab-run`, where `workload.repeat`
//! multiplies the measured replays).
//!
//! Repetition 1 is the generator itself. For repetitions 2..K a fresh generator is built from
//! the same resolved config and its items up to and including its `StartMeasurement` are
//! dropped. Generators are seeded and pure, so every repetition is the identical measured
//! sequence, whatever the workload kind, with no generator needing to be cloneable (the FAT
//! models hold whole volumes). The cost: the unmeasured prefix (prefill, warm-up, and for the
//! file-system kinds the format and population) is generated K times instead of once —
//! generation only, no device work: for page-address workloads an RNG draw per skipped page,
//! far cheaper than the simulated write of a measured page; the file-system models redo their
//! volume bookkeeping, which costs more.
//!
//! A file-system repetition therefore starts from the volume model's state after the warm-up,
//! not from where the previous repetition left it: a replay of the same requests, as with a
//! trace, not a continuation of the file system's life.
//!
//! Timed arrivals (`Request::arrival_ns`, relative to the first timed request) must not go
//! backwards, so repetition r (from 0) is shifted by r × period, where period = the span of
//! repetition 0's measured arrivals (last − first) plus one mean gap between them — the shift
//! `TraceItems` applies between trace replays. Repetitions follow one another in time at the
//! workload's own rate.

use super::WorkloadSpec;
use crate::error::ConfigError;

use super::{WorkItem, Workload};

/// The whole run of a generated workload: the measured part `workload.repeat` times (see the
/// module doc). With `repeat = 1` it yields exactly the generator's items.
pub struct Repeated {
    spec: WorkloadSpec,
    current: Workload,
    repeat: u64,
    /// The repetition being issued, from 0.
    rep: u64,
    /// Repetition 0 has passed its `StartMeasurement`.
    measuring: bool,
    /// Repetition 0's timed arrivals: the last one before the measured part, the measured
    /// part's first and last, and how many it has.
    before_ns: Option<u64>,
    first_ns: Option<u64>,
    last_ns: u64,
    timed: u64,
    /// Added to the current repetition's arrivals.
    shift_ns: u64,
    period_ns: u64,
    estimated_requests: u64,
}

impl Repeated {
    /// The run of a resolved config. Fails where `Workload::new` does.
    pub fn new(r: &WorkloadSpec) -> Result<Self, ConfigError> {
        let current = Workload::new(r)?;
        let repeat = r.config.repeat.max(1);
        let estimated_requests = current
            .estimated_requests()
            .saturating_add((repeat - 1).saturating_mul(current.estimated_measured_requests()));
        Ok(Self {
            spec: r.clone(),
            current,
            repeat,
            rep: 0,
            measuring: false,
            before_ns: None,
            first_ns: None,
            last_ns: 0,
            timed: 0,
            shift_ns: 0,
            period_ns: 0,
            estimated_requests,
        })
    }

    /// Requests the whole run will issue, for progress bars: the generator's estimate plus
    /// K − 1 times its measured part's.
    #[must_use]
    pub fn estimated_requests(&self) -> u64 {
        self.estimated_requests
    }

    /// Repetition 0's arrivals: remembers what the period needs.
    fn observe(&mut self, arrival_ns: u64) {
        if self.measuring {
            self.first_ns.get_or_insert(arrival_ns);
            self.last_ns = arrival_ns;
            self.timed += 1;
        } else {
            self.before_ns = Some(arrival_ns);
        }
    }

    /// Starts the next repetition: a fresh generator, its unmeasured prefix skipped.
    fn next_repetition(&mut self) {
        if self.rep == 0 {
            self.period_ns = match self.first_ns {
                // Closed loop: nothing to shift.
                None => 0,
                Some(first) => {
                    let span = self.last_ns - first;
                    let gap = if self.timed > 1 {
                        span / (self.timed - 1)
                    } else {
                        first - self.before_ns.unwrap_or(0)
                    };
                    // At least 1 ns, so the next repetition's first arrival comes strictly
                    // after this one's last.
                    span.saturating_add(gap.max(1))
                }
            };
        }
        self.rep += 1;
        self.shift_ns = self.rep.saturating_mul(self.period_ns);
        // `Workload::new` is a pure function of the config, which built a workload once already.
        self.current = Workload::new(&self.spec).expect("the config built this workload once");
        for item in self.current.by_ref() {
            if item == WorkItem::StartMeasurement {
                break;
            }
        }
    }
}

impl Iterator for Repeated {
    type Item = WorkItem;

    #[inline]
    fn next(&mut self) -> Option<WorkItem> {
        loop {
            match self.current.next() {
                Some(WorkItem::Request(mut req)) => {
                    if let Some(a) = req.arrival_ns {
                        if self.rep == 0 {
                            if self.repeat > 1 {
                                self.observe(a);
                            }
                        } else {
                            req.arrival_ns = Some(a.saturating_add(self.shift_ns));
                        }
                    }
                    return Some(WorkItem::Request(req));
                }
                Some(WorkItem::PrefillDone) => return Some(WorkItem::PrefillDone),
                Some(WorkItem::Continue(_)) => {
                    unreachable!("generated workloads never split a request")
                }
                // Only repetition 0 yields its marker: later ones skip theirs.
                Some(WorkItem::StartMeasurement) => {
                    self.measuring = true;
                    return Some(WorkItem::StartMeasurement);
                }
                // A generator with no measured part has nothing to repeat.
                None if self.rep + 1 < self.repeat && self.measuring => self.next_repetition(),
                None => return None,
            }
        }
    }
}
