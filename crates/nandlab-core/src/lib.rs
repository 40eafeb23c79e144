//! nandlab-core: the pure, deterministic simulation core of nandlab.
//!
//! No Python, sockets, threads or wall clock: a run is a pure function of (config, seed,
//! version). Layers, host side first: `request` (the host's vocabulary) → `device`
//! (request-level API, timing, metrics window) → `ftl` (translation; page-mapped log-structured
//! store of the DAC paper) with `gc` victim policies and `placement` policies chosen once at
//! construction → `flash` (timing-charged operations on a `Media`).
#![forbid(unsafe_code)]
//!
//! The public API is what this file re-exports; the modules are private. The front doors
//! (`nandlab-run`, `nandlab-serve`, the CLI, the Python bindings) need only the root items and
//! the four namespaces below: `media` (what a storage back end implements), `parts` (an FTL or
//! buffer driven below the request level, built in one step from a resolved configuration),
//! `names` (what each policy family registers) and nothing else.

mod allocation;
mod assemble;
mod buffer;
mod config;
mod device;
mod engine;
mod error;
mod fastdiv;
mod flash;
mod ftl;
mod ftl_kinds;
mod gc;
mod memory;
mod metrics;
mod placement;
mod presets;
mod request;
mod rng;
mod sim;
mod spec;
mod wear;
mod workload;

// Configuration: parsed, overridden, resolved into typed specs; what fits in RAM.
pub use config::{
    apply_overrides, keys as config_keys, toml_error_message, Config, Resolved, RunTiming,
};
pub use flash::Geometry;
pub use ftl::hybrid::recycling::CostModel;
pub use ftl::FtlSpec;
pub use memory::{estimate as estimate_memory, human_bytes, MemoryEstimate};
pub use presets::{Preset, PRESETS};

// The device and the host's requests.
pub use device::{Completion, Device, Dispatched, Effects, Io, Submission, Wait};
pub use error::{ConfigError, MediaError, RecoveryError, RequestError};
pub use ftl::FtlRecovery;
pub use request::{Request, RequestKind};

// Runs: workloads, the run loop, their results.
pub use metrics::{LatencyHistogram, LatencySummary, Metrics, WearSample, WearSummary};
pub use placement::next_write_distances;
pub use rng::Prng;
pub use sim::{run, Event, RunError, RunOptions};
pub use workload::kinds::trace::TracePlan;
pub use workload::{
    estimated_requests, FsConfig, Repeated, Synthetic, TraceKeys, WorkItem, Workload,
};

/// What a storage back end implements (`Media`: programs, reads, erases and the records a
/// restart reads back) and the identifiers and records it stores. The served drive's image
/// (`nandlab-store`) is one; `CountingMedia` (metadata only) and `FaultyMedia` (injected
/// failures) are the core's own.
pub mod media {
    pub use crate::flash::{
        BlockId, BlockRecord, Checkpoint, CountingMedia, Fault, FaultKind, FaultyMedia,
        FlashCounters, Injected, Lpn, Media, NvramEntry, Oob, Ppn, Source, GARBAGE_LPN,
        MAX_PLAUSIBLE_ERASE_COUNT, NONE,
    };
}

/// The device's parts, for tools and tests that drive an FTL or a buffer below the request
/// level. An FTL is built in one step from a resolved configuration, exactly as `Device`
/// builds its own: there are no setters to forget.
pub mod parts {
    pub use crate::assemble::{hybrid_ftl, page_ftl, recover_hybrid_ftl, recover_page_ftl};
    pub use crate::buffer::{by_name as buffer_by_name, Buffer, BufferShape};
    pub use crate::flash::Flash;
    pub use crate::ftl::{Ftl, FtlCounters, HybridFtl, PageFtl, RecycleKind};
}

/// The names each policy family registers, for listings and for tests and fuzzers that cover
/// every policy.
pub mod names {
    pub use crate::allocation::names as allocation;
    pub use crate::buffer::kinds as buffers;
    pub use crate::buffer::NO_BUFFER;
    pub use crate::engine::scheduler::names as schedulers;
    pub use crate::ftl::hybrid::recycling::names as recycling;
    pub use crate::ftl_kinds::names as ftl_kinds;
    pub use crate::gc::names as cleaning;
    pub use crate::placement::names as placements;
    pub use crate::wear::kinds as wear_levelers;
    pub use crate::workload::kinds::names as workload_kinds;
    pub use crate::workload::MEDIA_NAMES as media_files;
}

/// The version recorded in every result.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
