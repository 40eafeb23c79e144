//! `ftl.kind = "sast"`: the set-associative hybrid FTL (groups of `ftl.group_data_blocks` data
//! blocks share up to `ftl.group_log_blocks` log blocks; docs/ALGORITHMS.md §4). Groups are
//! mapped as a unit.

use super::{FtlKindEntry, LOG_BLOCKS, RECYCLING};
use crate::ftl::hybrid::{resolve_hybrid, HybridKind, SAST_GROUP_DATA_BLOCKS};
use crate::spec::Param;

pub(super) const ENTRY: FtlKindEntry = FtlKindEntry {
    name: "sast",
    params: &[
        LOG_BLOCKS,
        RECYCLING,
        Param::new("ftl", "group_data_blocks"),
        Param::new("ftl", "group_log_blocks"),
    ],
    granule_blocks: |tables| {
        let n = tables.value("ftl", "group_data_blocks").and_then(crate::spec::Value::as_i64);
        n.map_or(u64::from(SAST_GROUP_DATA_BLOCKS), |n| u64::try_from(n).unwrap_or(0)).max(1)
    },
    resolve: |f, tables, g, _| resolve_hybrid(HybridKind::Sast, ENTRY.name, f, tables, g),
};
