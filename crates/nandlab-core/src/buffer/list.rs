//! Intrusive doubly linked lists over dense indexes (buffer slots or block nodes).
//!
//! The buffer policies keep recency lists of up to one entry per buffered page. A list of
//! boxed nodes would allocate per simulated page; here the links of every entry live in two
//! arrays sized once, and several lists (FAB's per-count buckets) can share them because an
//! entry is on at most one list at a time.

/// "No entry".
pub const NIL: u32 = u32::MAX;

/// One list: its ends and length. The head is the most recently used end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct List {
    pub head: u32,
    pub tail: u32,
    pub len: u32,
}

impl Default for List {
    fn default() -> Self {
        Self { head: NIL, tail: NIL, len: 0 }
    }
}

impl List {
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// The links of entries `0..n`.
#[derive(Clone, Debug)]
pub struct Links {
    prev: Vec<u32>,
    next: Vec<u32>,
}

impl Links {
    #[must_use]
    pub fn new(n: usize) -> Self {
        Self { prev: vec![NIL; n], next: vec![NIL; n] }
    }

    /// The entry after `i` (towards the tail), or `NIL`.
    #[inline]
    #[must_use]
    pub fn next(&self, i: u32) -> u32 {
        self.next[i as usize]
    }

    /// The entry before `i` (towards the head), or `NIL`.
    #[inline]
    #[must_use]
    pub fn prev(&self, i: u32) -> u32 {
        self.prev[i as usize]
    }

    #[inline]
    pub fn push_front(&mut self, l: &mut List, i: u32) {
        self.prev[i as usize] = NIL;
        self.next[i as usize] = l.head;
        if l.head == NIL {
            l.tail = i;
        } else {
            self.prev[l.head as usize] = i;
        }
        l.head = i;
        l.len += 1;
    }

    #[inline]
    pub fn push_back(&mut self, l: &mut List, i: u32) {
        self.next[i as usize] = NIL;
        self.prev[i as usize] = l.tail;
        if l.tail == NIL {
            l.head = i;
        } else {
            self.next[l.tail as usize] = i;
        }
        l.tail = i;
        l.len += 1;
    }

    /// Inserts `i` just before `at` (towards the head); `at = NIL` appends at the tail.
    pub fn insert_before(&mut self, l: &mut List, at: u32, i: u32) {
        if at == NIL {
            self.push_back(l, i);
            return;
        }
        let p = self.prev[at as usize];
        if p == NIL {
            self.push_front(l, i);
            return;
        }
        self.prev[i as usize] = p;
        self.next[i as usize] = at;
        self.next[p as usize] = i;
        self.prev[at as usize] = i;
        l.len += 1;
    }

    #[inline]
    pub fn unlink(&mut self, l: &mut List, i: u32) {
        let (p, n) = (self.prev[i as usize], self.next[i as usize]);
        if p == NIL {
            debug_assert_eq!(l.head, i, "unlinking an entry that is not on this list");
            l.head = n;
        } else {
            self.next[p as usize] = n;
        }
        if n == NIL {
            l.tail = p;
        } else {
            self.prev[n as usize] = p;
        }
        l.len -= 1;
    }

    #[inline]
    pub fn move_to_front(&mut self, l: &mut List, i: u32) {
        if l.head != i {
            self.unlink(l, i);
            self.push_front(l, i);
        }
    }

    /// Appends the entries of `l`, head to tail, to `out` and empties `l` (the entries' links
    /// are left stale: they are on no list).
    pub fn drain_into(&self, l: &mut List, out: &mut Vec<u32>) {
        let mut i = l.head;
        while i != NIL {
            out.push(i);
            i = self.next[i as usize];
        }
        *l = List::default();
    }

    /// The entries of `l` from head to tail (for checks and tests).
    #[must_use]
    pub fn collect(&self, l: &List) -> Vec<u32> {
        let mut out = Vec::with_capacity(l.len as usize);
        let mut i = l.head;
        while i != NIL {
            out.push(i);
            i = self.next[i as usize];
        }
        out
    }
}

/// A fixed-capacity open-addressing map from `u32` keys (pages, blocks) to `u32` values
/// (slots, nodes): O(1) expected lookups, no allocation after construction, and a table sized
/// by the buffer, not by the device (a dense array indexed by LPN would cost 4 bytes per
/// logical page, a gigabyte for a metadata-only terabyte device).
///
/// Linear probing at load ≤ 1/2 with Fibonacci hashing; deletion shifts the following entries
/// back, so there are no tombstones and probe lengths stay short however long the run.
#[derive(Clone, Debug)]
pub struct IndexMap {
    /// `key << 32 | value`; `EMPTY` marks a free cell.
    cells: Vec<u64>,
    shift: u32,
    len: usize,
    max_len: usize,
}

const EMPTY: u64 = u64::MAX;

impl IndexMap {
    /// A map for at most `max_len` keys (each `< u32::MAX`).
    #[must_use]
    pub fn with_max_len(max_len: usize) -> Self {
        let size = (2 * max_len).next_power_of_two().max(8);
        Self { cells: vec![EMPTY; size], shift: 64 - size.trailing_zeros(), len: 0, max_len }
    }

