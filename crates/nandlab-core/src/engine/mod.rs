//! The SSD sim-engine (the virtual-platform report, docs/PAPERS.md; docs/ALGORITHMS.md §7): when
//! every flash operation runs on the device's parallel hardware (`hardware`: gangs of
//! lock-stepped channels, chips, dies, planes), and so when every host request completes.
//!
//! The FTL works *functionally first*: a request changes the FTL's tables when it is dispatched
//! (at its arrival), and each flash operation it causes is handed here. The engine times it on
//! per-resource timelines:
//! - each **die** runs one operation at a time (array time, and its page register holds data
//!   until transferred), in the order the scheduler picks;
//! - each **gang's bus** carries commands and data transfers, one at a time, placed in the
//!   earliest free slot at or after they are ready (`bus`).
//!
//! Operation shapes (c = `timing.command_ns`, x = `timing.transfer_page_ns`):
//! - read: c on the bus; t_R on the die; x on the bus (data out). Die busy throughout.
//! - program: c + x on the bus (command, data in); t_PROG on the die.
//! - erase: c on the bus; t_BERS on the die.
//! - copyback (`timing.copy_page_ns` > 0, source and target in one plane): c; copy time on the
//!   die. A copy between planes is a read then a program that waits for it.
//!
//! With one die the phases of consecutive operations never overlap, so a request takes the sum
//! of its operations' times, exactly the serialized timing of earlier versions.
//!
//! **Multi-plane operations**: consecutive operations of one request (or, when the scheduler
//! picks from a queue, of one pick) on one die merge when they have the same kind, target
//! different planes and — for reads and programs — the same page offset in their blocks: one
//! command, one array time, each plane's data moved over the bus in turn. Erases merge on any
//! blocks of different planes; copybacks never merge.
//!
//! **Scheduling** (`scheduler`): each operation has a class — host read, host write (writes,
//! trims, flushes and the foreground cleaning they cause) or background (background cleaning) —
//! and the scheduler gives each class a rank. Operations of the best rank are timed when issued
//! (no later operation can overtake them); others wait in per-die queues and are timed only
//! when their die becomes free and nothing better is waiting, so a later host read passes a
//! queued write (`read-priority`) and host work passes background cleaning (which is thereby
//! preempted between operations, never inside one). A request whose operations all are timed
//! is complete at its last operation's end; otherwise it completes when its last queued
//! operation has been timed (`take_finished`).

pub mod bus;
mod events;
pub mod hardware;
pub mod scheduler;

use std::collections::VecDeque;

use bus::Bus;
use events::Events;
pub use hardware::{Hardware, Timing};
pub use scheduler::SchedulerSpec;

use crate::fastdiv::Divisor;

/// What an operation does to its die and bus.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpKind {
    Read,
    Program,
    Erase,
    /// On-chip copy of a page inside one plane.
    Copyback,
}

/// Why an operation is issued: the scheduler ranks classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// Operations of host read requests.
    HostRead = 0,
    /// Operations of every other host request (writes, trims, flushes), with the foreground
    /// cleaning and buffer write-backs they cause, and the device's own work (shutdown, sync).
    HostWrite = 1,
    /// Background cleaning on an idle device (`ftl.gc_mode = "background"`).
    Background = 2,
}

pub const CLASSES: usize = 3;

/// An issued operation: timed (it ends at the given time) or queued (its id).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpRef {
    Done(u64),
    Queued(u32),
}

/// How a request's operations went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every operation is timed: the first started at `first_start_ns` (its arrival if it had
    /// none) and the last ends at `end_ns`.
    Timed { first_start_ns: u64, end_ns: u64 },
    /// Some operations wait in queues; `take_finished` reports the request by `tag` once its
    /// last one is timed.
    Queued { tag: u64 },
}

/// A request whose queued operations have all been timed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Finished {
    pub tag: u64,
    pub class: Class,
    pub first_start_ns: u64,
    pub end_ns: u64,
}

/// Busy time per unit, cumulative.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EngineStats {
    /// Per die: time its array or page registers were in use.
    pub die_busy_ns: Vec<u64>,
    /// Per gang: time its bus carried commands or data.
    pub bus_busy_ns: Vec<u64>,
    /// The latest time any operation timed so far ends.
    pub horizon_ns: u64,
}

const NONE: u32 = u32::MAX;
/// Queued operations of one rank a die's scheduler looks at (for one whose data is in).
const QUEUE_SCAN: usize = 128;
const UNKNOWN: u64 = u64::MAX;

#[derive(Clone, Copy, Debug)]
struct Times {
    command: u64,
    read: u64,
    program: u64,
    erase: u64,
    transfer: u64,
    copyback: u64,
}

impl Times {
    fn of(t: &Timing) -> Self {
        Self {
            command: t.command_ns,
            read: t.read_page_ns,
            program: t.program_page_ns,
            erase: t.erase_block_ns,
            transfer: t.transfer_page_ns,
            copyback: t.copy_page_ns.unwrap_or(0),
        }
    }

    /// Die time of an operation run alone (for load estimates).
    fn alone(&self, kind: OpKind) -> u64 {
        self.command
            + match kind {
                OpKind::Read => self.read + self.transfer,
                OpKind::Program => self.transfer + self.program,
                OpKind::Erase => self.erase,
                OpKind::Copyback => self.copyback,
            }
    }
}

/// The last operation timed on a die, which a following one may join as a multi-plane
/// operation.
#[derive(Clone, Copy, Debug)]
struct LastOp {
    /// The request (or scheduler pick) it belongs to; 0 = none.
    batch: u64,
    kind: OpKind,
    /// Planes it covers (bit per plane of the die).
    planes: u64,
    page: u32,
    /// When its array phase starts and ends (reads: ends before the data goes out).
    array_start: u64,
    array_end: u64,
    /// End of its last bus phase so far.
    bus_end: u64,
    end: u64,
}

