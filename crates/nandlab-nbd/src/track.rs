//! Which connections are open and in which phase, and the limits that keep clients from locking
//! each other out: the handshake budget with its eviction rule, the handshake deadline and the
//! stall watchdog of the transmission phase.
//!
//! A connection is *handshaking* from accept until the end of option negotiation (a TLS
//! handshake included: under `--tls require` nobody gets past it without credentials), then
//! *serving*. The two phases have separate limits:
//!
//! * At most `max_handshakes` connections handshake at once. When one more is accepted, the
//!   oldest handshake is closed to make room (unauthenticated ones first, i.e. those that have not
//!   completed a TLS handshake), the way SYN floods are handled: a flood of silent sockets
//!   cannot keep a new client out, it can only make it race against the flood's rate.
//! * Every handshake must end within `negotiation_timeout` of the accept: a deadline for the
//!   whole negotiation, however slowly the bytes trickle in, enforced by shutting the socket
//!   down from [`Tracker::sweep`], which wakes blocked reads and writes alike.
//! * Only a connection that completed the handshake takes one of the `max_connections`
//!   transmission slots ([`Tracker::enter_transmission`]); a handshaking connection never holds
//!   one.
//! * While serving, a payload transfer — the writer sending a batch of released replies, the
//!   reader receiving one write's payload — must end within `stall_timeout`, else
//!   [`Tracker::sweep`] closes the connection: a client that stops reading its replies (or
//!   trickles them) would otherwise hold its in-flight bytes, and so the shared pool of the
//!   budgets, forever. An idle connection (nothing being transferred) is never closed.
//!
//! The sweep runs on the accept loop every few tens of milliseconds.

use crate::stream::Conn;
use std::collections::HashMap;
use std::net::Shutdown;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// When a connection's current payload transfers started (shared between its threads and the
/// sweep), as nanoseconds since the tracker's epoch plus one; 0 means "not transferring".
#[derive(Debug)]
pub(crate) struct Activity {
    epoch: Instant,
    sending_since_ns: AtomicU64,
    receiving_since_ns: AtomicU64,
}

impl Activity {
    fn new(epoch: Instant) -> Activity {
        Activity {
            epoch,
            sending_since_ns: AtomicU64::new(0),
            receiving_since_ns: AtomicU64::new(0),
        }
    }

    fn stamp(&self, now: Instant) -> u64 {
        now.saturating_duration_since(self.epoch).as_nanos() as u64 + 1
    }

    /// The writer starts writing replies (`now` is a fresh `Instant::now()`).
    pub(crate) fn sending(&self, now: Instant) {
        self.sending_since_ns.store(self.stamp(now), Ordering::Relaxed);
    }

    /// The writer is done writing (flushed).
    pub(crate) fn sent(&self) {
        self.sending_since_ns.store(0, Ordering::Relaxed);
    }

    /// The reader starts receiving a write's payload.
    pub(crate) fn receiving(&self, now: Instant) {
        self.receiving_since_ns.store(self.stamp(now), Ordering::Relaxed);
    }

    /// The payload is in.
    pub(crate) fn received(&self) {
        self.receiving_since_ns.store(0, Ordering::Relaxed);
    }

    /// Whether a transfer has been going on for longer than `limit` at `now`.
    fn stalled(&self, now: Instant, limit: Duration) -> bool {
        let now_ns = self.stamp(now);
        let limit_ns = limit.as_nanos() as u64;
        [&self.sending_since_ns, &self.receiving_since_ns].iter().any(|since| {
            let since = since.load(Ordering::Relaxed);
            since != 0 && now_ns.saturating_sub(since) > limit_ns
        })
    }
}

/// The limits, from `ServeOptions`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    pub(crate) max_handshakes: usize,
    pub(crate) max_connections: usize,
    pub(crate) negotiation_timeout: Duration,
    pub(crate) stall_timeout: Duration,
    /// `ServeOptions::busy_poll`, zero on a one-CPU machine.
    pub(crate) busy_poll: Duration,
}

/// Open connections by id.
pub(crate) struct Tracker {
    state: Mutex<State>,
    limits: Limits,
    epoch: Instant,
}

#[derive(Default)]
struct State {
    conns: HashMap<u64, Entry>,
    handshaking: usize,
    serving: usize,
}

struct Entry {
    /// A clone of the connection's socket, to shut it down from outside its threads.
    socket: Conn,
    accepted: Instant,
    phase: Phase,
    activity: Arc<Activity>,
    /// The sweep already shut it down for stalling (counted once).
    stalled: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// In option negotiation; `authenticated` once a TLS handshake has completed.
    Handshaking {
        authenticated: bool,
    },
    Serving,
}

