//! `read-priority`: a host read goes ahead of every write, erase or copy still waiting for its
//! die (an operation under way finishes first: operations are never suspended). Writes and
//! their foreground cleaning keep their order among themselves; background cleaning comes last.

use std::sync::Arc;

use super::{SchedulerEntry, SchedulerSpec};
use crate::engine::CLASSES;

pub(super) const ENTRY: SchedulerEntry =
    SchedulerEntry { name: "read-priority", params: &[], resolve: |_| Ok(Arc::new(ReadPriority)) };

#[derive(Clone, Copy, Debug)]
pub struct ReadPriority;

impl SchedulerSpec for ReadPriority {
    fn name(&self) -> &'static str {
        ENTRY.name
    }
    fn ranks(&self) -> [u8; CLASSES] {
        // host read, host write, background
        [0, 1, 2]
    }
}
