//! The hybrid kinds' configuration (docs/ALGORITHMS.md §4): `ftl.kind` = `bast`, `sast` or `fast`,
//! the log pool (`ftl.log_blocks`), SAST's groups and the recycling policy, resolved into a
//! `HybridSpec`. A hybrid FTL has no cleaner policy, placement or regions: those page-FTL keys must
//! keep their defaults.

use super::recycling::RecyclingSpec;
use super::Association;
use crate::error::ConfigError;
use crate::flash::Geometry;
use crate::ftl::FtlConfig;
use crate::spec::check;

/// Default `ftl.log_blocks`.
pub const LOG_BLOCKS_DEFAULT: u32 = 8;
const SAST_GROUP_DATA_BLOCKS: u32 = 4;
const SAST_GROUP_LOG_BLOCKS: u32 = 2;

/// Which hybrid FTL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HybridKind {
    Bast,
    Sast,
    Fast,
}

impl HybridKind {
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "bast" => Some(Self::Bast),
            "sast" => Some(Self::Sast),
            "fast" => Some(Self::Fast),
            _ => None,
        }
    }

    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Bast => "bast",
            Self::Sast => "sast",
            Self::Fast => "fast",
        }
    }

    /// Logical blocks mapped as a unit: SAST's group, else 1.
    #[must_use]
    pub fn mapping_granule_blocks(self, f: &FtlConfig) -> u64 {
        match self {
            Self::Sast => u64::from(f.group_data_blocks.unwrap_or(SAST_GROUP_DATA_BLOCKS).max(1)),
            Self::Bast | Self::Fast => 1,
        }
    }
}

/// A resolved hybrid FTL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HybridSpec {
    pub kind: HybridKind,
    pub association: Association,
    /// `ftl.log_blocks`: the log pool (FAST: one of them is the sequential log).
    pub log_blocks: u32,
    pub recycling: RecyclingSpec,
}

impl HybridSpec {
    /// Defaults and checks of `kind` on a device of `g`.
    pub fn resolve(kind: HybridKind, f: &mut FtlConfig, g: &Geometry) -> Result<Self, ConfigError> {
        let name = kind.name();
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
        for (set, key) in [
            (f.time_threshold_s.is_some(), "ftl.time_threshold_s"),
            (f.gc_free_blocks_min.is_some(), "ftl.gc_free_blocks_min"),
            (f.oracle_boundaries_passes.is_some(), "ftl.oracle_boundaries_passes"),
        ] {
            if set {
                return Err(not_page(key, "this setting"));
            }
        }
        let ppb = u64::from(g.pages_per_block);
        let logical_blocks = g.logical_pages.div_ceil(ppb);
        let log_blocks = *f.log_blocks.get_or_insert(LOG_BLOCKS_DEFAULT);
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
                let n = *f.group_data_blocks.get_or_insert(SAST_GROUP_DATA_BLOCKS);
                let k = *f.group_log_blocks.get_or_insert(SAST_GROUP_LOG_BLOCKS.min(log_blocks));
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
            HybridKind::Bast | HybridKind::Fast => {
                for (set, key) in [
                    (f.group_data_blocks.is_some(), "ftl.group_data_blocks"),
                    (f.group_log_blocks.is_some(), "ftl.group_log_blocks"),
                ] {
                    check(!set, key, "only SAST has groups (BAST is N = 1, K = 1)")?;
                }
                if fast {
                    Association::Full
                } else {
                    Association::Set { data_blocks: 1, log_blocks: 1 }
                }
            }
        };
        let recycling = RecyclingSpec::resolve(f, kind == HybridKind::Bast, g.pages_per_block)?;
        Ok(Self { kind, association, log_blocks, recycling })
    }
}