/// The dies' loads as allocation scans them (`Engine::die_loads`).
#[derive(Clone, Copy)]
pub struct DieLoads<'a> {
    dies: &'a [Die],
    now_ns: u64,
}

impl DieLoads<'_> {
    /// `Engine::die_load_ns` of `die`.
    #[inline(always)]
    #[must_use]
    pub fn load_ns(&self, die: u32) -> u64 {
        let d = &self.dies[die as usize];
        d.free_ns.max(self.now_ns) + d.backlog_ns
    }

    /// The least load a die can have (nothing to do: the engine's clock).
    #[inline(always)]
    #[must_use]
    pub fn idle_ns(&self) -> u64 {
        self.now_ns
    }
}

/// A die's timeline (kept small: allocation reads every die's on every page written).
#[derive(Clone, Debug)]
struct Die {
    free_ns: u64,
    /// Estimated die time of the queued operations (for load-based allocation).
    backlog_ns: u64,
    busy_ns: u64,
    /// The request (or scheduler pick) whose operation was timed last on this die: while it
    /// is the current request, the die's whole future belongs to it.
    chain: u64,
    /// Ranks with queued operations (a bit per rank).
    queued_ranks: u8,
}

/// A queued operation.
#[derive(Clone, Copy, Debug)]
struct Queued {
    kind: OpKind,
    plane: u32,
    page: u32,
    rank: u8,
    /// Its request's slot in `requests`.
    request: u32,
    /// Earliest start; `UNKNOWN` while the operation it depends on is queued.
    ready_ns: u64,
    /// Operations waiting for this one (a list through `next_dependent`).
    dependents: u32,
    next_dependent: u32,
}

/// A request with queued operations.
#[derive(Clone, Copy, Debug)]
struct Pending {
    tag: u64,
    class: Class,
    first_start_ns: u64,
    end_ns: u64,
    queued: u32,
    /// Its dispatch has ended (`Engine::end`): it finishes when `queued` reaches 0.
    closed: bool,
    /// Nobody waits for it (work issued outside `begin`/`end`).
    orphan: bool,
}

/// The request being dispatched.
#[derive(Clone, Copy, Debug)]
struct Current {
    tag: u64,
    class: Class,
    rank: u8,
    /// Its operations start no earlier (its arrival).
    at_ns: u64,
    /// Operations issued from now on also wait for this one (read-modify-write).
    after: OpRef,
    first_start_ns: u64,
    end_ns: u64,
    /// Slot in `requests` once an operation was queued, else `NONE`.
    slot: u32,
    /// Opened by `begin` (not the implicit context of work issued outside requests).
    explicit: bool,
    /// The fast path of one die of one plane (`Engine::single`) with nothing queued and a
    /// class of the best rank: the request's operations run back to back from `first_start_ns`
    /// (fixed at `begin`), so each only adds its plain time to `end_ns` and the die's state is
    /// updated once, at `end`.
    fast: bool,
    /// Bus time of the operations on the fast path (for the die's bus statistics).
    fast_bus_ns: u64,
}

#[derive(Clone)]
pub struct Engine {
    hw: Hardware,
    t: Times,
    planes_per_die: u32,
    /// Divides by `planes_per_die`.
    ppd: Divisor,
    dies: Vec<Die>,
    /// Each die's last operation (multi-plane hardware only).
    last: Vec<LastOp>,
    /// Each operation kind's shape: bus time before its array phase, array time, bus time
    /// after (see the module doc).
    shape: [(u64, u64, u64); 4],
    /// Queued operations of each die by rank, issue order within each.
    queues: Vec<[VecDeque<u32>; CLASSES]>,
    /// Gang of each die.
    gang_of_die: Vec<u32>,
    buses: Vec<Bus>,
    /// Whether a gang's bus is shared by more than one die (otherwise its die's timeline
    /// already serializes its transfers, and no slot needs recording).
    bus_shared: Vec<bool>,
    /// One die of one plane: every operation's phases follow each other, so an operation
    /// takes its plain time (`alone_ns`) from when the die is free — the fast path.
    single: bool,
    /// Die time of each operation kind run alone, and the part of it on the bus.
    alone_ns: [u64; 4],
    bus_ns: [u64; 4],
    /// Die and bus time of a page copy on the fast path (`copy_fast`): a copyback when the
    /// timing has one, else a read and a program.
    copy_alone_ns: u64,
    copy_bus_ns: u64,
    /// Rank of each class (lower goes first); ops of the best rank are timed when issued.
    rank: [u8; CLASSES],
    best_rank: u8,
    /// The engine's clock: no operation will be timed to start before it.
    now_ns: u64,
    cur: Current,
    next_tag: u64,
    queued: Vec<Queued>,
    free_queued: Vec<u32>,
    requests: Vec<Pending>,
    free_requests: Vec<u32>,
    /// Queued operations over all dies.
    queued_count: u32,
    /// When each die's queue may next start an operation.
    events: Events,
    finished: Vec<Finished>,
    /// The operations one event times (reused).
    picked: Vec<(u32, (u64, u64))>,
    horizon_ns: u64,
    /// Counts only (`run.timing = "off"`, `count_only`): no operation is timed.
    counting: bool,
}

