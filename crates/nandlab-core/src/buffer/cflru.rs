//! CFLRU, clean-first LRU (Park, Jung, Kang, Kim, Lee, CASES'06; the FAB paper cites clean-first
//! LRU as related work, its reference [13]; docs/PAPERS.md).
//!
//! One page-level recency list split into a working region (most recent) and a clean-first
//! region of the `w` least recent pages, `w = ⌈buffer.cflru_window × capacity⌉`. The victim is
//! the least recently used *clean* page inside the clean-first region, which costs no flash
//! write; only when that region holds no clean page is the LRU page taken (written back if
//! dirty). Reads and writes both count as uses.
//!
//! The original walks the clean-first region from its LRU end. Here the choice is O(1): the
//! region's head-most entry (`boundary`) and its number of clean pages are maintained as the
//! list changes, and the clean pages form a second recency list. Because the region is the
//! tail of the recency order, the least recent clean page overall lies inside it exactly when
//! the region holds any clean page — so the victim is that page or the LRU page.

use super::list::{DenseMap, HashedMap};
use super::list::{Links, List, NIL};
use std::sync::Arc;

use super::{Buffer, BufferEntry, BufferShape, ResolvedBuffer, WriteBuffer};
use super::{BufferPolicy, Slot, Victim};
use crate::flash::Lpn;
use crate::spec::{check, Param};
/// `buffer.cflru_window`: the clean-first region as a fraction of the buffer, in (0, 1]; default
/// 0.5.
pub(super) const ENTRY: BufferEntry = BufferEntry {
    name: "cflru",
    params: &[Param::new("buffer", "cflru_window")],
    resolve: |params| {
        let window = params.f64("cflru_window", 0.5)?;
        check(window > 0.0 && window <= 1.0, "buffer.cflru_window", "must be in (0, 1]")?;
        Ok(Arc::new(CflruSpec { window }))
    },
};

/// CFLRU with its window resolved.
#[derive(Clone, Copy, Debug)]
struct CflruSpec {
    window: f64,
}

impl ResolvedBuffer for CflruSpec {
    fn build(&self, shape: BufferShape) -> Box<dyn Buffer> {
        if super::dense_index(shape) {
            make::<DenseMap>(shape, self.window)
        } else {
            make::<HashedMap>(shape, self.window)
        }
    }
}

fn make<M: super::list::KeyMap>(shape: BufferShape, window: f64) -> Box<dyn Buffer> {
    Box::new(WriteBuffer::<_, M>::new(Cflru::new(shape.capacity_pages, window), shape))
}

pub struct Cflru {
    links: Links,
    list: List,
    /// The clean pages, in recency order.
    clean_links: Links,
    clean: List,
    dirty: Vec<bool>,
    in_window: Vec<bool>,
    /// Head-most entry of the clean-first region (`NIL` when the buffer is empty).
    boundary: u32,
    clean_in_window: u32,
    window_pages: u32,
    /// A host flush cleaned pages out of recency order: rebuild the clean list before use.
    clean_list_stale: bool,
}

impl Cflru {
    #[must_use]
    pub fn new(capacity_pages: u32, window_fraction: f64) -> Self {
        let n = capacity_pages as usize;
        let window_pages = ((f64::from(capacity_pages) * window_fraction).ceil() as u32).max(1);
        Self {
            links: Links::new(n),
            list: List::default(),
            clean_links: Links::new(n),
            clean: List::default(),
            dirty: vec![false; n],
            in_window: vec![false; n],
            boundary: NIL,
            clean_in_window: 0,
            window_pages,
            clean_list_stale: false,
        }
    }

    #[inline]
    fn refresh_clean_list(&mut self) {
        if self.clean_list_stale {
            self.rebuild_clean_list();
        }
    }

    #[inline(never)]
    fn rebuild_clean_list(&mut self) {
        self.clean_list_stale = false;
        self.clean = List::default();
        let mut i = self.list.tail;
        while i != NIL {
            if !self.dirty[i as usize] {
                self.clean_links.push_front(&mut self.clean, i);
            }
            i = self.links.prev(i);
        }
    }

    /// Adds `i` at the head of the recency list (it is not on it).
    #[inline]
    fn push(&mut self, i: Slot) {
        self.links.push_front(&mut self.list, i);
        if !self.dirty[i as usize] {
            self.clean_links.push_front(&mut self.clean, i);
        }
        // The region keeps its `w` tail entries; a list no longer than `w` is all region.
        if self.list.len <= self.window_pages {
            self.in_window[i as usize] = true;
            self.boundary = i;
            if !self.dirty[i as usize] {
                self.clean_in_window += 1;
            }
        }
    }

