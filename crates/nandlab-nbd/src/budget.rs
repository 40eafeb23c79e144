//! In-flight payload budgets: how many request and reply bytes the server holds between reading
//! a request and finishing its reply, per connection and across all connections.
//!
//! The total is a hard cap: the payload bytes of every admitted request (write data read, read
//! data not yet sent), all connections together, never exceed `total_limit_bytes`. It is split
//! into
//!
//! * a **reserve** of `reserve_bytes` for each of the `slots` connections that may be served at
//!   once (`ServeOptions::max_connections`): `reserve = min(connection budget, total / (2 ×
//!   slots))`, so at most half the total is reserved; and
//! * a shared **pool** of `pool_bytes = total − slots × reserve` (at least half the total).
//!
//! A connection's first `reserve` bytes in flight come from its reserve, the rest from the pool.
//! A request is *admitted* (its payload may be read, or its read may run) when
//!
//! * the connection stays within `conn_limit_bytes` and `max_requests` — or has nothing in
//!   flight, so one request larger than the connection budget can still run — **and**
//! * the pool can hold the part beyond the reserve.
//!
//! A request that fits in the connection's unused reserve is therefore always admitted, whatever
//! the other connections hold: a client that never reads its replies cannot lock the others
//! out, it only slows down their requests larger than the reserve until its replies are written
//! (or the server closes it for stalling, see `ServeOptions::stall_timeout`). The largest
//! request that can ever be admitted is `reserve + pool` ([`Budgets::largest_request_bytes`]);
//! the server advertises no larger maximum block size, so no request waits forever.
//!
//! Otherwise the connection's reader waits (it stops reading the socket: back-pressure on the
//! client) until replies have been written. Nothing is dropped or failed.
//!
//! Bound: `Σ bytes ≤ Σ_connections reserve + pool ≤ slots × reserve + pool = total`, since at
//! most `slots` connections hold a [`ConnBudget`] at once (the server creates one only for a
//! connection that took a transmission slot).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

/// Live figures for tests and monitoring (shared with [`crate::ShutdownHandle`]).
#[derive(Debug, Default)]
pub(crate) struct Gauge {
    /// Bytes in flight now, all connections.
    pub(crate) bytes: AtomicU64,
    /// Highest value `bytes` reached.
    pub(crate) peak_bytes: AtomicU64,
}

/// The server-wide budget; connections hold a [`ConnBudget`] drawn from it.
pub(crate) struct Budgets {
    state: Mutex<Totals>,
    cv: Condvar,
    conn_limit_bytes: usize,
    reserve_bytes: usize,
    pool_bytes: usize,
    max_requests: usize,
    gauge: Arc<Gauge>,
}

struct Totals {
    /// Bytes in flight, all connections.
    bytes: usize,
    /// The part of them drawn from the pool: Σ max(0, connection bytes − reserve).
    pool_used_bytes: usize,
    /// Readers blocked in [`ConnBudget::acquire`]: releases only signal when someone waits
    /// (a condvar broadcast is a system call, and releases happen once per reply).
    waiters: usize,
}

/// One connection's share.
pub(crate) struct ConnBudget {
    budgets: Arc<Budgets>,
    /// Guarded by `budgets.state` (plain fields behind their own mutex, always locked after it).
    mine: Mutex<Mine>,
}

#[derive(Default)]
struct Mine {
    count: usize,
    bytes: usize,
    closed: bool,
}

impl Budgets {
    /// Budgets for at most `slots` connections at once (at least 1).
    pub(crate) fn new(
        conn_limit_bytes: usize,
        total_limit_bytes: usize,
        slots: usize,
        max_requests: usize,
        gauge: Arc<Gauge>,
    ) -> Arc<Budgets> {
        let slots = slots.max(1);
        let reserve_bytes = conn_limit_bytes.min(total_limit_bytes / (2 * slots));
        Arc::new(Budgets {
            state: Mutex::new(Totals { bytes: 0, pool_used_bytes: 0, waiters: 0 }),
            cv: Condvar::new(),
            conn_limit_bytes,
            reserve_bytes,
            pool_bytes: total_limit_bytes - slots * reserve_bytes,
            max_requests: max_requests.max(1),
            gauge,
        })
    }

    /// The largest request that can ever be admitted: a connection's whole reserve plus the
    /// whole pool.
    pub(crate) fn largest_request_bytes(&self) -> usize {
        self.reserve_bytes + self.pool_bytes
    }

