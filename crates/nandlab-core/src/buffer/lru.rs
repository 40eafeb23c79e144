//! Page-level LRU (the FAB paper's BUF_LRU): one recency list of pages; the victim is the least
//! recently used page, written back alone if dirty. Reads and writes both count as uses.

use super::list::{DenseMap, HashedMap};
use super::list::{Links, List};
use super::{Buffer, BufferEntry, BufferShape, Plain, WriteBuffer};
use super::{BufferPolicy, Slot, Victim};
use crate::flash::Lpn;
pub(super) const ENTRY: BufferEntry = BufferEntry {
    name: "lru",
    params: &[],
    resolve: |_| Ok(std::sync::Arc::new(Plain { dense: make::<DenseMap>, hashed: make::<HashedMap> })),
};

fn make<M: super::list::KeyMap>(shape: BufferShape) -> Box<dyn Buffer> {
    Box::new(WriteBuffer::<_, M>::new(Lru::new(shape.capacity_pages), shape))
}

pub struct Lru {
    links: Links,
    list: List,
}

impl Lru {
    #[must_use]
    pub fn new(capacity_pages: u32) -> Self {
        Self { links: Links::new(capacity_pages as usize), list: List::default() }
    }
}

impl BufferPolicy for Lru {
    fn name(&self) -> &'static str {
        "lru"
    }

    #[inline]
    fn inserted(&mut self, slot: Slot, _lpn: Lpn, _dirty: bool) {
        self.links.push_front(&mut self.list, slot);
    }

    #[inline]
    fn hit(&mut self, slot: Slot, _lpn: Lpn, _write: bool) {
        self.links.move_to_front(&mut self.list, slot);
    }

    fn removed(&mut self, slot: Slot, _lpn: Lpn) {
        self.links.unlink(&mut self.list, slot);
    }

    fn upcoming_victim(&self, k: u32) -> Option<Victim> {
        let mut s = self.list.tail;
        for _ in 0..k {
            if s == super::list::NIL {
                break;
            }
            s = self.links.prev(s);
        }
        (s != super::list::NIL).then_some(Victim::Page(s))
    }

    fn victim(&mut self) -> Victim {
        let slot = self.list.tail;
        self.links.unlink(&mut self.list, slot);
        Victim::Page(slot)
    }
}
