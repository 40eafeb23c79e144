//! Victim selection policies for the cleaner (SPEC §2.2). Mechanism (copying valid pages,
//! erasing, the indexes in `ftl::block_table`) lives in the FTL; a policy only picks a block.
//!
//! Adding a policy: one file here and one line in `by_name`.
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

mod cat;
mod cost_benefit;
mod fifo;
mod greedy;
mod random_d;

use crate::config::Resolved;
use crate::error::ConfigError;
use crate::flash::BlockId;
use crate::ftl::block_table::BlockTable;

/// Outcome of one victim search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Selection {
    pub block: BlockId,
    /// The search hit `ftl.victim_scan_limit` and returned the best block seen so far.
    pub capped: bool,
}

pub trait VictimPolicy: Send {
    fn name(&self) -> &'static str;
    /// Picks a closed block to clean, or `None` when there is no closed block.
    fn select(&mut self, table: &BlockTable, now_ns: u64) -> Option<Selection>;
}

/// The registry: one line per policy.
pub fn by_name(resolved: &Resolved) -> Result<Box<dyn VictimPolicy>, ConfigError> {
    let f = &resolved.config.ftl;
    let limit = f.victim_scan_limit;
    Ok(match f.cleaning.as_str() {
        "greedy" => Box::new(greedy::Greedy),
        "cost-benefit" => Box::new(cost_benefit::CostBenefit),
        "cat" => Box::new(cat::Cat { scan_limit: limit }),
        "fifo" => Box::new(fifo::Fifo),
        "random-d" => Box::new(random_d::RandomD::new(f.random_d, resolved.config.run.seed)),
        other => return Err(ConfigError::new("ftl.cleaning", format!("unknown policy {other:?}"))),
    })
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
