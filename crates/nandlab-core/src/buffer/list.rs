//! Intrusive doubly linked lists over dense indexes (buffer slots or block nodes).
//!
//! The buffer policies keep recency lists of up to one entry per buffered page. A list of
//! boxed nodes would allocate per simulated page; here the links of every entry live in two
//! arrays sized once, and several lists (FAB's per-count buckets) can share them because an
//! entry is on at most one list at a time.

use crate::flash::Lpn;

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

/// The links of entries `0..n`: `[prev, next]` side by side, so following or changing an
/// entry's links touches one cache line, not two.
#[derive(Clone, Debug)]
pub struct Links {
    links: Vec<[u32; 2]>,
}

const PREV: usize = 0;
const NEXT: usize = 1;

impl Links {
    #[must_use]
    pub fn new(n: usize) -> Self {
        Self { links: vec![[NIL, NIL]; n] }
    }

    /// The entry after `i` (towards the tail), or `NIL`.
    #[inline]
    #[must_use]
    pub fn next(&self, i: u32) -> u32 {
        self.links[i as usize][NEXT]
    }

    /// The entry before `i` (towards the head), or `NIL`.
    #[inline]
    #[must_use]
    pub fn prev(&self, i: u32) -> u32 {
        self.links[i as usize][PREV]
    }

    /// Cache hint: entry `i`'s links.
    #[inline]
    pub fn prefetch(&self, i: u32) {
        nandlab_prefetch::prefetch(&self.links, i as usize);
    }

    #[inline]
    pub fn push_front(&mut self, l: &mut List, i: u32) {
        self.links[i as usize][PREV] = NIL;
        self.links[i as usize][NEXT] = l.head;
        if l.head == NIL {
            l.tail = i;
        } else {
            self.links[l.head as usize][PREV] = i;
        }
        l.head = i;
        l.len += 1;
    }

