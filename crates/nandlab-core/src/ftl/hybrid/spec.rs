//! The hybrid kinds' configuration (docs/ALGORITHMS.md §4): `ftl.kind` = `bast`, `sast` or `fast`,
//! the log pool (`ftl.log_blocks`), SAST's groups and the recycling policy, resolved into a
//! `HybridSpec`. A hybrid FTL has no cleaner policy, placement or regions: those page-FTL keys must
//! keep their defaults.

use super::recycling::RecyclingSpec;
use super::Association;
use crate::error::ConfigError;
use crate::flash::Geometry;
use crate::ftl::{FtlConfig, FtlSpec};
use crate::spec::{check, Params, Tables};

/// Default `ftl.log_blocks`.
pub const LOG_BLOCKS_DEFAULT: u32 = 8;
/// Default `ftl.group_data_blocks` (SAST's N).
pub(crate) const SAST_GROUP_DATA_BLOCKS: u32 = 4;
const SAST_GROUP_LOG_BLOCKS: u32 = 2;

/// Which hybrid mechanism (its kind's entry in `ftl_kinds` picks it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HybridKind {
    Bast,
    Sast,
    Fast,
}

/// A resolved hybrid FTL.
#[derive(Clone, Debug)]
pub struct HybridSpec {
    pub kind: HybridKind,
    pub association: Association,
    /// `ftl.log_blocks`: the log pool (FAST: one of them is the sequential log).
    pub log_blocks: u32,
    pub recycling: RecyclingSpec,
}

/// A hybrid kind resolved into an `FtlSpec` (the `resolve` of the hybrid kinds' entries).
pub fn resolve_hybrid(
    kind: HybridKind,
    name: &'static str,
    f: &mut FtlConfig,
    tables: &mut Tables,
    g: &Geometry,
) -> Result<FtlSpec, ConfigError> {
    // Background cleaning is the page FTL's.
    check(
        f.gc_mode == "foreground",
        "ftl.gc_mode",
        "the hybrid FTLs (bast, sast, fast) merge when a write needs a log block: background \
         cleaning is modelled for the page FTL's cleaner only",
    )?;
    check(
        f.gc_background_free_blocks.is_none(),
        "ftl.gc_background_free_blocks",
        "only the page FTL with ftl.gc_mode = \"background\" uses it",
    )?;
    let spec = HybridSpec::resolve(kind, name, f, &mut tables.params("ftl"), g)?;
    Ok(FtlSpec::Hybrid(spec))
}

impl HybridSpec {
    /// Logical blocks mapped as a unit: SAST's group, else 1.
    #[must_use]
    pub fn mapping_granule_blocks(&self) -> u64 {
        match self.association {
            Association::Set { data_blocks, .. } => u64::from(data_blocks),
            Association::Full => 1,
        }
    }

    /// Defaults and checks of `kind` (named `name`) on a device of `g`.
    pub fn resolve(
        kind: HybridKind,
        name: &'static str,
        f: &FtlConfig,
        params: &mut Params<'_>,
        g: &Geometry,
    ) -> Result<Self, ConfigError> {
        let not_page = |key: &str, what: &str| {
            ConfigError::new(
                key,
                format!("{what} belongs to the page FTL; ftl.kind = {name:?} has none"),
            )
        };
        // The page FTL's policies must keep their defaults (compared with the default config,
        // not by name: this module knows no policy).
        let defaults = FtlConfig::default();
        if f.cleaning != defaults.cleaning {
            return Err(not_page("ftl.cleaning", "victim selection"));
        }
        if f.placement != defaults.placement || f.regions.is_some_and(|r| r != 1) {
            let key =
                if f.placement != defaults.placement { "ftl.placement" } else { "ftl.regions" };
            return Err(not_page(key, "data placement"));
        }
        if f.gc_free_blocks_min.is_some() {
            return Err(not_page("ftl.gc_free_blocks_min", "this setting"));
        }
        let ppb = u64::from(g.pages_per_block);
        let logical_blocks = g.logical_pages.div_ceil(ppb);
        let log_blocks = params.u32("log_blocks", LOG_BLOCKS_DEFAULT)?;
        let fast = kind == HybridKind::Fast;
        check(
            log_blocks >= if fast { 2 } else { 1 },
            "ftl.log_blocks",
            if fast {
                "FAST needs at least 2 log blocks: the sequential log and one random log"
            } else {
                "must be at least 1"
            },
        )?;
        let spare = u64::from(g.blocks).saturating_sub(logical_blocks);
        check(
            spare > u64::from(log_blocks),
            "ftl.log_blocks",
            format!(
                "{log_blocks} log blocks need {} spare blocks (one more for a merge's destination), \
                 but the device has {} blocks for {logical_blocks} logical blocks: {spare} spare; \
                 lower ftl.log_blocks or device.utilization, or add blocks",
                u64::from(log_blocks) + 1,
                g.blocks
            ),
        )?;
        let association = match kind {
            HybridKind::Sast => {
                let n = params.u32("group_data_blocks", SAST_GROUP_DATA_BLOCKS)?;
                let k = params.u32("group_log_blocks", SAST_GROUP_LOG_BLOCKS.min(log_blocks))?;
                check(n >= 1, "ftl.group_data_blocks", "must be at least 1")?;
                check(
                    logical_blocks % u64::from(n) == 0,
                    "ftl.group_data_blocks",
                    format!(
                        "groups of {n} logical blocks do not divide the device's {logical_blocks} \
                         logical blocks; pick a divisor or set device.logical_bytes to a multiple \
                         of {} bytes",
                        u64::from(n) * ppb * g.page_size_bytes
                    ),
                )?;
                check(
                    (1..=log_blocks).contains(&k),
                    "ftl.group_log_blocks",
                    format!("must be between 1 and ftl.log_blocks = {log_blocks}"),
                )?;
                Association::Set { data_blocks: n, log_blocks: k }
            }
            HybridKind::Fast => Association::Full,
            HybridKind::Bast => Association::Set { data_blocks: 1, log_blocks: 1 },
        };
        let recycling =
            RecyclingSpec::resolve(params, kind == HybridKind::Bast, g.pages_per_block)?;
        Ok(Self { kind, association, log_blocks, recycling })
    }
}
