//! Toy buffer (the proof that a buffer policy with a parameter is one file plus one registry
//! line): page-level FIFO — the victim is the page buffered longest. With
//! `buffer.fifo_refresh_on_hit = true` a hit moves the page to the back of the queue again,
//! which is exactly LRU (default false: plain FIFO).

use std::sync::Arc;

use super::list::{DenseMap, HashedMap, Links, List, NIL};
use super::{Buffer, BufferEntry, BufferPolicy, BufferShape, ResolvedBuffer, Slot, Victim};
use super::{dense_index, WriteBuffer};
use crate::flash::Lpn;
use crate::spec::Param;

pub(super) const ENTRY: BufferEntry = BufferEntry {
    name: "fifo",
    params: &[Param::new("buffer", "fifo_refresh_on_hit")],
    resolve: |params| Ok(Arc::new(FifoSpec { refresh: params.or("fifo_refresh_on_hit", false)? })),
};

#[derive(Clone, Copy, Debug)]
struct FifoSpec {
    refresh: bool,
}

impl ResolvedBuffer for FifoSpec {
    fn build(&self, shape: BufferShape) -> Box<dyn Buffer> {
        let links = Links::new(shape.capacity_pages as usize);
        let fifo = Fifo { links, list: List::default(), refresh: self.refresh };
        if dense_index(shape) {
            Box::new(WriteBuffer::<_, DenseMap>::new(fifo, shape))
        } else {
            Box::new(WriteBuffer::<_, HashedMap>::new(fifo, shape))
        }
    }
}

struct Fifo {
    links: Links,
    list: List,
    refresh: bool,
}

impl BufferPolicy for Fifo {
    fn name(&self) -> &'static str {
        ENTRY.name
    }
    fn inserted(&mut self, slot: Slot, _lpn: Lpn, _dirty: bool) {
        self.links.push_front(&mut self.list, slot);
    }
    fn hit(&mut self, slot: Slot, _lpn: Lpn, _write: bool) {
        if self.refresh {
            self.links.move_to_front(&mut self.list, slot);
        }
    }
    fn removed(&mut self, slot: Slot, _lpn: Lpn) {
        self.links.unlink(&mut self.list, slot);
    }
    fn victim(&mut self) -> Victim {
        let slot = self.list.tail;
        debug_assert_ne!(slot, NIL, "a victim is asked for only when a page is buffered");
        self.links.unlink(&mut self.list, slot);
        Victim::Page(slot)
    }
}