    /// What each connection is guaranteed.
    #[cfg(test)]
    fn reserve_bytes(&self) -> usize {
        self.reserve_bytes
    }

    fn lock(&self) -> MutexGuard<'_, Totals> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The part of a connection's `bytes` that comes from the pool.
    fn pooled(&self, bytes: usize) -> usize {
        bytes.saturating_sub(self.reserve_bytes)
    }

    /// A new connection's (empty) share.
    pub(crate) fn connection(self: &Arc<Self>) -> ConnBudget {
        ConnBudget { budgets: Arc::clone(self), mine: Mutex::new(Mine::default()) }
    }

    fn publish(&self, totals: &Totals) {
        let now = totals.bytes as u64;
        self.gauge.bytes.store(now, Ordering::Relaxed);
        self.gauge.peak_bytes.fetch_max(now, Ordering::Relaxed);
    }
}

impl ConnBudget {
    fn mine(&self) -> MutexGuard<'_, Mine> {
        self.mine.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits until a request of `cost` bytes may go ahead and counts it; `false` once the
    /// connection's writer is gone (nothing will ever be released). `cost` must not exceed
    /// [`Budgets::largest_request_bytes`] (it would wait forever).
    pub(crate) fn acquire(&self, cost: usize) -> bool {
        let b = &*self.budgets;
        let mut totals = b.lock();
        loop {
            {
                let mut mine = self.mine();
                if mine.closed {
                    return false;
                }
                let after = mine.bytes + cost;
                let within_connection =
                    mine.count == 0 || (mine.count < b.max_requests && after <= b.conn_limit_bytes);
                let from_pool = b.pooled(after) - b.pooled(mine.bytes);
                if within_connection && totals.pool_used_bytes + from_pool <= b.pool_bytes {
                    mine.count += 1;
                    mine.bytes = after;
                    totals.bytes += cost;
                    totals.pool_used_bytes += from_pool;
                    b.publish(&totals);
                    return true;
                }
            }
            totals.waiters += 1;
            totals = b.cv.wait(totals).unwrap_or_else(PoisonError::into_inner);
            totals.waiters -= 1;
        }
    }

    /// Gives back one request's bytes (its reply was written or dropped).
    pub(crate) fn release(&self, cost: usize) {
        let b = &*self.budgets;
        let mut totals = b.lock();
        {
            let mut mine = self.mine();
            if mine.closed {
                // `close` already gave everything back.
                return;
            }
            let after = mine.bytes.saturating_sub(cost);
            totals.pool_used_bytes -= b.pooled(mine.bytes) - b.pooled(after);
            totals.bytes -= mine.bytes - after;
            mine.count = mine.count.saturating_sub(1);
            mine.bytes = after;
        }
        b.gauge.bytes.store(totals.bytes as u64, Ordering::Relaxed);
        if totals.waiters > 0 {
            b.cv.notify_all();
        }
    }

    /// The writer is gone: give back everything still counted and wake the reader.
    pub(crate) fn close(&self) {
        let b = &*self.budgets;
        let mut totals = b.lock();
        {
            let mut mine = self.mine();
            mine.closed = true;
            totals.pool_used_bytes -= b.pooled(mine.bytes);
            totals.bytes -= mine.bytes;
            mine.bytes = 0;
            mine.count = 0;
        }
        b.gauge.bytes.store(totals.bytes as u64, Ordering::Relaxed);
        b.cv.notify_all();
    }
}

