//! Requests in flight: what the device knows of requests it has dispatched but whose
//! completion the run loop has not yet taken, and the device's side of the engine's clock —
//! timing queued operations as simulated time passes, and background cleaning on an idle
//! device (`ftl.gc_mode = "background"`).
//!
//! A dispatched request is either *timed* (its completion is known; kept in `known` until the
//! closed loop takes it with `wait_one`) or *queued* (some operation waits in a die queue; kept
//! in `queued` until the engine reports it finished). Time moves forward only: the engine times
//! queued operations in order of the time they may start, and a request's completion becomes
//! known no later than the simulated time it happens.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::{Completion, Device, Effects};
use crate::engine::{Class, Finished, Outcome};
use crate::request::RequestKind;

/// Who takes a request's completion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Track {
    /// The closed loop (`Wait::InFlight`): its completion time goes to `known` for `wait_one`.
    Closed,
    /// The caller waits for it (`Wait::Now`, the device's own work): `completion_of`.
    Wait,
    /// Nobody (an open-loop arrival, `Wait::Never`): only time passes it.
    Open,
}

/// A queued request's particulars, kept until its operations are all timed.
#[derive(Clone, Copy, Debug)]
pub(super) struct Waiting {
    pub kind: RequestKind,
    pub arrival_ns: u64,
    pub ram_ns: u64,
    /// The measurement window it was dispatched in (its latency is recorded only in it).
    pub window: u32,
    /// Who takes its completion.
    pub track: Track,
    pub effects: Effects,
}

impl Waiting {
    /// The device's own work (a sync, a write-back), started at `at_ns`.
    pub fn device(at_ns: u64) -> Self {
        Self {
            kind: RequestKind::Flush,
            arrival_ns: at_ns,
            ram_ns: 0,
            window: u32::MAX,
            track: Track::Wait,
            effects: Effects::default(),
        }
    }
}

#[derive(Debug, Default)]
pub(super) struct InFlight {
    /// Completion times of tracked requests, not yet taken by `wait_one`.
    known: BinaryHeap<Reverse<u64>>,
    /// Requests with queued operations, by tag (ascending: tags grow).
    queued: Vec<(u64, Waiting)>,
    /// Host requests among `queued`.
    queued_host: u32,
    /// Finished requests of the last engine step (reused).
    finished: Vec<Finished>,
    /// Completions of untracked queued requests, for `completion_of`.
    completed: Vec<(u64, Completion)>,
    /// The background cleaning step whose operations are queued, if any.
    background_tag: Option<u64>,
    /// When the last background step's operations end (the next may start then).
    background_until_ns: u64,
    /// The latest completion of a host request: the device is idle from then if nothing else
    /// is in flight.
    host_until_ns: u64,
}

impl InFlight {
    /// A host request completes at `complete_ns`: its completion goes where `track` says.
    pub fn completes(&mut self, track: Track, complete_ns: u64) {
        self.host_until_ns = self.host_until_ns.max(complete_ns);
        if track == Track::Closed {
            self.known.push(Reverse(complete_ns));
        }
    }

    pub fn expect(&mut self, tag: u64, w: Waiting) {
        debug_assert!(self.queued.last().is_none_or(|&(t, _)| t < tag), "tags grow");
        if w.window != u32::MAX {
            self.queued_host += 1;
        }
        self.queued.push((tag, w));
    }

    /// Drops a queued request nobody waits for (it failed); its operations still run.
    pub fn forget(&mut self, tag: u64) {
        if let Ok(i) = self.queued.binary_search_by_key(&tag, |&(t, _)| t) {
            let (_, w) = self.queued.remove(i);
            if w.window != u32::MAX {
                self.queued_host -= 1;
            }
        }
    }

    fn peek(&self, tag: u64) -> Option<Waiting> {
        let i = self.queued.binary_search_by_key(&tag, |&(t, _)| t).ok()?;
        Some(self.queued[i].1)
    }

    fn take(&mut self, tag: u64) -> Option<Waiting> {
        let i = self.queued.binary_search_by_key(&tag, |&(t, _)| t).ok()?;
        let (_, w) = self.queued.remove(i);
        if w.window != u32::MAX {
            self.queued_host -= 1;
        }
        Some(w)
    }
}

