//! Victim selection policies for the cleaner (docs/ALGORITHMS.md §2.2). Mechanism (copying valid
//! pages, erasing, the indexes in `ftl::block_table`) lives in the FTL; a policy only picks a
//! block.
//!
//! Adding a policy: one file here (its `ENTRY`: name, parameters, how it resolves and builds)
//! and one line in `REGISTRY`.
//!
//! Edge cases shared by every policy but FIFO (which is pure LRW by definition, so that it
//! matches the closed-form theory):
//! - u = 0 (no valid page): free to clean — chosen before anything else.
//! - u = 1 (all pages valid): never worth cleaning (Cost-benefit's benefit is 0, CAT's cost is
//!   infinite) — chosen only if no other closed block exists.
//! - age a = now − last modification + 1 ns, so a block modified "now" has a finite, tiny age
//!   rather than a zero that would zero Cost-benefit or divide CAT by zero.
//! - CAT's erase count t is used as t + 1: a never-erased block would otherwise cost 0 and win
//!   regardless of its utilization (the papers leave this open).

use std::sync::Arc;

use crate::error::ConfigError;
use crate::flash::BlockId;
use crate::ftl::block_table::BlockTable;
pub use crate::ftl::policy::{CleaningSpec, Selection, VictimPolicy};
use crate::ftl::FtlConfig;
use crate::spec::{self, Named, Params};

/// How a cleaning policy resolves: from the typed `[ftl]` table and its extra keys.
pub type ResolveCleaning =
    fn(&FtlConfig, &mut Params<'_>) -> Result<Arc<dyn CleaningSpec>, ConfigError>;

/// One registered cleaning policy: its `ftl.cleaning` name, the keys of `[ftl]` it takes
/// beyond the table's typed fields, and how it resolves its parameters.
#[derive(Clone, Copy, Debug)]
pub struct CleaningEntry {
    pub name: &'static str,
    /// Parameters read through `Params` (written back filled, so results record them).
    pub extra_keys: &'static [&'static str],
    pub resolve: ResolveCleaning,
}

impl Named for CleaningEntry {
    fn name(&self) -> &'static str {
        self.name
    }
    fn extra_keys(&self) -> &'static [&'static str] {
        self.extra_keys
    }
}

// The registry: one line per policy.
crate::spec::registry! {
    CleaningEntry;
    greedy,
    cost_benefit,
    cat,
    fifo,
    random_d,
}

/// `ftl.cleaning` and its parameters, resolved. The keys every policy table carries
/// (`ftl.random_d`, `ftl.victim_scan_limit`) are checked whichever policy is chosen.
pub fn resolve(f: &mut FtlConfig) -> Result<Arc<dyn CleaningSpec>, ConfigError> {
    let entry = spec::lookup(REGISTRY, &f.cleaning, "ftl.cleaning")?;
    spec::check(f.random_d >= 1, "ftl.random_d", "must be at least 1")?;
    spec::check(f.victim_scan_limit >= 1, "ftl.victim_scan_limit", "must be at least 1")?;
    let mut extra = std::mem::take(&mut f.extra);
    let result = (entry.resolve)(f, &mut Params { table: "ftl", keys: &mut extra });
    f.extra = extra;
    result
}

/// The entry selected by `f` (for the extra keys it claims).
#[must_use]
pub fn entry(f: &FtlConfig) -> Option<&'static CleaningEntry> {
    spec::find(REGISTRY, &f.cleaning)
}

/// The policy that takes extra key `key`, if any, as "ftl.cleaning = \"name\"".
#[must_use]
pub fn owner_of(key: &str) -> Option<String> {
    spec::owner_of(REGISTRY, key, "ftl.cleaning")
}

/// The registered names.
#[must_use]
pub fn names() -> Vec<&'static str> {
    spec::names(REGISTRY)
}

/// Age in ns as the policies use it (see the module doc).
#[inline]
fn age_ns(table: &BlockTable, block: BlockId, now_ns: u64) -> f64 {
    (now_ns - table.last_modified_ns[block as usize] + 1) as f64
}

/// The least-valid non-full bucket's head, else a full block: Greedy's choice, also the
/// fallback of the other policies.
fn least_valid(table: &BlockTable) -> Option<BlockId> {
    (0..=table.pages_per_block).map(|v| table.bucket_head(v)).find(|&b| b != crate::flash::NONE)
}

#[cfg(test)]
mod tests;