impl Drop for ConnBudget {
    /// A share dropped without `close` (a writer that never started) gives its bytes back too.
    fn drop(&mut self) {
        if !self.mine().closed {
            self.close();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Budgets for `slots` connections.
    fn budgets(conn: usize, total: usize, slots: usize) -> Arc<Budgets> {
        Budgets::new(conn, total, slots, 1024, Arc::new(Gauge::default()))
    }

    fn inflight(b: &Budgets) -> usize {
        b.gauge.bytes.load(Ordering::Relaxed) as usize
    }

    /// Whether `acquire(cost)` completes (checked by the caller after a while; it is left
    /// blocked otherwise, and the test then releases to unblock it).
    fn admits(c: &Arc<ConnBudget>, cost: usize) -> std::thread::JoinHandle<bool> {
        let c = Arc::clone(c);
        std::thread::spawn(move || c.acquire(cost))
    }

    #[test]
    fn reserve_and_pool_split_the_total() {
        // 64 slots of 128 MiB: 1 MiB reserved for each, 64 MiB shared.
        let b = budgets(8 << 20, 128 << 20, 64);
        assert_eq!(b.reserve_bytes(), 1 << 20);
        assert_eq!(b.pool_bytes, 64 << 20);
        assert_eq!(b.largest_request_bytes(), 65 << 20);
        // The reserve never exceeds the connection budget.
        let b = budgets(64 << 10, 128 << 20, 2);
        assert_eq!((b.reserve_bytes(), b.pool_bytes), (64 << 10, (128 << 20) - (128 << 10)));
    }

    #[test]
    fn an_idle_connection_admits_one_request_beyond_its_budget_from_the_pool() {
        let b = budgets(1 << 20, 64 << 20, 4); // reserve 1 MiB, pool 60 MiB
        let c = b.connection();
        assert!(c.acquire(32 << 20), "32 MiB on an idle connection");
        assert_eq!(inflight(&b), 32 << 20);
        c.release(32 << 20);
        assert_eq!(inflight(&b), 0);
        assert_eq!(b.gauge.peak_bytes.load(Ordering::Relaxed), 32 << 20);
    }

    #[test]
    fn the_total_is_a_hard_cap_and_reserves_stay_available() {
        // 4 slots, 16 MiB: reserve 2 MiB each, pool 8 MiB, largest request 10 MiB.
        let b = budgets(16 << 20, 16 << 20, 4);
        let c: Vec<Arc<ConnBudget>> = (0..4).map(|_| Arc::new(b.connection())).collect();
        // An idle connection takes the largest request: its 2 MiB reserve and the whole pool...
        assert!(c[0].acquire(10 << 20));
        // ...the second would need 8 MiB of pool that is gone: it waits, though it is idle.
        let t = admits(&c[1], 10 << 20);
        std::thread::sleep(Duration::from_millis(100));
        assert!(!t.is_finished(), "the pool is exhausted: the idle rule must not overrun it");
        // Every connection, the stalled one included, still gets its reserve at once.
        assert!(c[2].acquire(2 << 20));
        assert!(c[3].acquire(1 << 20));
        assert!(c[3].acquire(1 << 20));
        assert!(inflight(&b) <= 16 << 20);
        assert_eq!(inflight(&b), 14 << 20);
        // Releasing the pool lets the waiter in.
        c[0].release(10 << 20);
        assert!(t.join().unwrap());
        assert_eq!(inflight(&b), 14 << 20);
        assert!(b.gauge.peak_bytes.load(Ordering::Relaxed) <= 16 << 20);
    }

    #[test]
    fn per_connection_and_global_limits_block_until_release() {
        // 2 slots: reserve 1 MiB each, pool 2 MiB.
        let b = budgets(3 << 20, 4 << 20, 2);
        let c1 = Arc::new(b.connection());
        let c2 = Arc::new(b.connection());
        assert!(c1.acquire(2 << 20));
        // c1 would exceed its 3 MiB.
        let t = admits(&c1, 2 << 20);
        std::thread::sleep(Duration::from_millis(100));
        assert!(!t.is_finished(), "per-connection limit must block");
        // c2: its reserve and the 1 MiB left in the pool.
        assert!(c2.acquire(2 << 20));
        c1.release(2 << 20); // c1 idle: its waiting request goes in
        assert!(t.join().unwrap());
        // c2's next request must wait for the pool, which c1 and c2 fill.
        let t2 = admits(&c2, 1 << 20);
        std::thread::sleep(Duration::from_millis(100));
        assert!(!t2.is_finished(), "global limit must block");
        c2.release(2 << 20); // c2's waiting 1 MiB now fits its reserve
        assert!(t2.join().unwrap());
        assert_eq!(inflight(&b), 3 << 20);
    }

    #[test]
    fn close_wakes_a_blocked_reader_and_returns_its_bytes() {
        let b = budgets(1 << 20, 8 << 20, 2);
        let c = Arc::new(b.connection());
        assert!(c.acquire(1 << 20));
        let t = admits(&c, 1 << 20);
        std::thread::sleep(Duration::from_millis(50));
        c.close();
        assert!(!t.join().unwrap());
        assert_eq!(inflight(&b), 0);
        // A release after close (a late reply) changes nothing.
        c.release(1 << 20);
        assert_eq!(inflight(&b), 0);
        let other = b.connection();
        assert!(other.acquire(b.largest_request_bytes()), "the whole pool is free again");
    }
}
