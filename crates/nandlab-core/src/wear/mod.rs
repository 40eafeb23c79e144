//! Wear leveling (SPEC §6; paper 003's LCTES'11 attachment, §3-§4). Issue 6, in progress.
//!
//! # What this models
//!
//! *Lazy wear leveling* (Algorithm 1) sits beside an FTL and is consulted whenever the FTL is
//! about to erase a garbage-collection victim `v`. When `v` has been erased more than `Δ` times
//! above the average, it re-maps a logical block with a low update recency onto `v` (so the
//! worn block receives cold data and rests) and hands the logical block's old physical block
//! back to the FTL in place of `v`. "Low update recency" is approximated by visiting logical
//! blocks in a fixed full-period permutation (`LbnPermutation`) and taking the first one the
//! FTL holds no log (sector) mapping for. Only the average erase count is kept, not a table
//! of ages. `Δ` is retuned every session from the measured overhead (`adaptive`).
//!
//! This module holds the mechanism apart from any FTL: `lazy::LazyWearLeveling` talks to the
//! FTL through the `WearHost` trait (the subroutines Algorithm 1 names with underscores).
//!
//! # State of issue 6
//!
//! Built: the Δ-tuning rule, the permutation, Algorithm 1 against `WearHost` (erase-count
//! statistics are `Metrics::wear_*`), and `HybridFtl` as a `WearHost`
//! (`HybridFtl::set_lazy_wear_leveling`, consulted in `release`). Not yet: `[wear]` in the
//! config, `PageFtl` as a host, static wear leveling, endurance and bad blocks,
//! `workload.repeat`, `experiments/wear/` (see docs/ROADMAP.md).

pub mod adaptive;
pub mod lazy;
pub mod permutation;

pub use adaptive::{next_delta, DeltaTuner};
pub use lazy::{LazyWearLeveling, WearHost};
pub use permutation::LbnPermutation;
