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
use crate::spec::{self, Family, Named, Param, Params, Tables};

/// How a cleaning policy resolves: from the typed `[ftl]` table and its own parameters.
pub type ResolveCleaning =
    fn(&FtlConfig, &mut Params<'_>) -> Result<Arc<dyn CleaningSpec>, ConfigError>;

/// One registered cleaning policy: its `ftl.cleaning` name, the parameters it declares (read
/// through `Params`, written back filled so results record them), and how it resolves them.
#[derive(Clone, Copy, Debug)]
pub struct CleaningEntry {
    pub name: &'static str,
    pub params: &'static [Param],
    pub resolve: ResolveCleaning,
}

impl Named for CleaningEntry {
    fn name(&self) -> &'static str {
        self.name
    }
    fn params(&self) -> &'static [Param] {
        self.params
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

/// `ftl.cleaning` and its parameters, resolved.
pub fn resolve(f: &FtlConfig, tables: &mut Tables) -> Result<Arc<dyn CleaningSpec>, ConfigError> {
    let entry = spec::lookup(REGISTRY, &f.cleaning, "ftl.cleaning")?;
    (entry.resolve)(f, &mut tables.params("ftl"))
}

/// The family's declarations (`Tables::settle`).
#[must_use]
pub fn family() -> Family {
    Family::of("ftl.cleaning", REGISTRY)
}

/// The registered names.
#[must_use]
pub fn names() -> Vec<&'static str> {
    spec::names(REGISTRY)
}

/// Age in ns as the policies use it (see the module doc).
#[inline]
fn age_ns(table: &BlockTable, block: BlockId, now_ns: u64) -> f64 {
    (now_ns - table.last_modified_ns[block.index()] + 1) as f64
}

/// The least-valid non-full bucket's head, else a full block: Greedy's choice, also the
/// fallback of the other policies.
fn least_valid(table: &BlockTable) -> Option<BlockId> {
    (0..=table.pages_per_block).map(|v| table.bucket_head(v)).find(|&b| b != BlockId::NONE)
}

#[cfg(test)]
mod tests;
