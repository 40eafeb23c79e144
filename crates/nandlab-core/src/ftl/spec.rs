//! The FTL family's configuration: the raw `[ftl]` table, the FTL kinds (`ftl.kind`: the page
//! FTL or a hybrid kind) and the typed `FtlSpec` a configuration resolves to. The page FTL's
//! policies (cleaning, placement) resolve in their own modules (`gc`, `placement`); the
//! dispatcher (`config`) hands their specs to `resolve_page`.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::hybrid::spec::HybridSpec;
use super::policy::{CleaningSpec, PlacementSpec};
use crate::engine::Hardware;
use crate::error::ConfigError;
use crate::flash::Geometry;
use crate::spec::{check, ExtraKeys};

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
// No `deny_unknown_fields`: keys no field declares land in `extra`, where policies added later
// find their parameters; resolution refuses every key no chosen policy claims (`spec`).
#[serde(default)]
pub struct FtlConfig {
    /// FTL kind: `"page"` (page-mapped log-structured store), or the hybrid log-block FTLs
    /// `"bast"`, `"sast"`, `"fast"`.
    pub kind: String,
    /// Victim selection: `greedy`, `cost-benefit`, `cat`, `fifo`, `random-d`.
    pub cleaning: String,
    /// Data placement: `none` (one log), `dac`, `oracle`, `deb`.
    pub placement: String,
    /// Number of logs / DAC regions (flash regions: a RAM region is extra). Default 1 for
    /// `none`, 4 for `dac`, 2 for `oracle`; `deb`: one per stable-time interval.
    pub regions: Option<u32>,
    /// The cleaner runs while fewer free blocks remain. Minimum: one more than the number of
    /// logs one victim's pages can be copied into (see `placement::cleaner_destinations_max`),
    /// so a cleaning step can never run out of blocks. Default: that minimum plus one per plane
    /// beyond the first (`device.*`: a parallel device keeps a free block per plane while
    /// cleaning steps' erases are pending).
    pub gc_free_blocks_min: Option<u32>,
    /// Which plane each write goes to on a parallel device (`allocation`): `dynamic` (the
    /// least loaded die), `round-robin` (channel-way-die-plane order) or `static` (by address).
    pub allocation: String,
    /// How the sim-engine orders each die's operations (`engine::scheduler`): `fifo` or
    /// `read-priority`.
    pub scheduler: String,
    /// When the page FTL cleans: `foreground` (the write that finds fewer than
    /// `gc_free_blocks_min` free blocks waits for the cleaning) or `background` (also, on an
    /// idle device, while fewer than `gc_background_free_blocks` are free, preempted by host
    /// requests between operations).
    pub gc_mode: String,
    /// `background` cleaning runs on an idle device while fewer free blocks remain. Default:
    /// `gc_free_blocks_min` + 1/32 of the spare blocks, at least two per plane.
    pub gc_background_free_blocks: Option<u32>,
    /// Mapping-table zones (`ftl::zones`, the geometry paper's zone size): the translation table is
    /// resident in RAM only for `mapping_cache_zones` zones of this many bytes of logical
    /// space; a request to another zone first loads its table from flash (and writes back the
    /// one it evicts if it changed). A multiple of the FTL's mapping unit: the (effective) page
    /// for `page`, the block for the hybrid kinds. Unset (default): the whole table is
    /// resident.
    pub mapping_zone_bytes: Option<u64>,
    /// Zones resident at once (least recently used replaced). Default 1 with
    /// `mapping_zone_bytes`; refused without it.
    pub mapping_cache_zones: Option<u32>,
    /// The parameters the kinds and policies declare in their own files (`spec::Params`):
    /// `ftl.time_threshold_s` (DAC), `ftl.random_d` (random-d), `ftl.log_blocks` (the hybrid
    /// kinds), ...
    #[serde(flatten)]
    pub extra: ExtraKeys,
}

impl Default for FtlConfig {
    fn default() -> Self {
        Self {
            kind: "page".into(),
            cleaning: "greedy".into(),
            placement: "none".into(),
            regions: None,
            gc_free_blocks_min: None,
            allocation: "dynamic".into(),
            scheduler: "fifo".into(),
            gc_mode: "foreground".into(),
            gc_background_free_blocks: None,
            mapping_zone_bytes: None,
            mapping_cache_zones: None,
            extra: ExtraKeys::new(),
        }
    }
}

/// A resolved FTL: which mechanism, with its policies.
#[derive(Clone, Debug)]
pub enum FtlSpec {
    Page(PageSpec),
    Hybrid(HybridSpec),
}

impl FtlSpec {
    /// The page FTL's spec, if this is one.
    #[must_use]
    pub fn page(&self) -> Option<&PageSpec> {
        match self {
            Self::Page(p) => Some(p),
            Self::Hybrid(_) => None,
        }
    }

    /// The flash regions (logs) the FTL writes into (1 for the hybrid kinds).
    #[must_use]
    pub fn regions(&self) -> u32 {
        self.page().map_or(1, |p| p.placement.regions())
    }
}

/// The page FTL: its cleaning policy, its placement and the cleaner's free-block reserve.
#[derive(Clone, Debug)]
pub struct PageSpec {
    pub cleaning: Arc<dyn CleaningSpec>,
    pub placement: Arc<dyn PlacementSpec>,
    /// `ftl.gc_free_blocks_min`.
    pub gc_free_blocks_min: u32,
    /// `ftl.gc_background_free_blocks` with `ftl.gc_mode = "background"`; `None` in the
    /// foreground mode.
    pub gc_background_free_blocks: Option<u32>,
}

