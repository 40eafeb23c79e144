//! [`MemoryEngine`]: a RAM-backed [`Engine`] with optional fixed latency.
//!
//! Used by this crate's tests and handy for smoke-testing clients against
//! the server without the simulator. Trim and write-zeroes both zero the
//! range; flush and cache do nothing. Every reply is released at
//! `received + latency`.

use crate::{CommandKind, Engine, Errno, ExportInfo, IoOutcome, IoRequest};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// At most this many completions are kept in the log.
const COMPLETION_LOG_CAP: usize = 1 << 20;

/// One [`Engine::completed`] call, as logged by [`MemoryEngine`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    /// Request kind.
    pub kind: CommandKind,
    /// When the request was read off the socket.
    pub received: Instant,
    /// When its reply had been written.
    pub replied: Instant,
    /// When the engine allowed the reply to go.
    pub release_at: Instant,
}

/// Shared views into a [`MemoryEngine`] that stay usable after the engine
/// was moved into the server.
#[derive(Clone, Debug, Default)]
pub struct MemoryProbe {
    /// Requests passed to [`Engine::submit`].
    pub submitted: Arc<AtomicU64>,
    /// [`Engine::tick`] calls.
    pub ticks: Arc<AtomicU64>,
    /// Set by [`Engine::shutdown`].
    pub shut_down: Arc<AtomicBool>,
    /// [`Engine::completed`] calls (first 2^20).
    pub completions: Arc<Mutex<Vec<Completion>>>,
}

impl MemoryProbe {
    /// A copy of the completion log.
    pub fn completions(&self) -> Vec<Completion> {
        self.completions.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

/// A RAM disk.
#[derive(Debug)]
pub struct MemoryEngine {
    info: ExportInfo,
    data: Vec<u8>,
    latency: Duration,
    probe: MemoryProbe,
}

impl MemoryEngine {
    /// A zero-filled disk of `size_bytes` named `name`, block sizes 1 / 4096 /
    /// 32 MiB, no latency, writable.
    pub fn new(name: &str, size_bytes: u64) -> MemoryEngine {
        MemoryEngine {
            info: ExportInfo {
                name: name.to_string(),
                description: format!("nandlab in-memory disk ({size_bytes} bytes)"),
                size_bytes,
                min_block_bytes: 1,
                preferred_block_bytes: 4096,
                max_block_bytes: 32 << 20,
                read_only: false,
            },
            data: vec![0; size_bytes as usize],
            latency: Duration::ZERO,
            probe: MemoryProbe::default(),
        }
    }

    /// Every reply is released `latency` after the request was received.
    pub fn with_latency(mut self, latency: Duration) -> MemoryEngine {
        self.latency = latency;
        self
    }

    /// Sets the advertised minimum, preferred and maximum block sizes.
    pub fn with_block_sizes(mut self, min: u32, preferred: u32, max: u32) -> MemoryEngine {
        self.info.min_block_bytes = min;
        self.info.preferred_block_bytes = preferred;
        self.info.max_block_bytes = max;
        self
    }

    /// Makes the export read-only (or writable).
    pub fn read_only(mut self, read_only: bool) -> MemoryEngine {
        self.info.read_only = read_only;
        self
    }

    /// Sets the description.
    pub fn with_description(mut self, description: &str) -> MemoryEngine {
        self.info.description = description.to_string();
        self
    }

    /// Counters and logs shared with the caller.
    pub fn probe(&self) -> MemoryProbe {
        self.probe.clone()
    }

    /// The disk contents.
    pub fn contents(&self) -> &[u8] {
        &self.data
    }

    fn range(&self, req: &IoRequest) -> Option<std::ops::Range<usize>> {
        let start = usize::try_from(req.offset_bytes).ok()?;
        let end = start.checked_add(req.length_bytes as usize)?;
        (end <= self.data.len()).then_some(start..end)
    }
}

impl Engine for MemoryEngine {
    fn export(&self) -> ExportInfo {
        self.info.clone()
    }

    fn submit(&mut self, req: IoRequest) -> IoOutcome {
        self.probe.submitted.fetch_add(1, Ordering::Relaxed);
        let release_at = req.received + self.latency;
        if req.kind == CommandKind::Flush {
            return IoOutcome::ok(release_at);
        }
        let Some(range) = self.range(&req) else {
            return IoOutcome::err(Errno::Inval, release_at);
        };
        match req.kind {
            CommandKind::Read => {
                IoOutcome { error: None, data: self.data[range].to_vec(), release_at }
            }
            CommandKind::Write => {
                if req.data.len() != range.len() {
                    return IoOutcome::err(Errno::Inval, release_at);
                }
                self.data[range].copy_from_slice(&req.data);
                IoOutcome::ok(release_at)
            }
            CommandKind::Trim | CommandKind::WriteZeroes => {
                self.data[range].fill(0);
                IoOutcome::ok(release_at)
            }
            CommandKind::Cache | CommandKind::Flush => IoOutcome::ok(release_at),
        }
    }

    fn tick(&mut self) {
        self.probe.ticks.fetch_add(1, Ordering::Relaxed);
    }

    fn completed(
        &mut self,
        kind: CommandKind,
        received: Instant,
        replied: Instant,
        release_at: Instant,
    ) {
        let mut log = self.probe.completions.lock().unwrap_or_else(PoisonError::into_inner);
        if log.len() < COMPLETION_LOG_CAP {
            log.push(Completion { kind, received, replied, release_at });
        }
    }

    fn shutdown(&mut self) {
        self.probe.shut_down.store(true, Ordering::SeqCst);
    }
}