    /// Takes `i` off the recency list; the region grows back to `w` entries from the front.
    #[inline]
    fn pull(&mut self, i: Slot) {
        let clean = !self.dirty[i as usize];
        if clean {
            self.clean_links.unlink(&mut self.clean, i);
        }
        if !self.in_window[i as usize] {
            self.links.unlink(&mut self.list, i);
            return;
        }
        let before = self.links.prev(self.boundary);
        self.links.unlink(&mut self.list, i);
        self.in_window[i as usize] = false;
        if clean {
            self.clean_in_window -= 1;
        }
        if before == NIL {
            // Everything left is in the region.
            self.boundary = self.list.head;
        } else {
            self.in_window[before as usize] = true;
            if !self.dirty[before as usize] {
                self.clean_in_window += 1;
            }
            self.boundary = before;
        }
    }

    fn set_dirty(&mut self, i: Slot, dirty: bool) {
        if self.dirty[i as usize] == dirty {
            return;
        }
        self.dirty[i as usize] = dirty;
        if self.in_window[i as usize] {
            if dirty {
                self.clean_in_window -= 1;
            } else {
                self.clean_in_window += 1;
            }
        }
        if dirty {
            self.clean_links.unlink(&mut self.clean, i);
        } else {
            // Out of recency order (only host flushes clean pages): rebuilt lazily.
            self.clean_list_stale = true;
        }
    }
}

impl BufferPolicy for Cflru {
    fn name(&self) -> &'static str {
        "cflru"
    }

    #[inline]
    fn inserted(&mut self, slot: Slot, _lpn: Lpn, dirty: bool) {
        self.refresh_clean_list();
        self.dirty[slot as usize] = dirty;
        self.push(slot);
    }

    #[inline]
    fn hit(&mut self, slot: Slot, _lpn: Lpn, write: bool) {
        self.refresh_clean_list();
        self.pull(slot);
        if write {
            self.dirty[slot as usize] = true;
        }
        self.push(slot);
    }

    fn removed(&mut self, slot: Slot, _lpn: Lpn) {
        self.refresh_clean_list();
        self.pull(slot);
    }

    fn cleaned(&mut self, slot: Slot) {
        self.set_dirty(slot, false);
    }

    /// A hint: the clean list may be stale, and cleaned pages change the choice.
    fn upcoming_victim(&self, k: u32) -> Option<Victim> {
        let (links, mut s) = if self.clean_in_window > 0 {
            (&self.clean_links, self.clean.tail)
        } else {
            (&self.links, self.list.tail)
        };
        for _ in 0..k {
            if s == NIL {
                break;
            }
            s = links.prev(s);
        }
        (s != NIL).then_some(Victim::Page(s))
    }

    fn victim(&mut self) -> Victim {
        self.refresh_clean_list();
        let chosen = if self.clean_in_window > 0 { self.clean.tail } else { self.list.tail };
        debug_assert!(self.in_window[chosen as usize]);
        self.pull(chosen);
        Victim::Page(chosen)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Prng;

    /// The O(1) choice equals the original walk of the clean-first region from its LRU end.
    #[test]
    fn victim_matches_a_walk_of_the_window() {
        let cap = 40;
        let mut c = Cflru::new(cap, 0.3);
        let mut rng = Prng::new(9);
        let mut free: Vec<u32> = (0..cap).collect();
        let mut used: Vec<u32> = Vec::new();
        for step in 0..100_000 {
            match rng.below(8) {
                0 if !used.is_empty() => {
                    let i = rng.below(used.len() as u64) as usize;
                    let s = used.swap_remove(i);
                    c.removed(s, Lpn::new(0));
                    free.push(s);
                }
                1 if !used.is_empty() => {
                    let s = used[rng.below(used.len() as u64) as usize];
                    c.cleaned(s);
                }
                2 | 3 if !used.is_empty() => {
                    let s = used[rng.below(used.len() as u64) as usize];
                    c.hit(s, Lpn::new(0), rng.below(2) == 0);
                }
                _ => {
                    if free.is_empty() {
                        // The walk: up to w entries from the tail, first clean one, else tail.
                        c.refresh_clean_list();
                        let order = c.links.collect(&c.list);
                        let w = c.window_pages as usize;
                        let window = &order[order.len().saturating_sub(w)..];
                        let expected = window
                            .iter()
                            .rev()
                            .copied()
                            .find(|&s| !c.dirty[s as usize])
                            .unwrap_or(*order.last().unwrap());
                        let Victim::Page(v) = c.victim() else { panic!() };
                        assert_eq!(v, expected, "step {step}");
                        used.retain(|&s| s != v);
                        free.push(v);
                    }
                    let s = free.pop().unwrap();
                    c.inserted(s, Lpn::new(0), rng.below(3) == 0);
                    used.push(s);
                }
            }
        }
    }
}
