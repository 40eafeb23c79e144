//! Workload-oriented benchmarks and black-box probes of the benchmarks and geometry papers
//! (docs/PAPERS.md; docs/ALGORITHMS.md §8–9), run against a **target**: the simulator (`sim:`,
//! simulated time), a drive served over NBD (`nbd://HOST:PORT`, `nbd+unix:///?socket=PATH`;
//! wall-clock time) or a block device path (`O_DIRECT`, wall clock).
//!
//! - `pbr`: the Per-Byte-Response replay — a trace's writes issued one at a time (QD 1,
//!   synchronously, device level, as the paper's `WriteFile` replay), PBR = response time ÷
//!   request bytes for each;
//! - `diagnose`: the paper's three symptoms named from a PBR result, with the evidence;
//! - `probe`: black-box geometry detection — effective page, block and mapping-zone sizes, and
//!   the number of parallel units.
//!
//! The simulator's core stays free of sockets and clocks: this crate is the thin layer that
//! times requests (a target returns each request's response time).

pub mod diagnose;
pub mod nbd;
pub mod pbr;
pub mod probe;
pub mod target;

pub use target::{open_target, Target, TargetSpec};
