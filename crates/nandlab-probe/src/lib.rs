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
pub mod matrix;
pub mod nbd;
pub mod pbr;
pub mod probe;
pub mod target;

pub use target::{PathTarget, SimTarget, Target, TargetSpec};

/// Opens a target. `destroy_data` must be set for a block device path or a file holding data
/// (its content is overwritten); a mounted device, and a device or file another process holds
/// (e.g. an image `nandlab serve` has open), are refused regardless.
pub fn open_target(spec: &TargetSpec, destroy_data: bool) -> Result<Box<dyn Target>, String> {
    match spec {
        TargetSpec::Sim { config, overrides } => {
            Ok(Box::new(SimTarget::new(config.as_deref(), overrides, true)?))
        }
        TargetSpec::NbdTcp { host, port, export } => {
            Ok(Box::new(nbd::NbdTarget::tcp(host, *port, export)?))
        }
        TargetSpec::NbdUnix { socket, export } => {
            Ok(Box::new(nbd::NbdTarget::unix(socket, export)?))
        }
        TargetSpec::Path(p) => Ok(Box::new(PathTarget::open(p, destroy_data)?)),
    }
}
