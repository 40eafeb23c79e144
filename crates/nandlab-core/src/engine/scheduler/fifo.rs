//! `fifo` (the default): host operations, reads and writes alike, are served in the order the
//! FTL issues them on each die (timed when issued); background cleaning waits for idle dies.

use std::sync::Arc;

use super::{SchedulerEntry, SchedulerSpec};
use crate::engine::CLASSES;

pub(super) const ENTRY: SchedulerEntry = SchedulerEntry { name: "fifo", params: &[], resolve: |_| Ok(Arc::new(Fifo)) };

#[derive(Clone, Copy, Debug)]
pub struct Fifo;

impl SchedulerSpec for Fifo {
    fn name(&self) -> &'static str {
        ENTRY.name
    }
    fn ranks(&self) -> [u8; CLASSES] {
        // host read, host write, background
        [0, 0, 1]
    }
}