impl Engine {
    #[must_use]
    pub fn new(hw: Hardware, timing: &Timing, scheduler: &dyn SchedulerSpec) -> Self {
        let dies = hw.dies();
        let ppd = hw.planes_per_die;
        assert!(dies >= 1 && ppd >= 1);
        assert!(ppd <= 64, "the plane mask of a multi-plane operation is a u64");
        let rank = scheduler.ranks();
        let best_rank = *rank.iter().min().expect("classes");
        assert!(rank.iter().all(|&r| usize::from(r) < CLASSES));
        let last = LastOp {
            batch: 0,
            kind: OpKind::Erase,
            planes: 0,
            page: 0,
            array_start: 0,
            array_end: 0,
            bus_end: 0,
            end: 0,
        };
        let die = Die { free_ns: 0, backlog_ns: 0, busy_ns: 0, chain: 0, queued_ranks: 0 };
        let gang_of_die: Vec<u32> = (0..dies).map(|d| hw.gang_of_die(d)).collect();
        let t = Times::of(timing);
        let kinds = [OpKind::Read, OpKind::Program, OpKind::Erase, OpKind::Copyback];
        let shape = kinds.map(|k| match k {
            OpKind::Read => (t.command, t.read, t.transfer),
            OpKind::Program => (t.command + t.transfer, t.program, 0),
            OpKind::Erase => (t.command, t.erase, 0),
            OpKind::Copyback => (t.command, t.copyback, 0),
        });
        let alone_ns = kinds.map(|k| t.alone(k));
        let bus_ns = kinds.map(|k| match k {
            OpKind::Read | OpKind::Program => t.command + t.transfer,
            OpKind::Erase | OpKind::Copyback => t.command,
        });
        let (r, p, cb) =
            (OpKind::Read as usize, OpKind::Program as usize, OpKind::Copyback as usize);
        let (copy_alone_ns, copy_bus_ns) = if timing.copy_page_ns.is_some() {
            (alone_ns[cb], bus_ns[cb])
        } else {
            (alone_ns[r] + alone_ns[p], bus_ns[r] + bus_ns[p])
        };
        let mut engine = Self {
            hw,
            t,
            copy_alone_ns,
            copy_bus_ns,
            planes_per_die: ppd,
            ppd: Divisor::new(u64::from(ppd)),
            single: dies == 1 && ppd == 1,
            shape,
            alone_ns,
            bus_ns,
            dies: vec![die; dies as usize],
            last: vec![last; dies as usize],
            queues: vec![Default::default(); dies as usize],
            gang_of_die,
            buses: vec![Bus::default(); hw.gangs as usize],
            bus_shared: vec![hw.dies_per_gang() > 1; hw.gangs as usize],
            rank,
            best_rank,
            now_ns: 0,
            cur: Current {
                tag: 0,
                class: Class::HostWrite,
                rank: 0,
                at_ns: 0,
                after: OpRef::Done(0),
                first_start_ns: UNKNOWN,
                end_ns: 0,
                slot: NONE,
                explicit: false,
                fast: false,
                fast_bus_ns: 0,
            },
            next_tag: 1,
            queued: Vec::new(),
            free_queued: Vec::new(),
            requests: Vec::new(),
            free_requests: Vec::new(),
            queued_count: 0,
            events: Events::new(dies as usize),
            finished: Vec::new(),
            picked: Vec::new(),
            horizon_ns: 0,
            counting: false,
        };
        engine.implicit(0);
        engine
    }

    /// Stops timing (`run.timing = "off"`): every operation from now on takes no time and
    /// leaves no trace in the engine, and requests begin and end at the clock, which stays
    /// where it is. The operations take the fast path with zero times, so the per-operation
    /// cost is the timed one-die path's few additions; `begin` and `end` check the flag once
    /// per request. The flash's counters still count every operation.
    pub fn count_only(&mut self) {
        assert!(self.events.is_empty() && self.queued_count == 0, "count_only with work queued");
        self.counting = true;
        self.alone_ns = [0; 4];
        self.bus_ns = [0; 4];
        self.copy_alone_ns = 0;
        self.copy_bus_ns = 0;
        self.cur.fast = true;
        self.cur.explicit = false;
        self.cur.end_ns = self.now_ns;
        self.cur.first_start_ns = self.now_ns;
    }

    /// Whether the engine only counts (`count_only`).
    #[must_use]
    pub fn counting(&self) -> bool {
        self.counting
    }

    #[must_use]
    pub fn hardware(&self) -> &Hardware {
        &self.hw
    }

    /// The engine's clock (the latest dispatch or event time).
    #[must_use]
    pub fn now_ns(&self) -> u64 {
        self.now_ns
    }

    /// Moves the clock to `at_ns` without timing anything (a resumed device starts at the time
    /// its image was saved; the first operations start no earlier).
    pub fn start_at(&mut self, at_ns: u64) {
        assert!(self.queued_count == 0, "start_at with queued operations");
        self.now_ns = self.now_ns.max(at_ns);
        for d in &mut self.dies {
            d.free_ns = d.free_ns.max(at_ns);
        }
        self.horizon_ns = self.horizon_ns.max(at_ns);
        self.implicit(self.now_ns);
    }

    /// The latest end of any operation timed so far.
    #[must_use]
    pub fn horizon_ns(&self) -> u64 {
        self.horizon_ns
    }

    /// Operations waiting in queues.
    #[must_use]
    pub fn queued_ops(&self) -> u32 {
        self.queued_count
    }

    /// When die `die` will have done everything timed or queued for it, estimated from its
    /// free time and the plain time of its queued operations (allocation's load measure).
    #[inline(always)]
    #[must_use]
    pub fn die_load_ns(&self, die: u32) -> u64 {
        self.die_loads().load_ns(die)
    }

