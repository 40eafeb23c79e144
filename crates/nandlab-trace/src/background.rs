//! Reading a trace on a second thread: [`BackgroundReader`] parses a [`TraceReader`]'s records
//! ahead, in batches, while the caller consumes them in the same order, so a replay costs the
//! slower of parsing and simulating rather than their sum. The records and the first error
//! arrive exactly as the reader yields them; dropping the reader stops the thread at its next
//! batch.

use std::sync::mpsc::{sync_channel, Receiver};
use std::thread::JoinHandle;

use crate::{TraceError, TraceReader, TraceRecord};

/// Records per batch: large enough that the channel's cost per record is negligible, small
/// enough that the first batch arrives at once.
const BATCH_RECORDS: usize = 4096;

/// Batches parsed ahead of the consumer (bounded, so a fast parser does not fill memory).
const BATCHES_AHEAD: usize = 4;

type Batch = Vec<Result<TraceRecord, TraceError>>;

/// A [`TraceReader`] read on its own thread (see the module doc).
pub struct BackgroundReader {
    batches: Receiver<Batch>,
    current: std::vec::IntoIter<Result<TraceRecord, TraceError>>,
    thread: Option<JoinHandle<()>>,
}

impl BackgroundReader {
    /// Starts parsing `reader` on a new thread.
    #[must_use]
    pub fn new(reader: TraceReader) -> Self {
        let (send, batches) = sync_channel::<Batch>(BATCHES_AHEAD);
        let thread = std::thread::spawn(move || {
            let mut reader = reader;
            loop {
                let mut batch = Vec::with_capacity(BATCH_RECORDS);
                batch.extend(reader.by_ref().take(BATCH_RECORDS));
                let last = batch.len() < BATCH_RECORDS;
                // The consumer is gone: stop.
                if send.send(batch).is_err() || last {
                    return;
                }
            }
        });
        BackgroundReader { batches, current: Vec::new().into_iter(), thread: Some(thread) }
    }
}

impl Iterator for BackgroundReader {
    type Item = Result<TraceRecord, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(item) = self.current.next() {
                return Some(item);
            }
            // The thread ends after a short batch (the reader's end, or its error, which ends
            // it too); a closed channel after that is the end.
            self.current = self.batches.recv().ok()?.into_iter();
            if self.current.len() == 0 {
                return None;
            }
        }
    }
}

impl Drop for BackgroundReader {
    fn drop(&mut self) {
        // Unblock the thread (its next send fails), then wait for it: no parser outlives the
        // replay that started it.
        let (_, closed) = sync_channel::<Batch>(0);
        drop(std::mem::replace(&mut self.batches, closed));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