/// The names of `ftl.gc_mode`.
pub const GC_MODES: &[&str] = &["foreground", "background"];

/// The page FTL with its resolved policies: fills `ftl.gc_free_blocks_min` (minimum: one more
/// than the logs one victim's pages can be copied into, so a cleaning step can never run out of
/// blocks; default: that plus one per extra plane) and checks the device leaves the cleaner
/// room.
pub fn resolve_page(
    f: &mut FtlConfig,
    cleaning: Arc<dyn CleaningSpec>,
    placement: Arc<dyn PlacementSpec>,
    g: &Geometry,
    hw: &Hardware,
) -> Result<PageSpec, ConfigError> {
    let destinations = placement.cleaner_destinations_max();
    let regions = placement.regions();
    // On a parallel device a cleaning step's freed block is not usable until its erase, at the
    // end of the step's copies on the victim's die: a free block per plane keeps every plane's
    // writes going meanwhile (with one plane: the single-channel reserve, unchanged).
    let planes = hw.planes();
    let gc_free_blocks_min = *f.gc_free_blocks_min.get_or_insert(destinations + planes);
    check(
        gc_free_blocks_min > destinations,
        "ftl.gc_free_blocks_min",
        format!(
            "must be at least {}: one cleaning step may open a block in each of {destinations} \
             log(s) before it frees its victim",
            destinations + 1
        ),
    )?;
    // Blocks that can never hold valid data at steady state: the free reserve plus one open
    // block per region on every plane. With fewer spare pages than that, the cleaner could
    // find every closed block full of valid pages and make no progress.
    let planes = u64::from(planes);
    let spare_blocks_min = u64::from(gc_free_blocks_min) + u64::from(regions) * planes + 1;
    let spare_pages = g.physical_pages().saturating_sub(g.logical_pages);
    let spare_blocks = spare_pages / u64::from(g.pages_per_block);
    check(
        spare_blocks >= spare_blocks_min,
        "device.utilization",
        format!(
            "leaves {spare_pages} spare pages; the cleaner needs at least \
             {spare_blocks_min} spare blocks (gc_free_blocks_min + regions x planes + 1 = \
             {gc_free_blocks_min} + {regions} x {planes} + 1); lower the utilization or add \
             blocks"
        ),
    )?;
    let gc_background_free_blocks = match f.gc_mode.as_str() {
        "background" => {
            let default = u64::from(gc_free_blocks_min)
                + (spare_blocks.saturating_sub(spare_blocks_min) / 32).max(2 * planes);
            let n = *f.gc_background_free_blocks.get_or_insert(
                default.min(spare_blocks - spare_blocks_min + u64::from(gc_free_blocks_min)) as u32,
            );
            check(
                n > gc_free_blocks_min
                    && u64::from(n)
                        <= spare_blocks - spare_blocks_min + u64::from(gc_free_blocks_min),
                "ftl.gc_background_free_blocks",
                format!(
                    "must be above ftl.gc_free_blocks_min = {gc_free_blocks_min} (the foreground \
                     floor) and at most {} (the spare blocks beyond the open blocks)",
                    spare_blocks - spare_blocks_min + u64::from(gc_free_blocks_min)
                ),
            )?;
            Some(n)
        }
        _ => {
            check(
                f.gc_background_free_blocks.is_none(),
                "ftl.gc_background_free_blocks",
                "only ftl.gc_mode = \"background\" uses it",
            )?;
            None
        }
    };
    Ok(PageSpec { cleaning, placement, gc_free_blocks_min, gc_background_free_blocks })
}

/// `ftl.mapping_zone_bytes` and `ftl.mapping_cache_zones`: the zone shape, or `None` when the
/// whole table is resident (the default). Fills the cache-size default.
pub fn resolve_zones(
    f: &mut FtlConfig,
    ftl: &FtlSpec,
    g: &Geometry,
) -> Result<Option<crate::ftl::zones::ZoneShape>, ConfigError> {
    let Some(zone_bytes) = f.mapping_zone_bytes else {
        check(
            f.mapping_cache_zones.is_none(),
            "ftl.mapping_cache_zones",
            "only with ftl.mapping_zone_bytes (without zones the whole table is resident)",
        )?;
        return Ok(None);
    };
    let (unit_pages, unit) = match ftl {
        FtlSpec::Page(_) => (1, "the (effective) page"),
        FtlSpec::Hybrid(_) => {
            (u64::from(g.pages_per_block), "the block (the hybrid kinds map blocks)")
        }
    };
    let unit_bytes = unit_pages * g.page_size_bytes;
    check(
        zone_bytes > 0 && zone_bytes.is_multiple_of(unit_bytes),
        "ftl.mapping_zone_bytes",
        format!("must be a positive multiple of {unit}, {unit_bytes} bytes; got {zone_bytes}"),
    )?;
    let cache_zones = *f.mapping_cache_zones.get_or_insert(1);
    check(cache_zones >= 1, "ftl.mapping_cache_zones", "must be at least 1")?;
    let shape = crate::ftl::zones::ZoneShape::new(g, zone_bytes, unit_pages, cache_zones);
    check(
        shape.zones <= 1 << 24,
        "ftl.mapping_zone_bytes",
        format!("{} zones over the logical space are too many (at most 2^24)", shape.zones),
    )?;
    Ok(Some(shape))
}
