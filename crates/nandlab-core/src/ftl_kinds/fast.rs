//! `ftl.kind = "fast"`: the fully-associative hybrid FTL (a sequential log and a pool of random
//! logs shared by every data block; docs/ALGORITHMS.md §4).

use super::{FtlKindEntry, LOG_BLOCKS, RECYCLING};
use crate::ftl::hybrid::{resolve_hybrid, HybridKind};

pub(super) const ENTRY: FtlKindEntry = FtlKindEntry {
    name: "fast",
    params: &[LOG_BLOCKS, RECYCLING],
    granule_blocks: |_| 1,
    resolve: |f, tables, g, _| resolve_hybrid(HybridKind::Fast, ENTRY.name, f, tables, g),
};