/// The answer to [`Tracker::enter_transmission`].
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Admission {
    /// The connection holds a transmission slot now.
    Admitted,
    /// All `max_connections` slots are taken; the connection stays in negotiation.
    Full,
    /// The connection was closed (deadline passed, evicted, or the server is stopping).
    Closed,
}

/// What one sweep closed.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Swept {
    /// Handshakes past their deadline.
    pub(crate) expired_handshakes: u64,
    /// Serving connections with a transfer stalled beyond `stall_timeout`.
    pub(crate) stalled: u64,
}

impl Tracker {
    /// How long a serving connection's reader polls before a blocking receive.
    pub(crate) fn busy_poll(&self) -> Duration {
        self.limits.busy_poll
    }

    pub(crate) fn new(limits: Limits) -> Tracker {
        let limits = Limits {
            max_handshakes: limits.max_handshakes.max(1),
            max_connections: limits.max_connections.max(1),
            ..limits
        };
        Tracker { state: Mutex::new(State::default()), limits, epoch: Instant::now() }
    }

    pub(crate) fn limits(&self) -> Limits {
        self.limits
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records a newly accepted connection as handshaking (`socket` is a clone of its stream).
    /// When `max_handshakes` are already under way, the oldest unauthenticated one (else the
    /// oldest) is closed first; the result says whether one was.
    pub(crate) fn register(&self, id: u64, socket: Conn) -> (Arc<Activity>, bool) {
        let mut st = self.lock();
        let mut evicted = false;
        if st.handshaking >= self.limits.max_handshakes {
            let victim = st
                .conns
                .iter()
                .filter_map(|(&id, e)| match e.phase {
                    Phase::Handshaking { authenticated } => Some((authenticated, e.accepted, id)),
                    Phase::Serving => None,
                })
                .min()
                .map(|(_, _, id)| id);
            if let Some(v) = victim {
                st.close(v);
                evicted = true;
            }
        }
        let activity = Arc::new(Activity::new(self.epoch));
        let entry = Entry {
            socket,
            accepted: Instant::now(),
            phase: Phase::Handshaking { authenticated: false },
            activity: Arc::clone(&activity),
            stalled: false,
        };
        st.conns.insert(id, entry);
        st.handshaking += 1;
        (activity, evicted)
    }

    /// The connection completed a TLS handshake: it is evicted only after every
    /// unauthenticated one.
    pub(crate) fn authenticated(&self, id: u64) {
        if let Some(e) = self.lock().conns.get_mut(&id) {
            if let Phase::Handshaking { .. } = e.phase {
                e.phase = Phase::Handshaking { authenticated: true };
            }
        }
    }

    /// Moves a handshaking connection to a transmission slot, if one is free.
    pub(crate) fn enter_transmission(&self, id: u64) -> Admission {
        let mut st = self.lock();
        let serving = st.serving;
        match st.conns.get_mut(&id) {
            None => Admission::Closed,
            Some(e) if e.phase == Phase::Serving => Admission::Admitted,
            Some(_) if serving >= self.limits.max_connections => Admission::Full,
            Some(e) => {
                e.phase = Phase::Serving;
                st.handshaking -= 1;
                st.serving += 1;
                Admission::Admitted
            }
        }
    }

    /// Whether connection `id` was closed by these limits (handshake deadline, eviction,
    /// stall), not by its client or its own threads; asked before [`Tracker::remove`].
    pub(crate) fn closed_by_limits(&self, id: u64) -> bool {
        self.lock().conns.get(&id).is_none_or(|e| e.stalled)
    }

    /// The connection's threads are done: forget it (freeing its slot) and shut its socket
    /// down, so the client sees the end.
    pub(crate) fn remove(&self, id: u64) {
        self.lock().close(id);
    }

    /// Closes handshakes past their deadline and serving connections whose transfer stalled.
    pub(crate) fn sweep(&self, now: Instant) -> Swept {
        let mut st = self.lock();
        let mut swept = Swept::default();
        let timeout = self.limits.negotiation_timeout;
        let expired: Vec<u64> = st
            .conns
            .iter()
            .filter(|(_, e)| {
                matches!(e.phase, Phase::Handshaking { .. })
                    && now.saturating_duration_since(e.accepted) >= timeout
            })
            .map(|(&id, _)| id)
            .collect();
        for id in expired {
            st.close(id);
            swept.expired_handshakes += 1;
        }
        for e in st.conns.values_mut() {
            if e.phase == Phase::Serving
                && !e.stalled
                && e.activity.stalled(now, self.limits.stall_timeout)
            {
                // Left in the map: its threads end (the writer's write fails, which gives its
                // budget back) and remove it, freeing the slot.
                e.stalled = true;
                e.socket.shutdown(Shutdown::Both);
                swept.stalled += 1;
            }
        }
        swept
    }

    /// Shuts every open connection down in direction `how` (server shutdown).
    pub(crate) fn shutdown_all(&self, how: Shutdown) {
        for e in self.lock().conns.values() {
            e.socket.shutdown(how);
        }
    }

    /// (handshaking, serving) connections now.
    #[cfg(test)]
    fn counts(&self) -> (usize, usize) {
        let st = self.lock();
        (st.handshaking, st.serving)
    }
}

impl State {
    /// Forgets `id` and shuts its socket down (nothing if it is already gone).
    fn close(&mut self, id: u64) {
        if let Some(e) = self.conns.remove(&id) {
            match e.phase {
                Phase::Handshaking { .. } => self.handshaking -= 1,
                Phase::Serving => self.serving -= 1,
            }
            e.socket.shutdown(Shutdown::Both);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::os::unix::net::UnixStream;

    fn limits(max_handshakes: usize, max_connections: usize) -> Limits {
        Limits {
            max_handshakes,
            max_connections,
            negotiation_timeout: Duration::from_secs(10),
            stall_timeout: Duration::from_secs(10),
            busy_poll: Duration::ZERO,
        }
    }

    /// A tracked socket and the client end that sees it closed.
    fn pair() -> (Conn, UnixStream) {
        let (a, b) = UnixStream::pair().unwrap();
        (Conn::Unix(a), b)
    }

    fn is_closed(client: &mut UnixStream) -> bool {
        client.set_read_timeout(Some(Duration::from_millis(10))).unwrap();
        matches!(client.read(&mut [0u8; 1]), Ok(0))
    }

    #[test]
    fn a_full_handshake_budget_evicts_the_oldest_unauthenticated_one() {
        let t = Tracker::new(limits(3, 8));
        let mut clients = Vec::new();
        for id in 0..3 {
            let (s, c) = pair();
            assert!(!t.register(id, s).1);
            clients.push(c);
            std::thread::sleep(Duration::from_millis(2));
        }
        t.authenticated(0);
        let (s, c) = pair();
        assert!(t.register(3, s).1, "one evicted to make room");
        clients.push(c);
        // 0 is older but authenticated: 1 goes.
        assert!(!is_closed(&mut clients[0]));
        assert!(is_closed(&mut clients[1]));
        assert_eq!(t.counts(), (3, 0));
        assert_eq!(t.enter_transmission(1), Admission::Closed);
        // Serving connections are never evicted and do not count against the budget.
        assert_eq!(t.enter_transmission(2), Admission::Admitted);
        assert_eq!(t.counts(), (2, 1));
        let (s, _c) = pair();
        assert!(!t.register(4, s).1);
        assert!(!is_closed(&mut clients[2]));
    }

    #[test]
    fn transmission_slots_are_taken_only_at_the_end_of_the_handshake() {
        let t = Tracker::new(limits(8, 1));
        let (a, _ca) = pair();
        let (b, _cb) = pair();
        t.register(0, a);
        t.register(1, b);
        assert_eq!(t.enter_transmission(0), Admission::Admitted);
        assert_eq!(t.enter_transmission(1), Admission::Full);
        t.remove(0);
        assert_eq!(t.enter_transmission(1), Admission::Admitted);
        assert_eq!(t.counts(), (0, 1));
    }

    #[test]
    fn the_sweep_closes_late_handshakes_and_stalled_transfers() {
        let t = Tracker::new(Limits {
            negotiation_timeout: Duration::from_millis(100),
            stall_timeout: Duration::from_millis(100),
            ..limits(8, 8)
        });
        let (a, mut ca) = pair();
        let (b, mut cb) = pair();
        let (c, mut cc) = pair();
        t.register(0, a);
        let (busy, _) = t.register(1, b);
        let (idle, _) = t.register(2, c);
        assert_eq!(t.enter_transmission(1), Admission::Admitted);
        assert_eq!(t.enter_transmission(2), Admission::Admitted);
        let start = Instant::now();
        busy.sending(start);
        assert_eq!(t.sweep(start + Duration::from_millis(50)), Swept::default());
        let late = start + Duration::from_millis(200);
        assert_eq!(t.sweep(late), Swept { expired_handshakes: 1, stalled: 1 });
        assert!(is_closed(&mut ca) && is_closed(&mut cb));
        assert!(!is_closed(&mut cc), "an idle serving connection stays");
        // Counted once; the stalled one keeps its slot until its threads remove it.
        assert_eq!(t.sweep(late), Swept::default());
        assert_eq!(t.counts(), (0, 2));
        idle.receiving(late);
        idle.received();
        assert_eq!(t.sweep(late + Duration::from_secs(1)), Swept::default());
    }
}