    #[inline]
    pub fn push_back(&mut self, l: &mut List, i: u32) {
        self.links[i as usize][NEXT] = NIL;
        self.links[i as usize][PREV] = l.tail;
        if l.tail == NIL {
            l.head = i;
        } else {
            self.links[l.tail as usize][NEXT] = i;
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
        let p = self.links[at as usize][PREV];
        if p == NIL {
            self.push_front(l, i);
            return;
        }
        self.links[i as usize][PREV] = p;
        self.links[i as usize][NEXT] = at;
        self.links[p as usize][NEXT] = i;
        self.links[at as usize][PREV] = i;
        l.len += 1;
    }

    #[inline]
    pub fn unlink(&mut self, l: &mut List, i: u32) {
        let (p, n) = (self.links[i as usize][PREV], self.links[i as usize][NEXT]);
        if p == NIL {
            debug_assert_eq!(l.head, i, "unlinking an entry that is not on this list");
            l.head = n;
        } else {
            self.links[p as usize][NEXT] = n;
        }
        if n == NIL {
            l.tail = p;
        } else {
            self.links[n as usize][PREV] = p;
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

    #[cfg(test)]
    /// The entries of `l` from head to tail (for checks and tests).
    #[must_use]
    pub fn collect(&self, l: &List) -> Vec<u32> {
        let mut out = Vec::with_capacity(l.len as usize);
        let mut i = l.head;
        while i != NIL {
            out.push(i);
            i = self.links[i as usize][NEXT];
        }
        out
    }
}

/// Logical block of a page (`lpn / pages_per_block`), by a shift when the block size is a
/// power of two (as every preset's is): an integer division costs tens of cycles, and the
/// block policies take one per page access.
#[derive(Clone, Copy, Debug)]
pub struct BlockOf {
    pages_per_block: u32,
    /// `log2(pages_per_block)`, or `u32::MAX` when it is not a power of two.
    shift: u32,
}

impl BlockOf {
    #[must_use]
    pub fn new(pages_per_block: u32) -> Self {
        assert!(pages_per_block > 0);
        let shift = if pages_per_block.is_power_of_two() {
            pages_per_block.trailing_zeros()
        } else {
            u32::MAX
        };
        Self { pages_per_block, shift }
    }

    #[inline]
    #[must_use]
    pub fn lbn(self, lpn: Lpn) -> u32 {
        if self.shift == u32::MAX {
            lpn.get() / self.pages_per_block
        } else {
            lpn.get() >> self.shift
        }
    }

    /// Offset of `lpn` inside its block.
    #[inline]
    #[must_use]
    pub fn offset(self, lpn: Lpn) -> u32 {
        lpn.get() - self.lbn(lpn) * self.pages_per_block
    }
}

/// Key spaces up to this many keys get a `DenseMap` (4 bytes per key: 512 MiB at most, a
/// 256 GiB device of 2 KiB pages); larger ones a `HashedMap` sized by the buffer.
pub const DENSE_MAX_KEYS: u64 = 1 << 27;

/// A fixed-capacity map from `u32` keys (pages, blocks) to `u32` values (slots, nodes), with
/// no allocation after construction. Two implementations, picked once per buffer by the size
/// of the key space (`by_name`), so the per-page path has no dispatch:
/// - `DenseMap`, over a key space of at most `DENSE_MAX_KEYS`: an array indexed by key (one
///   load per lookup, no hashing: the simulator's rule wherever an array will do);
/// - `HashedMap`, over a larger one (a metadata-only terabyte device, where a dense array
///   would cost a gigabyte): a hash table sized by the buffer. Both are O(1) expected.
pub trait KeyMap: Send + 'static {
    /// A map for at most `max_len` keys, each `< key_space` (and `< u32::MAX`).
    fn new(max_len: usize, key_space: u64) -> Self;
    fn get(&self, key: u32) -> Option<u32>;
    /// Inserts a key that is not present.
    fn insert(&mut self, key: u32, value: u32);
    /// Removes `key`, returning its value.
    fn remove(&mut self, key: u32) -> Option<u32>;
    /// Cache hint: where a lookup of `key` starts.
    fn prefetch(&self, key: u32);
    fn len(&self) -> usize;
    /// Bytes of the table.
    fn memory_bytes(&self) -> u64;
    /// Appends the values of keys `first..end`, in key order, to `out`, stopping once `out`
    /// holds `limit` values (a block victim's pages).
    #[inline]
    fn values_in_range(&self, first: u32, end: u32, limit: usize, out: &mut Vec<u32>) {
        for key in first..end {
            if let Some(x) = self.get(key) {
                out.push(x);
                if out.len() == limit {
                    return;
                }
            }
        }
    }
}

/// An array indexed by key holding `value + 1`, 0 marking an absent key, so the table starts
/// as zeroed memory from the allocator and only the parts a run touches become resident.
#[derive(Clone, Debug)]
pub struct DenseMap {
    values: Vec<u32>,
    len: usize,
}

impl KeyMap for DenseMap {
    fn new(_max_len: usize, key_space: u64) -> Self {
        assert!(key_space <= DENSE_MAX_KEYS, "a dense map over {key_space} keys");
        Self { values: vec![0; key_space as usize], len: 0 }
    }

    #[inline]
    fn get(&self, key: u32) -> Option<u32> {
        self.values[key as usize].checked_sub(1)
    }

    #[inline]
    fn insert(&mut self, key: u32, value: u32) {
        debug_assert!(value != u32::MAX);
        let v = &mut self.values[key as usize];
        debug_assert_eq!(*v, 0, "key {key} inserted twice");
        *v = value + 1;
        self.len += 1;
    }

    #[inline]
    fn remove(&mut self, key: u32) -> Option<u32> {
        let value = std::mem::take(&mut self.values[key as usize]).checked_sub(1)?;
        self.len -= 1;
        Some(value)
    }

    #[inline]
    fn prefetch(&self, key: u32) {
        nandlab_prefetch::prefetch(&self.values, key as usize);
    }

    fn len(&self) -> usize {
        self.len
    }

    /// Untouched parts are not resident.
    fn memory_bytes(&self) -> u64 {
        self.values.len() as u64 * 4
    }

    /// One short slice scan, without a branch per key: a block's buffered pages are sparse
    /// and scattered, so a branch on each entry would mispredict on most of them. Each chunk
    /// of 64 keys becomes a bit mask, and only its set bits are visited.
    #[inline]
    fn values_in_range(&self, first: u32, end: u32, limit: usize, out: &mut Vec<u32>) {
        for chunk in self.values[first as usize..end as usize].chunks(64) {
            let mut mask = 0u64;
            for (i, &x) in chunk.iter().enumerate() {
                mask |= u64::from(x != 0) << i;
            }
            while mask != 0 {
                out.push(chunk[mask.trailing_zeros() as usize] - 1);
                if out.len() == limit {
                    return;
                }
                mask &= mask - 1;
            }
        }
    }
}

/// Open addressing with linear probing at load <= 1/2 and Fibonacci hashing; deletion shifts
/// the following entries back, so there are no tombstones and probe lengths stay short
/// however long the run.
#[derive(Clone, Debug)]
pub struct HashedMap {
    /// `key << 32 | value`; `EMPTY` marks a free cell.
    cells: Vec<u64>,
    shift: u32,
    len: usize,
    max_len: usize,
}

const EMPTY: u64 = u64::MAX;

impl HashedMap {
    #[inline]
    fn home(&self, key: u32) -> usize {
        (u64::from(key).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }
}

impl KeyMap for HashedMap {
    fn new(max_len: usize, _key_space: u64) -> Self {
        let size = (2 * max_len).next_power_of_two().max(8);
        Self { cells: vec![EMPTY; size], shift: 64 - size.trailing_zeros(), len: 0, max_len }
    }

    #[inline]
    fn get(&self, key: u32) -> Option<u32> {
        let mask = self.cells.len() - 1;
        let mut i = self.home(key);
        loop {
            let c = self.cells[i];
            if c == EMPTY {
                return None;
            }
            if (c >> 32) as u32 == key {
                return Some(c as u32);
            }
            i = (i + 1) & mask;
        }
    }

    #[inline]
    fn insert(&mut self, key: u32, value: u32) {
        // A full table would probe forever.
        assert!(self.len < self.max_len, "HashedMap over its capacity of {}", self.max_len);
        debug_assert!(key != u32::MAX);
        let mask = self.cells.len() - 1;
        let mut i = self.home(key);
        while self.cells[i] != EMPTY {
            debug_assert!((self.cells[i] >> 32) as u32 != key, "key {key} inserted twice");
            i = (i + 1) & mask;
        }
        self.cells[i] = (u64::from(key) << 32) | u64::from(value);
        self.len += 1;
    }

    fn remove(&mut self, key: u32) -> Option<u32> {
        let mask = self.cells.len() - 1;
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

    #[inline]
    fn prefetch(&self, key: u32) {
        nandlab_prefetch::prefetch(&self.cells, self.home(key));
    }

    fn len(&self) -> usize {
        self.len
    }

    fn memory_bytes(&self) -> u64 {
        self.cells.len() as u64 * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Prng;

    #[test]
    fn index_map_agrees_with_a_reference_map() {
        // Both representations: dense (small key space) and hashed (beyond DENSE_MAX_KEYS).
        index_map_agrees(DenseMap::new(300, 1000));
        index_map_agrees(HashedMap::new(300, DENSE_MAX_KEYS + 1));
    }

    fn index_map_agrees(mut m: impl KeyMap) {
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
        let mut got = Vec::new();
        m.values_in_range(100, 600, usize::MAX, &mut got); // several 64-key chunks
        assert_eq!(got, r.range(100..600).map(|(_, &v)| v).collect::<Vec<_>>());
        got.clear();
        m.values_in_range(100, 600, 3, &mut got);
        assert_eq!(got, r.range(100..600).map(|(_, &v)| v).take(3).collect::<Vec<_>>());
    }

    #[test]
    fn block_of_divides() {
        for ppb in [1, 3, 64, 96, 128] {
            let b = BlockOf::new(ppb);
            for lpn in [0, 1, 63, 64, 95, 96, 1000, u32::MAX] {
                let at = (b.lbn(Lpn::new(lpn)), b.offset(Lpn::new(lpn)));
                assert_eq!(at, (lpn / ppb, lpn % ppb), "{ppb} {lpn}");
            }
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
