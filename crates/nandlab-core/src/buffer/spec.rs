//! The buffer family's configuration: the raw `[buffer]` table and the typed `BufferSpec` it
//! resolves to (a registered policy and its capacity), which builds the buffer for a device.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{Buffer, BufferShape, ResolvedBuffer, REGISTRY};
use crate::error::ConfigError;
use crate::flash::Geometry;
use crate::spec::{self, check, ExtraKeys, Family, Tables};

/// `[buffer]`: a RAM buffer between the host and the FTL (`buffer/`, docs/ALGORITHMS.md §5).
/// The policies' own parameters (`buffer.cflru_window`) are declared in their files.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct BufferConfig {
    /// `none` (the paper's PLAIN), `lru`, `fab`, `bplru`, `cflru`.
    pub kind: String,
    /// Buffer capacity; a whole number of pages is used (rounded down). Default 8 MiB (the FAB
    /// paper: 8 MB is enough for 1 GB of flash).
    pub size_bytes: Option<u64>,
    /// The policies' parameters (`spec::Params`).
    #[serde(flatten)]
    pub extra: ExtraKeys,
}

impl Default for BufferConfig {
    fn default() -> Self {
        Self { kind: "none".into(), size_bytes: None, extra: ExtraKeys::new() }
    }
}

/// Default `buffer.size_bytes`.
pub const BUFFER_SIZE_BYTES_DEFAULT: u64 = 8 << 20;

/// The name of `buffer.kind` that means no buffer.
pub const NO_BUFFER: &str = "none";

/// A resolved buffer: its policy (with its parameters) and its capacity.
#[derive(Clone, Debug)]
pub struct BufferSpec {
    name: &'static str,
    policy: Arc<dyn ResolvedBuffer>,
    capacity_pages: u32,
}

impl BufferSpec {
    /// `[buffer]` resolved for a device of `g`: `None` for `buffer.kind = "none"`. Defaults
    /// are filled only for the keys the kind uses. A `none` buffer takes a `size_bytes` and
    /// drops it (the resolved config records no size), so that one size in a base config
    /// serves a sweep over `none` and the buffer kinds; the kinds' own keys it refuses.
    pub fn resolve(
        b: &mut BufferConfig,
        tables: &mut Tables,
        g: &Geometry,
    ) -> Result<Option<Self>, ConfigError> {
        let Some(entry) = spec::lookup_or_none(REGISTRY, &b.kind, "buffer.kind", NO_BUFFER)? else {
            b.size_bytes = None;
            return Ok(None);
        };
        let size = *b.size_bytes.get_or_insert(BUFFER_SIZE_BYTES_DEFAULT);
        check(
            size >= g.page_size_bytes,
            "buffer.size_bytes",
            format!("{size} bytes hold no page of {} bytes", g.page_size_bytes),
        )?;
        check(
            size / g.page_size_bytes < u64::from(u32::MAX / 2),
            "buffer.size_bytes",
            "more than 2^31 pages are not supported",
        )?;
        let policy = (entry.resolve)(&mut tables.params("buffer"))?;
        let capacity_pages = (size / g.page_size_bytes) as u32;
        Ok(Some(Self { name: entry.name, policy, capacity_pages }))
    }

    /// The family's declarations (`Tables::settle`).
    #[must_use]
    pub fn family() -> Family {
        Family::of("buffer.kind", REGISTRY)
    }

    #[must_use]
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Pages the buffer holds (its size rounded down to whole pages).
    #[must_use]
    pub fn capacity_pages(&self) -> u32 {
        self.capacity_pages
    }

    /// The buffer for a device of `g` with RAM page time `ram_page_ns`.
    #[must_use]
    pub fn build(&self, g: &Geometry, ram_page_ns: u64) -> Box<dyn Buffer> {
        let shape = BufferShape {
            capacity_pages: self.capacity_pages,
            pages_per_block: g.pages_per_block,
            logical_pages: g.logical_pages,
            page_size_bytes: g.page_size_bytes,
            ram_page_ns,
        };
        self.policy.build(shape)
    }
}
