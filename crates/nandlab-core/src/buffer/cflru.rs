//! CFLRU, clean-first LRU (Park, Kang, Park, Kim, Kim, CASES'06; cited by paper 001 as [13]).
//!
//! One page-level recency list split into a working region (most recent) and a clean-first
//! region of `w` pages at the LRU end, `w = ⌈buffer.cflru_window × capacity⌉`. The victim is
//! the least recently used *clean* page inside the clean-first region, which costs no flash
//! write; only when that region holds no clean page is the LRU page taken (written back if
//! dirty). Reads and writes both count as uses.
//!
//! The search walks at most `w` entries from the tail, as the original does; it stops at once
//! when no clean page is buffered at all (the common case for a write-only workload), so a
//! write-dominated run never pays the walk.

use super::list::{Links, List, NIL};
use super::{BufferPolicy, Slot, Victim};
use crate::flash::Lpn;

pub struct Cflru {
    links: Links,
    list: List,
    dirty: Vec<bool>,
    clean_pages: u32,
    window_pages: u32,
}

impl Cflru {
    #[must_use]
    pub fn new(capacity_pages: u32, window_fraction: f64) -> Self {
        let window_pages = ((f64::from(capacity_pages) * window_fraction).ceil() as u32).max(1);
        Self {
            links: Links::new(capacity_pages as usize),
            list: List::default(),
            dirty: vec![false; capacity_pages as usize],
            clean_pages: 0,
            window_pages,
        }
    }

    fn set_dirty(&mut self, slot: Slot, dirty: bool) {
        let d = &mut self.dirty[slot as usize];
        match (*d, dirty) {
            (true, false) => self.clean_pages += 1,
            (false, true) => self.clean_pages -= 1,
            _ => {}
        }
        *d = dirty;
    }
}

impl BufferPolicy for Cflru {
    fn name(&self) -> &'static str {
        "cflru"
    }

    fn inserted(&mut self, slot: Slot, _lpn: Lpn, dirty: bool) {
        self.links.push_front(&mut self.list, slot);
        self.dirty[slot as usize] = dirty;
        if !dirty {
            self.clean_pages += 1;
        }
    }

    fn hit(&mut self, slot: Slot, _lpn: Lpn, write: bool) {
        self.links.move_to_front(&mut self.list, slot);
        if write {
            self.set_dirty(slot, true);
        }
    }

    fn removed(&mut self, slot: Slot, _lpn: Lpn) {
        self.links.unlink(&mut self.list, slot);
        if !self.dirty[slot as usize] {
            self.clean_pages -= 1;
        }
    }

    fn cleaned(&mut self, slot: Slot) {
        self.set_dirty(slot, false);
    }

    fn victim(&mut self) -> Victim {
        let mut chosen = self.list.tail;
        if self.clean_pages > 0 {
            let mut i = self.list.tail;
            let mut seen = 0;
            while i != NIL && seen < self.window_pages {
                if !self.dirty[i as usize] {
                    chosen = i;
                    break;
                }
                i = self.links.prev(i);
                seen += 1;
            }
        }
        self.removed(chosen, 0);
        Victim::Page(chosen)
    }
}