    #[inline]
    fn home(&self, key: u32) -> usize {
        (u64::from(key).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    #[inline]
    fn mask(&self) -> usize {
        self.cells.len() - 1
    }

    #[inline]
    #[must_use]
    pub fn get(&self, key: u32) -> Option<u32> {
        let mut i = self.home(key);
        loop {
            let c = self.cells[i];
            if c == EMPTY {
                return None;
            }
            if (c >> 32) as u32 == key {
                return Some(c as u32);
            }
            i = (i + 1) & self.mask();
        }
    }

    /// Inserts a key that is not present.
    #[inline]
    pub fn insert(&mut self, key: u32, value: u32) {
        assert!(self.len < self.max_len, "IndexMap over its capacity of {}", self.max_len);
        debug_assert!(key != u32::MAX);
        let mut i = self.home(key);
        while self.cells[i] != EMPTY {
            debug_assert!((self.cells[i] >> 32) as u32 != key, "key {key} inserted twice");
            i = (i + 1) & self.mask();
        }
        self.cells[i] = (u64::from(key) << 32) | u64::from(value);
        self.len += 1;
    }

    /// Removes `key`, returning its value.
    pub fn remove(&mut self, key: u32) -> Option<u32> {
        let mask = self.mask();
        let mut i = self.home(key);
        loop {
            let c = self.cells[i];
            if c == EMPTY {
                return None;
            }
            if (c >> 32) as u32 == key {
                break;
            }
            i = (i + 1) & mask;
        }
        let value = self.cells[i] as u32;
        // Backward-shift deletion: move each following entry of the probe run into the hole
        // unless its home lies cyclically after the hole (it would become unreachable).
        let mut hole = i;
        let mut j = i;
        loop {
            j = (j + 1) & mask;
            let c = self.cells[j];
            if c == EMPTY {
                break;
            }
            let home = self.home((c >> 32) as u32);
            // Distance from home to j and from hole to j, cyclically.
            if (j.wrapping_sub(home) & mask) >= (j.wrapping_sub(hole) & mask) {
                self.cells[hole] = c;
                hole = j;
            }
        }
        self.cells[hole] = EMPTY;
        self.len -= 1;
        Some(value)
    }

    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes of the table.
    #[must_use]
    pub fn memory_bytes(&self) -> u64 {
        self.cells.len() as u64 * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Prng;

    #[test]
    fn index_map_agrees_with_a_reference_map() {
        let mut m = IndexMap::with_max_len(300);
        let mut r = std::collections::BTreeMap::new();
        let mut rng = Prng::new(7);
        for step in 0..200_000u32 {
            let key = rng.below(1000) as u32;
            match (r.get(&key).copied(), rng.below(3)) {
                (None, 0 | 1) if r.len() < 300 => {
                    m.insert(key, step);
                    r.insert(key, step);
                }
                (Some(v), 2) => {
                    assert_eq!(m.remove(key), Some(v));
                    r.remove(&key);
                }
                (v, _) => assert_eq!(m.get(key), v),
            }
            assert_eq!(m.len(), r.len());
        }
        for k in 0..1000 {
            assert_eq!(m.get(k), r.get(&k).copied(), "key {k}");
        }
    }

    #[test]
    fn lists_keep_order() {
        let mut links = Links::new(6);
        let mut l = List::default();
        for i in 0..4 {
            links.push_front(&mut l, i);
        }
        assert_eq!(links.collect(&l), [3, 2, 1, 0]);
        links.move_to_front(&mut l, 1);
        links.unlink(&mut l, 0);
        links.push_back(&mut l, 5);
        links.insert_before(&mut l, 2, 4);
        assert_eq!(links.collect(&l), [1, 3, 4, 2, 5]);
        assert_eq!((l.head, l.tail, l.len), (1, 5, 5));
        links.insert_before(&mut l, 1, 0);
        assert_eq!(links.collect(&l), [0, 1, 3, 4, 2, 5]);
        assert_eq!(l.head, 0);
    }
}
