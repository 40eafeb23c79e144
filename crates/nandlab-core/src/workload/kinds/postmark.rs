//! `workload.kind = "postmark"`: Postmark-like small-file transactions on the FAT volume model
//! (`fat`; the block-recycling paper's workload), `[workload.fs]` its volume and transaction mix.

use std::sync::Arc;

use super::{WorkloadKindEntry, FS};
use crate::workload::fat::{resolve_volume, FsPlan};

pub(super) const ENTRY: WorkloadKindEntry = WorkloadKindEntry {
    name: "postmark",
    params: &[FS],
    replayed: false,
    default_passes: (1.0, 2.0),
    resolve: |w, params, g| {
        let (fs, layout) = resolve_volume(w, params, g, false)?;
        Ok(Arc::new(FsPlan { embedded: false, fs, layout }))
    },
};
