//! Synthetic workloads (docs/ALGORITHMS.md §10): sequential prefill, uniform random, hot/cold "x/y"
//! locality, and phases of those (the DAC paper's four-phase server run), here; Postmark and
//! embedded-device file-system workloads on a FAT volume model in `fat`, and portable-media-player
//! workloads on the same model in `media`. `Workload` builds the generator of any synthetic kind,
//! one repetition of it; `Repeated` (or `synthetic_items`) is the whole run, the measured part
//! issued `workload.repeat` times (`repeat`). Generators are seeded and pure, so a workload can be
//! generated twice identically (the oracle placement needs a look-ahead pass, and `Repeated`
//! rebuilds the generator for each repetition). Trace replay lives in the `nandlab-trace` crate and
//! produces the same `WorkItem`s.
//!
//! The rest of this comment describes `Synthetic` (the page-address kinds); `fat` and `media`
//! document their own sequences.
//!
//! Lengths are counted in host page writes: `passes` × logical pages. Sequence: prefill (every
//! logical page once, in order; untimed), warm-up (`warmup_passes`), `StartMeasurement`, then
//! the measured part (`passes`). Reads (`read_fraction`) are extra requests drawn from the same
//! address distribution and do not count toward the length.

pub mod fat;
pub mod kinds;
pub mod media;
mod repeat;

pub use repeat::Repeated;

pub mod spec;

use crate::error::ConfigError;
use crate::request::{Request, RequestKind};
use crate::rng::Prng;
pub use kinds::phases::PhaseConfig;
pub use kinds::trace::TraceKeys;
use kinds::{Generator, Plan};
pub use spec::{
    FsConfig, FsParams, MediaDefaults, WorkloadConfig, WorkloadSpec, MAX_WORKLOAD_SPAN_S,
    MEDIA_NAMES,
};

/// One step of a workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkItem {
    Request(Request),
    /// Another byte range of the host request just before it (a `Request` or `Continue`),
    /// same kind and arrival: a trace request that address fitting split at a chunk boundary.
    /// The pieces are served as one host request (`Device::submit_split`): one request count
    /// and one latency.
    Continue(Request),
    /// Everything before this is warm-up and excluded from the metrics.
    StartMeasurement,
    /// The prefill is over: the write buffer and the RAM region write their dirty pages back
    /// now, untimed and before any measurement, so a measured window never counts prefill
    /// writes (without it, a run with no warm-up measured up to one buffer of them).
    PrefillDone,
}

/// The address pattern of a page-address workload's main part (or of one of its phases).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Shape {
    Sequential,
    Uniform,
    /// Fraction `access` of requests go to the first fraction `data` of the logical pages.
    HotCold {
        access: f64,
        data: f64,
    },
}

/// One phase of a `phases` run: its pattern and its length (bytes written, or passes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Phase {
    pub shape: Shape,
    pub bytes: Option<u64>,
    pub passes: Option<f64>,
}

/// What a page-address workload writes after its prefill, warm-up and measured part alike.
#[derive(Clone, Debug, PartialEq)]
pub enum Mix {
    Single(Shape),
    /// Phases in order; the warm-up runs the same mix scaled to its length.
    Phases(Vec<Phase>),
}

/// The resolved plan of the page-address kinds (`sequential`, `uniform`, `hotcold`,
/// `phases`).
#[derive(Clone, Debug)]
pub struct SyntheticPlan {
    pub mix: Mix,
}

