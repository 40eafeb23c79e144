//! `optimal`: migrate while fewer than n0(α̂) migrations happened since the last merge, α̂
//! estimated per logical block from the accumulated history of p (block-recycling paper §5,
//! the macroscopic optimal sequence; docs/ALGORITHMS.md §4).

use std::sync::Arc;

use super::{CostModel, RecyclingEntry, RecyclingPolicy, ResolvedRecycling};

pub(super) const ENTRY: RecyclingEntry = RecyclingEntry {
    name: "optimal",
    migrates: true,
    params: &[],
    resolve: |_, _| Ok(Arc::new(OptimalSpec)),
};

#[derive(Clone, Copy, Debug)]
struct OptimalSpec;

impl ResolvedRecycling for OptimalSpec {
    fn build(&self, cost: CostModel, logical_blocks: u32) -> Box<dyn RecyclingPolicy> {
        Box::new(Optimal::new(cost, logical_blocks))
    }
}

/// `optimal`: per logical block, migrations since the last merge (n) and the least-squares
/// slope through the origin of the observed (k, P_k) pairs, accumulated over the block's
/// whole history (α̂ = Σ k·P_k / Σ k²).
struct Optimal {
    cost: CostModel,
    since_merge: Vec<u32>,
    sum_kp: Vec<f64>,
    sum_kk: Vec<f64>,
}

impl Optimal {
    fn new(cost: CostModel, logical_blocks: u32) -> Self {
        let n = logical_blocks as usize;
        Self { cost, since_merge: vec![0; n], sum_kp: vec![0.0; n], sum_kk: vec![0.0; n] }
    }
}

impl RecyclingPolicy for Optimal {
    fn name(&self) -> &'static str {
        ENTRY.name
    }
    fn migrate(&mut self, lbn: u32, valid_pages: u32) -> bool {
        let b = lbn as usize;
        if valid_pages >= self.cost.pages_per_block {
            return false;
        }
        let k = f64::from(self.since_merge[b] + 1);
        let p = f64::from(valid_pages);
        // The estimate includes the migration being considered: its p is known now.
        let alpha = (self.sum_kp[b] + k * p) / (self.sum_kk[b] + k * k);
        let n0 = self.cost.optimal_migrations(alpha);
        if u64::from(self.since_merge[b]) >= n0 {
            return false;
        }
        self.sum_kp[b] += k * p;
        self.sum_kk[b] += k * k;
        self.since_merge[b] += 1;
        true
    }
    fn merged(&mut self, lbn: u32) {
        self.since_merge[lbn as usize] = 0;
    }
    fn memory_bytes(&self) -> u64 {
        // A controller would keep n (1 byte) and α̂ (2 bytes fixed point) per log-block owner;
        // we report what this model stores.
        (self.since_merge.len() * (4 + 8 + 8)) as u64
    }
}