impl Device {
    /// Host requests dispatched with `Wait::InFlight` and not yet taken by `wait_one`, plus those
    /// whose operations are still queued.
    #[must_use]
    pub fn in_flight(&self) -> usize {
        self.inflight.known.len() + self.inflight.queued_host as usize
    }

    /// The one wait: for the next completion of a request dispatched with `Wait::InFlight`
    /// (timing queued operations as needed); returns its time, `None` with nothing in flight.
    /// What the closed loop calls when its queue is full.
    pub fn wait_one(&mut self) -> Option<u64> {
        loop {
            let top = self.inflight.known.peek().map(|Reverse(t)| *t);
            let event = self.ftl.flash().engine().next_event_ns();
            match (top, event) {
                // No queued operation can be timed to end before `top`.
                (Some(t), None) => {
                    self.inflight.known.pop();
                    return Some(t);
                }
                (Some(t), Some(e)) if t <= e || self.inflight.queued_host == 0 => {
                    self.inflight.known.pop();
                    return Some(t);
                }
                (_, Some(_)) => self.engine_step(),
                (None, None) => {
                    assert_eq!(self.inflight.queued_host, 0, "queued requests without events");
                    return None;
                }
            }
        }
    }

    /// Moves simulated time to `t_ns` (a request arriving then): the engine times what is
    /// queued before it, background cleaning runs while the device is idle before it, and
    /// completions known by then are taken.
    #[inline]
    pub(super) fn advance_to(&mut self, t_ns: u64) {
        // The common case, one request at a time on a device with nothing queued: only the
        // engine's clock moves.
        if !self.background && self.inflight.known.is_empty() {
            let engine = self.ftl.flash_mut().engine_mut();
            if engine.next_event_ns().is_none() {
                engine.set_clock(t_ns);
                return;
            }
        }
        self.advance_to_slow(t_ns);
    }

    #[inline(never)]
    fn advance_to_slow(&mut self, t_ns: u64) {
        loop {
            if let Some(s) = self.background_start() {
                if s < t_ns {
                    self.engine_advance_before(s);
                    if self.background_start() == Some(s) {
                        self.background_step(s);
                    }
                    continue;
                }
            }
            match self.ftl.flash().engine().next_event_ns() {
                Some(e) if e < t_ns => self.engine_step(),
                _ => break,
            }
        }
        self.ftl.flash_mut().engine_mut().advance_before(t_ns);
        while self.inflight.known.peek().is_some_and(|Reverse(c)| *c <= t_ns) {
            self.inflight.known.pop();
        }
    }

    /// Waits for every host request in flight (and the device's own work) to complete;
    /// background cleaning left queued stays queued.
    pub(crate) fn drain_host(&mut self) {
        while !self.inflight.queued.is_empty() {
            if self.ftl.flash().engine().next_event_ns().is_none() {
                break;
            }
            self.engine_step();
        }
        self.inflight.known.clear();
    }

    /// Times everything queued, background cleaning included, and takes every completion.
    pub fn drain(&mut self) {
        while self.ftl.flash().engine().next_event_ns().is_some() {
            self.engine_step();
        }
        assert_eq!(self.ftl.flash().engine().queued_ops(), 0, "operations left queued");
        self.inflight.known.clear();
        let horizon = self.ftl.flash().engine().horizon_ns();
        self.last_complete_ns = self.last_complete_ns.max(horizon);
    }

    /// The completion of queued request `tag` (dispatched with `Wait::Now`, or the device's own
    /// work): the engine runs until its operations are timed.
    pub(super) fn completion_of(&mut self, tag: u64) -> Completion {
        if self.real_time {
            return self.predicted(tag);
        }
        loop {
            if let Some(i) = self.inflight.completed.iter().position(|&(t, _)| t == tag) {
                return self.inflight.completed.swap_remove(i).1;
            }
            assert!(
                self.ftl.flash().engine().next_event_ns().is_some(),
                "request {tag} waits on operations that can never be timed"
            );
            self.engine_step();
        }
    }

