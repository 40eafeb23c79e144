//! In-flight payload budgets: how many request and reply bytes the server holds between reading
//! a request and finishing its reply, per connection and across all connections.
//!
//! A request is *admitted* (its payload may be read, or its read may run) when
//!
//! * its connection has nothing in flight — so every connection can always make progress with
//!   one request of any size, even a 32 MiB one larger than its budget; or
//! * its connection stays within the per-connection budget (bytes and request count) **and**
//!   the server stays within the global budget.
//!
//! Otherwise the connection's reader waits (it stops reading the socket: back-pressure on the
//! client) until replies have been written. Nothing is ever dropped or failed. Since the first
//! request of an idle connection is admitted regardless of the global budget, in-flight bytes are
//! bounded by `total + connections × largest request`; a client that never reads its replies pins
//! at most its own per-connection budget (or its one oversized request), and other connections
//! keep their guaranteed request.

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
    total_limit_bytes: usize,
    max_requests: usize,
    gauge: Arc<Gauge>,
}

struct Totals {
    bytes: usize,
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
    pub(crate) fn new(
        conn_limit_bytes: usize,
        total_limit_bytes: usize,
        max_requests: usize,
        gauge: Arc<Gauge>,
    ) -> Arc<Budgets> {
        Arc::new(Budgets {
            state: Mutex::new(Totals { bytes: 0, waiters: 0 }),
            cv: Condvar::new(),
            conn_limit_bytes,
            total_limit_bytes,
            max_requests: max_requests.max(1),
            gauge,
        })
    }

    fn lock(&self) -> MutexGuard<'_, Totals> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A new connection's (empty) share.
    pub(crate) fn connection(self: &Arc<Self>) -> ConnBudget {
        ConnBudget { budgets: Arc::clone(self), mine: Mutex::new(Mine::default()) }
    }
}

impl ConnBudget {
    fn mine(&self) -> MutexGuard<'_, Mine> {
        self.mine.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits until a request of `cost` bytes may go ahead and counts it; `false` once the
    /// connection's writer is gone (nothing will ever be released).
    pub(crate) fn acquire(&self, cost: usize) -> bool {
        let b = &*self.budgets;
        let mut totals = b.lock();
        loop {
            {
                let mut mine = self.mine();
                if mine.closed {
                    return false;
                }
                let idle = mine.count == 0;
                let fits = mine.count < b.max_requests
                    && mine.bytes + cost <= b.conn_limit_bytes
                    && totals.bytes + cost <= b.total_limit_bytes;
                if idle || fits {
                    mine.count += 1;
                    mine.bytes += cost;
                    totals.bytes += cost;
                    let now = totals.bytes as u64;
                    b.gauge.bytes.store(now, Ordering::Relaxed);
                    b.gauge.peak_bytes.fetch_max(now, Ordering::Relaxed);
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
            mine.count = mine.count.saturating_sub(1);
            mine.bytes = mine.bytes.saturating_sub(cost);
        }
        totals.bytes = totals.bytes.saturating_sub(cost);
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
            totals.bytes = totals.bytes.saturating_sub(mine.bytes);
            mine.bytes = 0;
            mine.count = 0;
        }
        b.gauge.bytes.store(totals.bytes as u64, Ordering::Relaxed);
        b.cv.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn budgets(conn: usize, total: usize) -> Arc<Budgets> {
        Budgets::new(conn, total, 1024, Arc::new(Gauge::default()))
    }

    /// Whether `acquire(cost)` completes within 100 ms (it is left blocked otherwise; the
    /// test then releases to unblock it).
    fn admits(c: &Arc<ConnBudget>, cost: usize) -> std::thread::JoinHandle<bool> {
        let c = Arc::clone(c);
        std::thread::spawn(move || c.acquire(cost))
    }

    #[test]
    fn idle_connection_always_admits_one_oversized_request() {
        let b = budgets(1 << 20, 4 << 20);
        let c = b.connection();
        assert!(c.acquire(32 << 20), "32 MiB on an idle connection");
        assert_eq!(b.gauge.bytes.load(Ordering::Relaxed), 32 << 20);
        c.release(32 << 20);
        assert_eq!(b.gauge.bytes.load(Ordering::Relaxed), 0);
        assert_eq!(b.gauge.peak_bytes.load(Ordering::Relaxed), 32 << 20);
    }

    #[test]
    fn per_connection_and_global_limits_block_until_release() {
        let b = budgets(3 << 20, 4 << 20);
        let c1 = Arc::new(b.connection());
        let c2 = Arc::new(b.connection());
        assert!(c1.acquire(2 << 20));
        // c1 would exceed its 3 MiB.
        let t = admits(&c1, 2 << 20);
        std::thread::sleep(Duration::from_millis(100));
        assert!(!t.is_finished(), "per-connection limit must block");
        // c2 is idle: admitted even though the total would reach 5 MiB > 4 MiB.
        assert!(c2.acquire(3 << 20));
        // c2's second request must wait for the global budget.
        let t2 = admits(&c2, 1);
        std::thread::sleep(Duration::from_millis(100));
        assert!(!t2.is_finished(), "global limit must block");
        c1.release(2 << 20); // c1 idle: its waiting request goes in (idle rule)
        assert!(t.join().unwrap());
        c2.release(3 << 20);
        assert!(t2.join().unwrap());
        assert_eq!(b.gauge.bytes.load(Ordering::Relaxed), (2 << 20) + 1);
    }

    #[test]
    fn close_wakes_a_blocked_reader_and_returns_its_bytes() {
        let b = budgets(1 << 20, 8 << 20);
        let c = Arc::new(b.connection());
        assert!(c.acquire(1 << 20));
        let t = admits(&c, 1 << 20);
        std::thread::sleep(Duration::from_millis(50));
        c.close();
        assert!(!t.join().unwrap());
        assert_eq!(b.gauge.bytes.load(Ordering::Relaxed), 0);
    }
}
