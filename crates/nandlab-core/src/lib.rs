//! nandlab-core: the pure, deterministic simulation core of nandlab.
//!
//! No Python, sockets, threads or wall clock: a run is a pure function of (config, seed,
//! version). Layers, host side first: `request` (the host's vocabulary) → `device`
//! (request-level API, timing, metrics window) → `ftl` (translation; page-mapped log-structured
//! store of the DAC paper) with `gc` victim policies and `placement` policies chosen once at
//! construction → `flash` (timing-charged operations on a `Media`).
#![forbid(unsafe_code)]

pub mod allocation;
pub mod assemble;
pub mod buffer;
pub mod config;
pub mod device;
pub mod engine;
pub mod error;
pub mod fastdiv;
pub mod flash;
pub mod ftl;
pub mod ftl_kinds;
pub mod gc;
pub mod memory;
pub mod metrics;
pub mod placement;
pub mod presets;
pub mod request;
pub mod rng;
pub mod sim;
pub mod spec;
pub mod wear;
pub mod workload;

pub use config::{apply_overrides, Config, Geometry, Resolved};
pub use device::{Completion, Device, Dispatched, Effects, Io, Submission, Wait};
pub use error::{ConfigError, MediaError, RecoveryError, RequestError};
pub use metrics::Metrics;
pub use request::{Request, RequestKind};
pub use workload::{Synthetic, WorkItem, Workload};

/// The version recorded in every result.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
