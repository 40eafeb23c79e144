//! `workload.kind = "embedded"`: an embedded device appending records to a few log files on the
//! FAT volume model (`fat`; the block-recycling paper's workload), `[workload.fs]` its volume,
//! files and record size.

use std::sync::Arc;

use super::{WorkloadKindEntry, FS};
use crate::workload::fat::{resolve_volume, FsPlan};

pub(super) const ENTRY: WorkloadKindEntry = WorkloadKindEntry {
    name: "embedded",
    params: &[FS],
    replayed: false,
    default_passes: (1.0, 2.0),
    resolve: |w, params, g| {
        let (fs, layout) = resolve_volume(w, params, g, true)?;
        Ok(Arc::new(FsPlan { embedded: true, fs, layout }))
    },
};