    /// Queued request `tag`'s completion predicted on a copy of the engine (real time: see
    /// `Device::set_real_time`).
    fn predicted(&mut self, tag: u64) -> Completion {
        let w = self.inflight.peek(tag).expect("a queued request is kept until it finishes");
        let mut engine = self.ftl.flash().engine().clone();
        let mut finished = Vec::new();
        let (first, end) = loop {
            assert!(engine.step().is_some(), "request {tag} waits on operations never timed");
            engine.take_finished(&mut finished);
            if let Some(f) = finished.iter().find(|f| f.tag == tag) {
                break (f.first_start_ns, f.end_ns);
            }
            finished.clear();
        };
        let start_ns = first.max(w.arrival_ns);
        let complete_ns = end.max(w.arrival_ns).saturating_add(w.ram_ns);
        self.last_complete_ns = self.last_complete_ns.max(complete_ns);
        Completion {
            arrival_ns: w.arrival_ns,
            start_ns,
            complete_ns,
            service_ns: complete_ns - start_ns,
            effects: w.effects,
        }
    }

    fn engine_advance_before(&mut self, t_ns: u64) {
        while self.ftl.flash().engine().next_event_ns().is_some_and(|e| e < t_ns) {
            self.engine_step();
        }
        self.ftl.flash_mut().engine_mut().advance_before(t_ns);
    }

    /// One engine event; the requests it finished complete.
    fn engine_step(&mut self) {
        let engine = self.ftl.flash_mut().engine_mut();
        engine.step();
        let mut finished = std::mem::take(&mut self.inflight.finished);
        engine.take_finished(&mut finished);
        for f in finished.drain(..) {
            self.finished(&f);
        }
        self.inflight.finished = finished;
    }

    fn finished(&mut self, f: &Finished) {
        if self.inflight.background_tag == Some(f.tag) {
            self.inflight.background_tag = None;
            self.inflight.background_until_ns = f.end_ns;
            return;
        }
        let Some(w) = self.inflight.take(f.tag) else { return };
        if w.window == u32::MAX {
            // The device's own work.
            let c = Completion {
                arrival_ns: w.arrival_ns,
                start_ns: f.first_start_ns,
                complete_ns: f.end_ns,
                service_ns: f.end_ns - f.first_start_ns.min(f.end_ns),
                effects: w.effects,
            };
            self.last_complete_ns = self.last_complete_ns.max(f.end_ns);
            self.inflight.completed.push((f.tag, c));
            return;
        }
        // A time overflow of a queued request cannot be reported to anyone any more: its
        // completion saturates (the run loop's own checks stop such runs first).
        let (start_ns, complete_ns) = self
            .finish_request(w.kind, w.arrival_ns, w.ram_ns, w.window, f.first_start_ns, f.end_ns)
            .unwrap_or((w.arrival_ns, u64::MAX));
        let c = Completion {
            arrival_ns: w.arrival_ns,
            start_ns,
            complete_ns,
            service_ns: complete_ns - start_ns,
            effects: w.effects,
        };
        self.inflight.completes(w.track, c.complete_ns);
        if w.track == Track::Wait {
            self.inflight.completed.push((f.tag, c));
        }
    }

    /// When a background cleaning step may start: the device idle (no host request in flight
    /// or queued, the previous step's operations done) and the FTL asking for one.
    fn background_start(&self) -> Option<u64> {
        let f = &self.inflight;
        if !self.background
            || f.background_tag.is_some()
            || f.queued_host > 0
            || !f.queued.is_empty()
            || !self.ftl.wants_background_clean()
        {
            return None;
        }
        let engine = self.ftl.flash().engine();
        Some(
            f.host_until_ns
                .max(self.last_complete_ns)
                .max(f.background_until_ns)
                .max(engine.now_ns()),
        )
    }

    /// One background cleaning step at `at_ns` (one victim), its operations ranked last.
    fn background_step(&mut self, at_ns: u64) {
        let engine = self.ftl.flash_mut().engine_mut();
        let tag = engine.begin(Class::Background, at_ns);
        let cleaned = self.ftl.background_clean(at_ns);
        debug_assert!(cleaned, "background cleaning was wanted");
        let ram = self.take_ram_ns();
        debug_assert_eq!(ram, 0, "cleaning takes no RAM time");
        match self.ftl.flash_mut().engine_mut().end() {
            Outcome::Timed { end_ns, .. } => self.inflight.background_until_ns = end_ns,
            Outcome::Queued { tag: t } => {
                debug_assert_eq!(t, tag);
                self.inflight.background_tag = Some(t);
            }
        }
    }
}
