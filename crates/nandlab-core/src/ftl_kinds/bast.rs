//! `ftl.kind = "bast"`: the block-associative hybrid FTL (one log block per data block;
//! docs/ALGORITHMS.md §4), the only kind that takes a migrating recycling policy.

use super::{FtlKindEntry, LOG_BLOCKS, RECYCLING};
use crate::ftl::hybrid::{resolve_hybrid, HybridKind};

pub(super) const ENTRY: FtlKindEntry = FtlKindEntry {
    name: "bast",
    params: &[LOG_BLOCKS, RECYCLING],
    granule_blocks: |_| 1,
    resolve: |f, tables, g, _| resolve_hybrid(HybridKind::Bast, ENTRY.name, f, tables, g),
};