    /// Every die's load (`die_load_ns`), for scanning them all.
    #[inline(always)]
    #[must_use]
    pub fn die_loads(&self) -> DieLoads<'_> {
        DieLoads { dies: &self.dies, now_ns: self.now_ns }
    }

    /// Cumulative busy time of every die and bus.
    #[must_use]
    pub fn stats(&self) -> EngineStats {
        EngineStats {
            die_busy_ns: self.dies.iter().map(|d| d.busy_ns).collect(),
            bus_busy_ns: self.buses.iter().map(|b| b.busy_ns).collect(),
            horizon_ns: self.horizon_ns,
        }
    }

    // ---- requests ---------------------------------------------------------------------------

    /// Starts a request of `class` arriving at `at_ns` (not before the clock's last dispatch:
    /// arrivals are dispatched in order). Operations issued until `end` belong to it.
    #[inline(always)]
    pub fn begin(&mut self, class: Class, at_ns: u64) -> u64 {
        debug_assert!(at_ns >= self.now_ns, "a request dispatched in the past");
        if self.counting {
            return self.new_tag();
        }
        let rank = self.rank[class as usize];
        // The one-die fast path writes only the fields its operations and `end` read (the
        // rest keep what `end` left: no slot, nothing to wait for); everything else goes
        // through `begin_general`.
        if self.single
            && rank == self.best_rank
            && self.dies[0].queued_ranks == 0
            && self.cur.slot == NONE
        {
            debug_assert!(!self.cur.explicit, "begin inside a request");
            self.now_ns = self.now_ns.max(at_ns);
            let tag = self.new_tag();
            let start = self.now_ns.max(self.dies[0].free_ns);
            let c = &mut self.cur;
            c.tag = tag;
            c.class = class;
            c.rank = rank;
            c.at_ns = self.now_ns;
            c.first_start_ns = start;
            c.end_ns = start;
            c.explicit = true;
            c.fast = true;
            c.fast_bus_ns = 0;
            c.after = OpRef::Done(self.now_ns);
            return tag;
        }
        self.begin_general(class, at_ns)
    }

    #[inline(never)]
    fn begin_general(&mut self, class: Class, at_ns: u64) -> u64 {
        self.close_implicit();
        self.now_ns = self.now_ns.max(at_ns);
        let tag = self.new_tag();
        let rank = self.rank[class as usize];
        let fast = self.single && rank == self.best_rank && self.dies[0].queued_ranks == 0;
        let start = if fast { self.now_ns.max(self.dies[0].free_ns) } else { UNKNOWN };
        self.cur = Current {
            tag,
            class,
            rank,
            at_ns: self.now_ns,
            after: OpRef::Done(self.now_ns),
            first_start_ns: start,
            end_ns: if fast { start } else { self.now_ns },
            slot: NONE,
            explicit: true,
            fast,
            fast_bus_ns: 0,
        };
        tag
    }

    /// Ends the current request: timed (every operation timed) or queued.
    #[inline(always)]
    pub fn end(&mut self) -> Outcome {
        if self.counting {
            return Outcome::Timed { first_start_ns: self.now_ns, end_ns: self.now_ns };
        }
        assert!(self.cur.explicit, "end without begin");
        if self.cur.fast {
            // The die's state, deferred from the operations.
            let c = &mut self.cur;
            let (first, end) = (c.first_start_ns, c.end_ns);
            // What follows outside a request is the device's own work, at the clock.
            c.explicit = false;
            c.fast = false;
            c.first_start_ns = UNKNOWN;
            c.at_ns = self.now_ns;
            c.end_ns = self.now_ns;
            if end > first {
                let d = &mut self.dies[0];
                d.busy_ns += end - first;
                d.free_ns = end;
                self.buses[0].busy_ns += c.fast_bus_ns;
                self.horizon_ns = self.horizon_ns.max(end);
                return Outcome::Timed { first_start_ns: first, end_ns: end };
            }
            return Outcome::Timed { first_start_ns: self.now_ns, end_ns: self.now_ns };
        }
        self.end_general()
    }

    #[inline(never)]
    fn end_general(&mut self) -> Outcome {
        let c = self.cur;
        let outcome = if c.slot == NONE {
            let first = if c.first_start_ns == UNKNOWN { c.at_ns } else { c.first_start_ns };
            Outcome::Timed { first_start_ns: first, end_ns: c.end_ns }
        } else {
            let r = &mut self.requests[c.slot as usize];
            r.closed = true;
            r.first_start_ns = r.first_start_ns.min(c.first_start_ns);
            r.end_ns = r.end_ns.max(c.end_ns);
            Outcome::Queued { tag: c.tag }
        };
        self.implicit(self.now_ns);
        outcome
    }

    /// Operations issued from now on in this request wait for `after` as well (a program that
    /// writes back what a read fetched). `OpRef::Done(0)` clears it.
    pub fn set_after(&mut self, after: OpRef) {
        self.cur.after = match after {
            OpRef::Done(t) => OpRef::Done(t.max(self.cur.at_ns)),
            q => q,
        };
    }

    /// Requests whose queued operations have all been timed since the last call (appended to
    /// `out`).
    pub fn take_finished(&mut self, out: &mut Vec<Finished>) {
        out.append(&mut self.finished);
    }

    /// The earliest time a queued operation may be timed (`None` if nothing is queued or every
    /// queued operation waits for another).
    #[must_use]
    pub fn next_event_ns(&self) -> Option<u64> {
        self.events.peek().map(|(t, _)| t)
    }

    /// Times the queued operations whose turn comes strictly before `t_ns`, in time order, and
    /// moves the clock to `t_ns`.
    pub fn advance_before(&mut self, t_ns: u64) {
        while let Some(e) = self.events.peek() {
            if e.0 >= t_ns {
                break;
            }
            if self.events.take(e) {
                self.service(e.1, e.0);
            }
        }
        self.now_ns = self.now_ns.max(t_ns);
    }

    /// Moves the clock to `t_ns` when nothing is queued (`advance_before` without events).
    #[inline]
    pub fn set_clock(&mut self, t_ns: u64) {
        debug_assert!(self.events.is_empty());
        self.now_ns = self.now_ns.max(t_ns);
    }

    /// Times the queued operations whose turn comes at the next event time (`None`: nothing
    /// can be timed).
    pub fn step(&mut self) -> Option<u64> {
        let (at, _) = self.events.peek()?;
        while let Some(e) = self.events.peek() {
            if e.0 != at {
                break;
            }
            if self.events.take(e) {
                self.service(e.1, at);
            }
        }
        Some(at)
    }

    // ---- operations -------------------------------------------------------------------------

    /// Whether the hardware is one die of one plane (operations need no address: `op` may be
    /// given plane 0, page 0).
    #[inline(always)]
    #[must_use]
    pub fn single(&self) -> bool {
        self.single
    }

    /// Issues an operation on `plane` (page offset `page` in its block) for the current
    /// request, after `after` (and anything `set_after` named).
    #[inline(always)]
    pub fn op(&mut self, kind: OpKind, plane: u32, page: u32, after: OpRef) -> OpRef {
        if self.cur.fast {
            let c = &mut self.cur;
            c.end_ns = c.end_ns.saturating_add(self.alone_ns[kind as usize]);
            c.fast_bus_ns += self.bus_ns[kind as usize];
            return OpRef::Done(c.end_ns);
        }
        if self.single {
            if let (OpRef::Done(a), OpRef::Done(b)) = (after, self.cur.after) {
                let d = &self.dies[0];
                let start = self.cur.at_ns.max(a).max(b).max(d.free_ns);
                if d.queued_ranks == 0 && (self.cur.rank == self.best_rank || start <= self.now_ns)
                {
                    return self.op_single(kind, start);
                }
            }
        }
        self.op_general(kind, plane, page, after)
    }

    /// On the fast path (one die of one plane, nothing queued: `single` and a request of the
    /// best rank), times a page copy — a copyback when the timing has one, else a read then the program of
    /// what it read —
    /// in one step and returns true; otherwise does nothing and returns false (the caller
    /// issues the copy's operations). A cleaner or merge copies many pages per request, so the
    /// one-die device keeps its pre-engine cost per copied page.
    #[inline(always)]
    pub fn copy_fast(&mut self) -> bool {
        if !self.cur.fast {
            return false;
        }
        let c = &mut self.cur;
        c.end_ns = c.end_ns.saturating_add(self.copy_alone_ns);
        c.fast_bus_ns += self.copy_bus_ns;
        true
    }

    /// Two operations, the second waiting for the first (a page copy between planes: a read,
    /// then the program of what it read). Returns the second's reference.
    #[inline(always)]
    pub fn op_then(&mut self, first: (OpKind, u32, u32), then: (OpKind, u32, u32)) -> OpRef {
        if self.cur.fast {
            self.op(first.0, first.1, first.2, OpRef::Done(0));
            return self.op(then.0, then.1, then.2, OpRef::Done(0));
        }
        if self.single {
            if let OpRef::Done(b) = self.cur.after {
                let d = &self.dies[0];
                let start = self.cur.at_ns.max(b).max(d.free_ns);
                if d.queued_ranks == 0 && (self.cur.rank == self.best_rank || start <= self.now_ns)
                {
                    // Back to back on the one die: the same as one after the other.
                    self.op_single(first.0, start);
                    let start = self.dies[0].free_ns;
                    return self.op_single(then.0, start);
                }
            }
        }
        let a = self.op_general(first.0, first.1, first.2, OpRef::Done(0));
        self.op_general(then.0, then.1, then.2, a)
    }

    /// One die, one plane: the phases of an operation follow each other and those of
    /// consecutive operations never overlap (see the module doc), so the operation takes its
    /// plain time from `start`.
    #[inline(always)]
    fn op_single(&mut self, kind: OpKind, start: u64) -> OpRef {
        let start = start.max(self.now_ns);
        let end = start.saturating_add(self.alone_ns[kind as usize]);
        let d = &mut self.dies[0];
        d.free_ns = end;
        d.busy_ns += end - start;
        self.buses[0].busy_ns += self.bus_ns[kind as usize];
        self.horizon_ns = self.horizon_ns.max(end);
        let c = &mut self.cur;
        c.first_start_ns = c.first_start_ns.min(start);
        c.end_ns = c.end_ns.max(end);
        OpRef::Done(end)
    }

    #[inline(never)]
    fn op_general(&mut self, kind: OpKind, plane: u32, page: u32, after: OpRef) -> OpRef {
        debug_assert!(plane < self.hw.planes());
        let die = self.ppd.div32(plane);
        let rank = self.cur.rank;
        // The earliest start, if known: the request's arrival and what it waits for.
        let mut ready = self.cur.at_ns;
        let mut waits_on = None;
        match after {
            OpRef::Done(t) => ready = ready.max(t),
            OpRef::Queued(id) => waits_on = Some(id),
        }
        match self.cur.after {
            OpRef::Done(t) => ready = ready.max(t),
            OpRef::Queued(id) => waits_on = Some(id),
        }
        let d = &self.dies[die as usize];
        // An operation whose die is free now — or that follows this request's own operations
        // on a die that was free when they started (the die's future is this request's alone),
        // or joins its die's last operation, of this request, as a multi-plane operation — is
        // timed now; one that must wait for its die (or for another operation) waits in the
        // die's queue and is timed when its turn comes, in time order, so that the bus is
        // shared in the order the dies ask for it. A die free now goes to the first operation
        // that asks, even one that waits for its data (a copy's program): it is timed from
        // when the data is in. (The tests run cheapest first.)
        let now = waits_on.is_none()
            && d.queued_ranks & ((2u8 << rank) - 1) == 0
            && ((d.free_ns <= self.now_ns
                && (rank == self.best_rank || ready.max(d.free_ns) <= self.now_ns))
                || (rank == self.best_rank && d.chain == self.cur.tag)
                || (self.planes_per_die > 1
                    && self.same_multi_plane_op(die as usize, kind, plane, page, self.cur.tag)
                    && ready <= self.last[die as usize].array_start));
        if now {
            let batch = self.cur.tag;
            let (first, end) = self.reserve(die, kind, plane, page, ready, batch);
            let c = &mut self.cur;
            c.first_start_ns = c.first_start_ns.min(first);
            c.end_ns = c.end_ns.max(end);
            return OpRef::Done(end);
        }
        let slot = self.current_slot();
        let id = self.enqueue(
            die,
            Queued {
                kind,
                plane,
                page,
                rank,
                request: slot,
                ready_ns: if waits_on.is_some() { UNKNOWN } else { ready },
                dependents: NONE,
                next_dependent: NONE,
            },
        );
        if let Some(pred) = waits_on {
            let p = &mut self.queued[pred as usize];
            self.queued[id as usize].next_dependent = p.dependents;
            self.queued[pred as usize].dependents = id;
        } else {
            self.wake_at(die, ready);
        }
        OpRef::Queued(id)
    }

    /// Times one operation on its die at the earliest time ≥ `ready` (the die free, its bus
    /// phases in free bus slots), joining the die's last operation as a multi-plane operation
    /// when allowed. Returns (start of its first phase, end).
    #[inline(always)]
    fn reserve(
        &mut self,
        die: u32,
        kind: OpKind,
        plane: u32,
        page: u32,
        ready: u64,
        batch: u64,
    ) -> (u64, u64) {
        debug_assert_eq!(die, self.ppd.div32(plane));
        let die = die as usize;
        let gang = self.gang_of_die[die] as usize;
        let multi_plane = self.planes_per_die > 1;
        if multi_plane && self.same_multi_plane_op(die, kind, plane, page, batch) {
            if let Some(timed) = self.join(kind, plane, ready) {
                return timed;
            }
        }
        let (before, array, after) = self.shape[kind as usize];
        let s0 = ready.max(self.dies[die].free_ns).max(self.now_ns);
        // Times saturate at the end of u64 time rather than wrap (the device reports a request
        // that would complete there as a time overflow).
        let first = self.bus(gang, s0, before);
        let array_start = first.saturating_add(before);
        let array_end = array_start.saturating_add(array);
        let (bus_end, end) = if after > 0 {
            let out = self.bus(gang, array_end, after).saturating_add(after);
            (out, out)
        } else {
            (array_start, array_end)
        };
        let d = &mut self.dies[die];
        assert!(first >= d.free_ns, "die {die} runs two operations at once");
        d.busy_ns += end - first;
        d.free_ns = end;
        d.chain = batch;
        if multi_plane {
            let planes = 1u64 << self.ppd.rem32(plane);
            self.last[die] =
                LastOp { batch, kind, planes, page, array_start, array_end, bus_end, end };
        }
        self.horizon_ns = self.horizon_ns.max(end);
        (first, end)
    }

    /// The address rules of a multi-plane operation (see the module doc): `kind` on `plane`
    /// at `page` may join die `die`'s last operation — same request batch, same kind, a plane
    /// it does not cover yet, and the same page offset (erases: any block).
    #[inline(always)]
    fn same_multi_plane_op(
        &self,
        die: usize,
        kind: OpKind,
        plane: u32,
        page: u32,
        batch: u64,
    ) -> bool {
        let l = &self.last[die];
        l.batch == batch
            && l.kind == kind
            && l.planes & (1u64 << self.ppd.rem32(plane)) == 0
            && (kind == OpKind::Erase || l.page == page)
    }

    /// Joins `kind` on `plane` to its die's last operation as a multi-plane operation, the
    /// address rules already checked (`same_multi_plane_op`), if the timing allows: the last
    /// operation's array phase has not started before `ready`, and it is not a copyback.
    /// Returns (start of its bus phase, end).
    #[inline(never)]
    fn join(&mut self, kind: OpKind, plane: u32, ready: u64) -> Option<(u64, u64)> {
        let die = self.ppd.div32(plane) as usize;
        let bit = 1u64 << self.ppd.rem32(plane);
        let gang = self.gang_of_die[die] as usize;
        let t = self.t;
        let last = self.last[die];
        if kind == OpKind::Copyback || ready > last.array_start {
            return None;
        }
        let (start, end) = match kind {
            OpKind::Program => {
                // This plane's data goes over the bus after the others'; the array phase
                // starts once all are in.
                let x = self.bus(gang, last.bus_end, t.transfer);
                let x_end = x.saturating_add(t.transfer);
                let array_start = last.array_start.max(x_end);
                let d = &mut self.last[die];
                d.array_start = array_start;
                d.bus_end = x_end;
                d.end = array_start.saturating_add(t.program);
                (x, d.end)
            }
            OpKind::Read => {
                // One array time; this plane's data goes out after the others'.
                let x = self.bus(gang, last.bus_end.max(last.array_end), t.transfer);
                let x_end = x.saturating_add(t.transfer);
                let d = &mut self.last[die];
                d.bus_end = x_end;
                d.end = d.end.max(x_end);
                (x, d.end)
            }
            OpKind::Erase | OpKind::Copyback => (last.array_start, last.end),
        };
        self.last[die].planes |= bit;
        let d = &mut self.dies[die];
        d.busy_ns += end - last.end;
        d.free_ns = end;
        self.horizon_ns = self.horizon_ns.max(end);
        Some((start, end))
    }

    /// Reserves `len` ns of gang `gang`'s bus at or after `at`; returns the start.
    #[inline(always)]
    fn bus(&mut self, gang: usize, at: u64, len: u64) -> u64 {
        if len == 0 {
            return at;
        }
        if !self.bus_shared[gang] {
            // One die on this bus: its own timeline serializes the transfers.
            self.buses[gang].busy_ns += len;
            return at;
        }
        self.buses[gang].reserve(at, len, self.now_ns)
    }

    // ---- queues -----------------------------------------------------------------------------

    fn new_tag(&mut self) -> u64 {
        let t = self.next_tag;
        self.next_tag += 1;
        t
    }

    /// Work issued outside `begin`/`end` (an FTL driven by hand, recovery): a context of its
    /// own at the clock, whose completion nobody waits for.
    fn implicit(&mut self, at_ns: u64) {
        let tag = self.new_tag();
        self.cur = Current {
            tag,
            class: Class::HostWrite,
            rank: self.rank[Class::HostWrite as usize],
            at_ns,
            after: OpRef::Done(at_ns),
            first_start_ns: UNKNOWN,
            end_ns: at_ns,
            slot: NONE,
            explicit: false,
            fast: false,
            fast_bus_ns: 0,
        };
    }

    /// An implicit context with queued operations is left to finish as an orphan.
    fn close_implicit(&mut self) {
        assert!(!self.cur.explicit, "begin inside a request");
        if self.cur.slot != NONE {
            let r = &mut self.requests[self.cur.slot as usize];
            r.closed = true;
            r.orphan = true;
        }
    }

    /// The current request's slot in `requests`, made on its first queued operation.
    fn current_slot(&mut self) -> u32 {
        if self.cur.slot == NONE {
            let p = Pending {
                tag: self.cur.tag,
                class: self.cur.class,
                first_start_ns: UNKNOWN,
                end_ns: 0,
                queued: 0,
                closed: false,
                orphan: false,
            };
            self.cur.slot = match self.free_requests.pop() {
                Some(i) => {
                    self.requests[i as usize] = p;
                    i
                }
                None => {
                    self.requests.push(p);
                    (self.requests.len() - 1) as u32
                }
            };
        }
        self.cur.slot
    }

    fn enqueue(&mut self, die: u32, q: Queued) -> u32 {
        debug_assert_eq!(die, q.plane / self.planes_per_die);
        let id = match self.free_queued.pop() {
            Some(i) => {
                self.queued[i as usize] = q;
                i
            }
            None => {
                self.queued.push(q);
                (self.queued.len() - 1) as u32
            }
        };
        self.requests[q.request as usize].queued += 1;
        self.queues[die as usize][usize::from(q.rank)].push_back(id);
        let d = &mut self.dies[die as usize];
        d.queued_ranks |= 1 << q.rank;
        d.backlog_ns += self.alone_ns[q.kind as usize];
        self.queued_count += 1;
        id
    }

    /// Makes sure die `die` has an event at the time its next queued operation may start.
    #[inline]
    fn wake(&mut self, die: u32) {
        let Some(at) = self.next_start(die) else { return };
        if self.events.of(die) <= at {
            return; // an event at or before then is already there
        }
        self.events.set(die, at);
    }

    /// When die `die` may start its next queued operation: free, and the best rank's head
    /// ready (a head waiting on another operation blocks its rank; a worse rank may then use
    /// the idle die).
    #[inline]
    fn next_start(&self, die: u32) -> Option<u64> {
        let d = &self.dies[die as usize];
        if d.queued_ranks == 0 {
            return None;
        }
        let ready = self.queues[die as usize]
            .iter()
            .flat_map(|q| q.iter().take(QUEUE_SCAN))
            .map(|&id| self.queued[id as usize].ready_ns)
            .min()
            .filter(|&r| r != UNKNOWN)?;
        Some(ready.max(d.free_ns).max(self.now_ns))
    }

    /// Makes sure die `die` has an event no later than `at` (or when it is free, if later): a
    /// hint from an operation whose data is in at `at`; `service` finds the real next start.
    #[inline]
    fn wake_at(&mut self, die: u32, at: u64) {
        let at = at.max(self.dies[die as usize].free_ns).max(self.now_ns);
        if self.events.of(die) <= at {
            return;
        }
        self.events.set(die, at);
    }

    /// The first operation of die `die`'s queue of rank `rank` that may start at `at` (issue
    /// order among those whose data is in: one still waiting for its data does not hold up
    /// the others), as its position.
    #[inline]
    fn first_ready(&self, die: u32, rank: usize, at: u64) -> Option<usize> {
        self.queues[die as usize][rank]
            .iter()
            .take(QUEUE_SCAN)
            .position(|&id| self.queued[id as usize].ready_ns <= at)
    }

    /// Die `die`'s event at `at` (taken from `events`): times the best queued operation that may
    /// start then, with the queued operations that can join it as a multi-plane operation.
    fn service(&mut self, die: u32, at: u64) {
        let di = die as usize;
        let d = &self.dies[di];
        if at > self.now_ns {
            self.now_ns = at;
        }
        if d.free_ns > at {
            self.wake_at(die, 0);
            return;
        }
        // The best rank with an operation that may start now.
        let mut ranks = d.queued_ranks;
        let mut pick = None;
        while ranks != 0 {
            let r = ranks.trailing_zeros() as usize;
            ranks &= ranks - 1;
            if let Some(i) = self.first_ready(die, r, at) {
                pick = Some((r, i));
                break;
            }
        }
        let Some((rank, i)) = pick else {
            self.wake(die);
            return;
        };
        let id = self.take_queued(die, rank, i);
        let batch = self.new_tag();
        let lead = self.queued[id as usize];
        let timed = self.time_queued(&lead, batch);
        // Same-kind operations of the same rank on other planes at the same page offset join
        // it (a multi-plane operation; never a copyback): look a few entries down the queue.
        // Usually none does, and the lead finishes alone.
        let window = 2 * self.planes_per_die as usize;
        let joiner = if self.planes_per_die == 1 || lead.kind == OpKind::Copyback {
            None
        } else {
            let q = &self.queues[di][rank];
            (0..q.len().min(window)).find(|&k| self.joins(di, &lead, q[k], at))
        };
        let Some(mut i) = joiner else {
            self.finish_queued(id, timed.0, timed.1);
            self.wake_next(die);
            return;
        };
        let mut picked = std::mem::take(&mut self.picked);
        picked.clear();
        picked.push((id, timed));
        while i < self.queues[di][rank].len().min(window) {
            let other = self.queues[di][rank][i];
            if self.joins(di, &lead, other, at) {
                self.take_queued(die, rank, i);
                let o = self.queued[other as usize];
                picked.push((other, self.time_queued(&o, batch)));
            } else {
                i += 1;
            }
        }
        // A multi-plane program's planes all end with its array time, however many joined.
        let program_end =
            (lead.kind == OpKind::Program && picked.len() > 1).then(|| self.last[di].end);
        for &(op, (first, end)) in &picked {
            self.finish_queued(op, first, program_end.unwrap_or(end));
        }
        self.picked = picked;
        self.wake_next(die);
    }

    /// Whether queued operation `other` joins `lead`, just timed on die `di` at `at`, as a
    /// multi-plane operation: the same kind on a plane the die's last operation does not cover
    /// yet, at the same page offset (erases: any block), its data in.
    #[inline]
    fn joins(&self, di: usize, lead: &Queued, other: u32, at: u64) -> bool {
        let o = &self.queued[other as usize];
        o.plane != lead.plane
            && o.kind == lead.kind
            && (o.kind == OpKind::Erase || o.page == lead.page)
            && o.ready_ns <= at
            && self.last[di].planes & (1u64 << self.ppd.rem32(o.plane)) == 0
    }

    /// After timing an operation: an event when the die is free, if anything is queued (the
    /// head is usually ready by then; if not, that event finds when one is).
    #[inline]
    fn wake_next(&mut self, die: u32) {
        if self.dies[die as usize].queued_ranks != 0 {
            self.wake_at(die, 0);
        }
    }

    /// Takes the `i`-th operation of die `die`'s queue of rank `rank` out of it.
    #[inline]
    fn take_queued(&mut self, die: u32, rank: usize, i: usize) -> u32 {
        let q = &mut self.queues[die as usize][rank];
        let id = if i == 0 { q.pop_front() } else { q.remove(i) }.expect("position in range");
        if q.is_empty() {
            self.dies[die as usize].queued_ranks &= !(1 << rank);
        }
        id
    }

    /// Times queued operation `q` now, as part of `batch` (its request is accounted by
    /// `finish_queued` once the batch is complete).
    #[inline]
    fn time_queued(&mut self, q: &Queued, batch: u64) -> (u64, u64) {
        let die = self.ppd.div32(q.plane);
        let timed = self.reserve(die, q.kind, q.plane, q.page, q.ready_ns, batch);
        self.dies[die as usize].backlog_ns -= self.alone_ns[q.kind as usize];
        timed
    }

    /// Accounts queued operation `id`, timed from `first` to `end`: finishes its request if it
    /// was the last, and releases the operations waiting for it.
    #[inline]
    fn finish_queued(&mut self, id: u32, first: u64, end: u64) {
        let (request, dependents) = {
            let q = &self.queued[id as usize];
            (q.request, q.dependents)
        };
        self.queued_count -= 1;
        self.free_queued.push(id);
        let r = &mut self.requests[request as usize];
        r.first_start_ns = r.first_start_ns.min(first);
        r.end_ns = r.end_ns.max(end);
        r.queued -= 1;
        if r.queued == 0 && r.closed {
            if !r.orphan {
                let f = Finished {
                    tag: r.tag,
                    class: r.class,
                    first_start_ns: r.first_start_ns,
                    end_ns: r.end_ns,
                };
                self.finished.push(f);
            }
            self.free_requests.push(request);
        }
        // The current request's own queued operations may be timed only by an event, which
        // never happens during a dispatch.
        debug_assert!(request != self.cur.slot || !self.cur.explicit);
        let mut dep = dependents;
        while dep != NONE {
            let q = &mut self.queued[dep as usize];
            let next = q.next_dependent;
            q.ready_ns = end;
            q.next_dependent = NONE;
            let dep_die = self.ppd.div32(q.plane);
            self.wake_at(dep_die, end);
            dep = next;
        }
    }

    /// Full invariant check (O(queued operations)); panics on a violation.
    pub fn check(&self) {
        for b in &self.buses {
            b.check();
        }
        let mut queued = 0u32;
        for (i, d) in self.dies.iter().enumerate() {
            let last = &self.last[i];
            assert!(last.end <= d.free_ns || last.batch == 0, "die {i}: last op after free");
            for (r, q) in self.queues[i].iter().enumerate() {
                assert_eq!(q.is_empty(), d.queued_ranks & (1 << r) == 0, "die {i}: ranks queued");
                for &id in q {
                    let op = &self.queued[id as usize];
                    assert_eq!(op.plane / self.planes_per_die, i as u32, "op queued on its die");
                    assert!(self.requests[op.request as usize].queued > 0);
                    queued += 1;
                }
            }
            if self.queues[i].iter().all(VecDeque::is_empty) {
                assert_eq!(d.backlog_ns, 0, "die {i}: backlog without queued operations");
            }
        }
        assert_eq!(queued, self.queued_count, "queued operations counted");
    }
}

#[cfg(test)]
mod tests;
