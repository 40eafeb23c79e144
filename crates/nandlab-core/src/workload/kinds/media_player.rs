//! `workload.kind = "media-player"`: a portable media player writing and playing media files on
//! the FAT volume model (`media`; the FAB paper's workload, Table I). `workload.media` picks the
//! player (`camera`, `mp3`, `movie`), which sets the defaults of `[workload.fs]`.

use std::sync::Arc;

use super::{WorkloadKindEntry, FS};
use crate::spec::Param;
use crate::workload::media::resolve_media_volume;

pub(super) const ENTRY: WorkloadKindEntry = WorkloadKindEntry {
    name: "media-player",
    params: &[FS, Param::new("workload", "media")],
    replayed: false,
    // The run warms up by populating its volume, and the FAB paper's traces write about one
    // volume's worth (Table I: 0.8 to 1.8 × the flash size).
    default_passes: (0.0, 1.0),
    resolve: |w, params, g| Ok(Arc::new(resolve_media_volume(w, params, g)?)),
};