impl Plan for SyntheticPlan {
    fn generator(&self, spec: &WorkloadSpec) -> Result<Box<dyn Generator>, ConfigError> {
        let w = Synthetic::with(spec, &self.mix);
        w.check_arrival_span(spec.config.repeat)?;
        Ok(Box::new(w))
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// How a segment chooses the start page of each request.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Pattern {
    Sequential,
    Uniform,
    /// Fraction `access` of requests go to the first `hot_pages` pages.
    HotCold {
        access: f64,
        hot_pages: u64,
    },
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Segment {
    pattern: Pattern,
    page_writes: u64,
    timed: bool,
    measured: bool,
    /// The prefill: followed by `WorkItem::PrefillDone`.
    prefill: bool,
}

/// A seeded synthetic workload.
pub struct Synthetic {
    segments: Vec<Segment>,
    segment: usize,
    written: u64,
    seq_next: u64,
    logical_pages: u64,
    pages_per_request: u64,
    request_bytes: u64,
    page_size_bytes: u64,
    read_fraction: f64,
    /// Mean inter-arrival time (`None`: closed loop).
    interarrival_ns: Option<f64>,
    /// Arrivals are evenly spaced (`fixed`) rather than Poisson.
    fixed_interval: bool,
    /// Timed requests issued so far (the `fixed` clock).
    arrivals: u64,
    clock_ns: f64,
    rng: Prng,
    measurement_announced: bool,
}

fn pattern_of(shape: Shape, logical_pages: u64) -> Pattern {
    match shape {
        Shape::Sequential => Pattern::Sequential,
        Shape::HotCold { access, data } => {
            let hot_pages =
                ((logical_pages as f64 * data).round() as u64).clamp(1, logical_pages - 1);
            Pattern::HotCold { access, hot_pages }
        }
        Shape::Uniform => Pattern::Uniform,
    }
}

fn passes_to_pages(passes: f64, logical_pages: u64) -> u64 {
    (passes * logical_pages as f64).round() as u64
}

impl Synthetic {
    /// The page-address workload of a resolved config (`workload.kind` `sequential`,
    /// `uniform`, `hotcold` or `phases`; `Workload::new` handles every generated kind).
    ///
    /// # Panics
    /// For a config of another kind (a bug of the caller).
    #[must_use]
    pub fn new(r: &WorkloadSpec) -> Self {
        let plan = r.plan.as_any().downcast_ref::<SyntheticPlan>();
        Self::with(r, &plan.expect("a page-address workload kind").mix)
    }

    /// The workload of `mix` on the device, lengths, arrivals and seed of `r`.
    fn with(r: &WorkloadSpec, mix: &Mix) -> Self {
        let w = &r.config;
        let g = r.geometry;
        let lp = g.logical_pages;
        let main = |passes: f64, measured: bool| -> Vec<Segment> {
            match mix {
                Mix::Phases(phases) => {
                    let total: f64 =
                        phases.iter().map(|p| phase_pages(p, lp, g.page_size_bytes)).sum();
                    // Warm-up of a phases run: the same mix scaled to the warm-up length.
                    let scale = if measured { 1.0 } else { passes * lp as f64 / total.max(1.0) };
                    phases
                        .iter()
                        .map(|p| Segment {
                            pattern: pattern_of(p.shape, lp),
                            page_writes: (phase_pages(p, lp, g.page_size_bytes) * scale).round()
                                as u64,
                            timed: true,
                            prefill: false,
                            measured,
                        })
                        .collect()
                }
                Mix::Single(shape) => vec![Segment {
                    pattern: pattern_of(*shape, lp),
                    page_writes: passes_to_pages(passes, lp),
                    timed: true,
                    measured,
                    prefill: false,
                }],
            }
        };
        let mut segments = Vec::new();
        if w.prefill == Some(true) {
            segments.push(Segment {
                pattern: Pattern::Sequential,
                page_writes: lp,
                timed: false,
                measured: false,
                prefill: true,
            });
        }
        let warmup = w.warmup_passes.unwrap_or(0.0);
        if warmup > 0.0 {
            segments.extend(main(warmup, false));
        }
        let passes = w.passes.unwrap_or(1.0);
        segments.extend(main(passes, true));
        segments.retain(|s| s.page_writes > 0);

        let request_bytes = w.request_bytes.unwrap_or(g.page_size_bytes);
        let pages_per_request = request_bytes.div_ceil(g.page_size_bytes).max(1);
        let timed_page_writes: u64 =
            segments.iter().filter(|s| s.timed).map(|s| s.page_writes).sum();
        let timed_requests = timed_page_writes.div_ceil(pages_per_request) as f64
            / (1.0 - w.read_fraction).max(1e-9);
        let interarrival_ns = if w.arrival != "closed" {
            Some(match (w.arrival_rate_per_s, w.duration_s) {
                (Some(rate), _) => 1e9 / rate,
                (None, Some(d)) => d * 1e9 / timed_requests.max(1.0),
                (None, None) => unreachable!("resolve requires a rate or a duration"),
            })
        } else {
            None
        };
        Self {
            segments,
            segment: 0,
            written: 0,
            seq_next: 0,
            logical_pages: lp,
            pages_per_request,
            request_bytes,
            page_size_bytes: g.page_size_bytes,
            read_fraction: w.read_fraction,
            interarrival_ns,
            fixed_interval: w.arrival == "fixed",
            arrivals: 0,
            clock_ns: 0.0,
            rng: Prng::for_stream(r.seed, "workload"),
            measurement_announced: false,
        }
    }

    /// Poisson arrivals must end within `MAX_WORKLOAD_SPAN_S` of simulated time: beyond it the
    /// nanosecond clock would overflow (and a float cast would saturate every later arrival to
    /// the same instant, silently).
    fn check_arrival_span(&self, repeat: u64) -> Result<(), ConfigError> {
        let Some(mean_ns) = self.interarrival_ns else { return Ok(()) };
        let timed: u64 = self.segments.iter().filter(|s| s.timed).map(|s| s.page_writes).sum();
        let requests =
            timed.div_ceil(self.pages_per_request) as f64 / (1.0 - self.read_fraction).max(1e-9);
        let span_s = requests * mean_ns / 1e9 * repeat as f64;
        let max = spec::MAX_WORKLOAD_SPAN_S;
        if span_s.is_finite() && span_s <= max {
            return Ok(());
        }
        Err(ConfigError::new(
            "workload.arrival_rate_per_s",
            format!(
                "the timed arrivals would span {span_s:.3e} s of simulated time, more than the \
                 {max:.0e} s a run may cover: raise workload.arrival_rate_per_s (or lower \
                 workload.duration_s, workload.passes or workload.repeat)"
            ),
        ))
    }

    /// Requests this workload will issue, for progress bars (reads estimated).
    #[must_use]
    pub fn estimated_requests(&self) -> u64 {
        self.estimate(|_| true)
    }

    /// Requests of the measured part (after `StartMeasurement`), estimated the same way.
    #[must_use]
    pub fn estimated_measured_requests(&self) -> u64 {
        self.estimate(|s| s.measured)
    }

    fn estimate(&self, keep: impl Fn(&Segment) -> bool) -> u64 {
        let writes: u64 = self
            .segments
            .iter()
            .filter(|s| keep(s))
            .map(|s| s.page_writes.div_ceil(self.pages_per_request))
            .sum();
        (writes as f64 / (1.0 - self.read_fraction).max(1e-9)).round() as u64
    }

    fn start_page(&mut self, pattern: Pattern) -> u64 {
        let span = self.logical_pages.saturating_sub(self.pages_per_request - 1).max(1);
        match pattern {
            Pattern::Sequential => {
                let p = self.seq_next;
                self.seq_next = (p + self.pages_per_request) % self.logical_pages;
                p
            }
            Pattern::Uniform => self.rng.below(span),
            Pattern::HotCold { access, hot_pages } => {
                if self.rng.unit_f64() < access {
                    self.rng.below(hot_pages.min(span).max(1))
                } else {
                    let cold_span = span.saturating_sub(hot_pages).max(1);
                    hot_pages.min(span - 1) + self.rng.below(cold_span)
                }
            }
        }
    }
}

fn phase_pages(p: &Phase, logical_pages: u64, page_size_bytes: u64) -> f64 {
    match (p.bytes, p.passes) {
        (Some(b), _) => b.div_ceil(page_size_bytes) as f64,
        (None, Some(passes)) => passes * logical_pages as f64,
        (None, None) => 0.0,
    }
}

impl Iterator for Synthetic {
    type Item = WorkItem;

    fn next(&mut self) -> Option<WorkItem> {
        while self.segment < self.segments.len()
            && self.written >= self.segments[self.segment].page_writes
        {
            let done = self.segments[self.segment];
            self.segment += 1;
            self.written = 0;
            if done.prefill {
                return Some(WorkItem::PrefillDone);
            }
        }
        let seg = *self.segments.get(self.segment)?;
        if seg.measured && !self.measurement_announced {
            self.measurement_announced = true;
            return Some(WorkItem::StartMeasurement);
        }
        let is_read = self.read_fraction > 0.0
            && seg.pattern != Pattern::Sequential
            && self.rng.unit_f64() < self.read_fraction;
        let start = self.start_page(seg.pattern);
        let pages = if is_read {
            self.pages_per_request
        } else {
            self.pages_per_request.min(seg.page_writes - self.written)
        };
        let pages = pages.min(self.logical_pages - start);
        if !is_read {
            self.written += pages;
        }
        let length_bytes = if pages == 1 && self.request_bytes < self.page_size_bytes {
            self.request_bytes
        } else {
            pages * self.page_size_bytes
        };
        let arrival_ns = match (seg.timed, self.interarrival_ns) {
            (true, Some(mean)) => {
                if self.fixed_interval {
                    // n·mean, not a running sum, so rounding never drifts.
                    self.arrivals += 1;
                    self.clock_ns = (self.arrivals as f64 * mean).round();
                } else {
                    self.clock_ns += self.rng.exponential(mean);
                }
                Some(self.clock_ns as u64)
            }
            _ => None,
        };
        Some(WorkItem::Request(Request {
            kind: if is_read { RequestKind::Read } else { RequestKind::Write },
            offset_bytes: start * self.page_size_bytes,
            length_bytes,
            arrival_ns,
        }))
    }
}

impl Generator for Synthetic {
    fn estimated_requests(&self) -> u64 {
        Synthetic::estimated_requests(self)
    }
    fn estimated_measured_requests(&self) -> u64 {
        Synthetic::estimated_measured_requests(self)
    }
}

/// The generator of any generated workload kind (everything but a replayed one): its kind's
/// plan builds it.
pub struct Workload(Box<dyn Generator>);

impl Workload {
    /// The workload of a resolved config. Fails for a replayed kind (`trace`, replayed by
    /// `nandlab-run`) and for a file-system workload whose volume cannot hold its files.
    pub fn new(r: &WorkloadSpec) -> Result<Self, ConfigError> {
        r.plan.generator(r).map(Self)
    }

    /// Requests the workload will issue, for progress bars (an estimate where it depends on
    /// random choices).
    #[must_use]
    pub fn estimated_requests(&self) -> u64 {
        self.0.estimated_requests()
    }

    /// Requests of the measured part alone (after `StartMeasurement`), estimated likewise.
    #[must_use]
    pub fn estimated_measured_requests(&self) -> u64 {
        self.0.estimated_measured_requests()
    }
}

impl Iterator for Workload {
    type Item = WorkItem;

    #[inline]
    fn next(&mut self) -> Option<WorkItem> {
        self.0.next()
    }
}

/// The items of a whole run of any synthetic workload kind (`Repeated`: the measured part
/// `workload.repeat` times), boxed.
pub fn synthetic_items(
    r: &WorkloadSpec,
) -> Result<Box<dyn Iterator<Item = WorkItem> + Send>, ConfigError> {
    Ok(Box::new(Repeated::new(r)?))
}

/// `Repeated::estimated_requests` of a resolved config (every repetition counted).
pub fn estimated_requests(r: &WorkloadSpec) -> Result<u64, ConfigError> {
    Ok(Repeated::new(r)?.estimated_requests())
}

#[cfg(test)]
mod fat_tests;
#[cfg(test)]
mod media_tests;
#[cfg(test)]
mod tests;
