//! The composition root: a `Device` built from a `Resolved` configuration. The one place that
//! joins the families' typed specs to the mechanism — the FTL kind's mechanism, its cleaning
//! policy and placement, the wear leveler and endurance, the RAM region, the buffer — for a new
//! device and for one recovered from a media that holds data (docs/ALGORITHMS.md §2.5).
//!
//! Nothing here compares a policy name: each spec builds itself.

use crate::config::Resolved;
use crate::device::Device;
use crate::engine::Engine;
use crate::error::{ConfigError, RecoveryError};
use crate::flash::{CountingMedia, Flash, Media};
use crate::ftl::hybrid::{recover_from_spec, HybridFtl, HybridSpec};
use crate::ftl::policy::PlacementSpec;
use crate::ftl::{Ftl, FtlRecovery, FtlSpec, PageFtl, PageSpec};

impl Device {
    /// A device on the metadata-only counting media, policies from the config. `future` is the
    /// oracle placement's knowledge (`PlacementSpec::needs_future`: for the i-th host page
    /// write, the host page writes until the same page is written again).
    /// Nothing is ever recovered from this media, so it keeps no write order
    /// (`CountingMedia::without_write_order`).
    pub fn new(resolved: &Resolved, future: Option<Vec<u32>>) -> Result<Self, ConfigError> {
        let media = Box::new(CountingMedia::without_write_order(resolved.geometry));
        Self::with_media(resolved, media, future)
    }

    /// A device on a given media (the payload-storing image of a served drive plugs in here).
    pub fn with_media(
        resolved: &Resolved,
        media: Box<dyn Media>,
        future: Option<Vec<u32>>,
    ) -> Result<Self, ConfigError> {
        let flash = flash(resolved, media, 0);
        let ftl: Box<dyn Ftl> = match &resolved.ftl {
            FtlSpec::Page(spec) => Box::new(build_page(spec, flash, resolved, future)?),
            FtlSpec::Hybrid(spec) => Box::new(build_hybrid(spec, flash, resolved)),
        };
        let mut device = Self::with_ftl(zoned(ftl, resolved));
        device.set_buffer(build_buffer(resolved));
        device.set_background_cleaning(background(resolved) > 0);
        if !resolved.config.run.timing.is_on() {
            device.count_only();
        }
        Ok(device)
    }

    /// A device over a media that already holds data (an image opened after a restart): the
    /// FTL's tables are rebuilt from the media (`PageFtl::recover`, `hybrid::recover`).
    /// `now_ns` is the simulated time the device resumes at. What recovery repaired or
    /// completed is in `recovery()`; damage it cannot repair is an error, never a panic.
    pub fn recover(
        resolved: &Resolved,
        media: Box<dyn Media>,
        now_ns: u64,
    ) -> Result<Self, RecoveryError> {
        assert!(media.keeps_write_order(), "recovery from a media that keeps no write order");
        // Recovery's own flash work (sealing, repairs) is timed from `now_ns`.
        let flash = flash(resolved, media, now_ns);
        let (ftl, recovery): (Box<dyn Ftl>, FtlRecovery) = match &resolved.ftl {
            FtlSpec::Page(spec) => {
                let (ftl, recovery) = rebuild_page(spec, flash, resolved, now_ns)?;
                (Box::new(ftl), recovery)
            }
            FtlSpec::Hybrid(spec) => {
                let (ftl, recovery) = rebuild_hybrid(spec, flash, resolved)?;
                (Box::new(ftl), recovery)
            }
        };
        let mut device = Self::resumed(zoned(ftl, resolved), recovery, now_ns);
        device.set_buffer(build_buffer(resolved));
        device.set_background_cleaning(background(resolved) > 0);
        if !resolved.config.run.timing.is_on() {
            device.count_only();
        }
        Ok(device)
    }
}

// ---- one FTL, built in one step (tools and tests that drive an FTL below the device) ----

/// The page FTL of `r` over `media`, exactly as `Device::with_media` builds it (without the
/// device's buffer and mapping zones). An error for the hybrid kinds.
pub fn page_ftl(
    r: &Resolved,
    media: Box<dyn Media>,
    future: Option<Vec<u32>>,
) -> Result<PageFtl, ConfigError> {
    build_page(page_spec(r)?, flash(r, media, 0), r, future)
}

/// The page FTL of `r` rebuilt from `media` at simulated time `now_ns`, exactly as
/// `Device::recover` rebuilds it (the RAM region restored from NVRAM unless
/// `serve.ram_region_battery = "failed"`).
pub fn recover_page_ftl(
    r: &Resolved,
    media: Box<dyn Media>,
    now_ns: u64,
) -> Result<(PageFtl, FtlRecovery), RecoveryError> {
    assert!(media.keeps_write_order(), "recovery from a media that keeps no write order");
    rebuild_page(page_spec(r)?, flash(r, media, now_ns), r, now_ns)
}

/// The hybrid FTL of `r` over `media`, exactly as `Device::with_media` builds it. An error for
/// the page FTL.
pub fn hybrid_ftl(r: &Resolved, media: Box<dyn Media>) -> Result<HybridFtl, ConfigError> {
    Ok(build_hybrid(hybrid_spec(r)?, flash(r, media, 0), r))
}

/// The hybrid FTL of `r` rebuilt from `media` at simulated time `now_ns`, exactly as
/// `Device::recover` rebuilds it (wear leveler attached with the recovered erase counts).
pub fn recover_hybrid_ftl(
    r: &Resolved,
    media: Box<dyn Media>,
    now_ns: u64,
) -> Result<(HybridFtl, FtlRecovery), RecoveryError> {
    assert!(media.keeps_write_order(), "recovery from a media that keeps no write order");
    rebuild_hybrid(hybrid_spec(r)?, flash(r, media, now_ns), r)
}

// ---- the composition ----------------------------------------------------------------------

/// The flash of `r`'s device over `media`: its sim-engine on the configured hardware with the
/// configured scheduler, its clock at `now_ns`.
fn flash(r: &Resolved, media: Box<dyn Media>, now_ns: u64) -> Flash {
    let mut engine = Engine::new(r.hardware, &r.timing, r.scheduler.as_ref());
    engine.start_at(now_ns);
    Flash::with_engine(media, r.timing, engine)
}

fn build_page(
    spec: &PageSpec,
    flash: Flash,
    r: &Resolved,
    future: Option<Vec<u32>>,
) -> Result<PageFtl, ConfigError> {
    let placement = spec.placement.build(&r.geometry, r.ram_region_pages(), future)?;
    let victim = spec.cleaning.build(r.config.run.seed);
    let mut ftl = PageFtl::new(flash, victim, placement, spec.gc_free_blocks_min);
    configure_page_ftl(&mut ftl, r);
    Ok(ftl)
}

fn rebuild_page(
    spec: &PageSpec,
    flash: Flash,
    r: &Resolved,
    now_ns: u64,
) -> Result<(PageFtl, FtlRecovery), RecoveryError> {
    let placement = spec.placement.build(&r.geometry, r.ram_region_pages(), None)?;
    let victim = spec.cleaning.build(r.config.run.seed);
    let (mut ftl, mut recovery) =
        PageFtl::recover(flash, victim, placement, spec.gc_free_blocks_min, now_ns)?;
    configure_page_ftl(&mut ftl, r);
    let battery_failed = r.config.serve.ram_region_battery == "failed";
    ftl.restore_nvram(battery_failed, now_ns, &mut recovery)?;
    Ok((ftl, recovery))
}

/// The FTL behind its partly resident mapping table when `ftl.mapping_zone_bytes` asks for
/// one (`ftl::zones`), else as it is.
fn zoned(ftl: Box<dyn Ftl>, r: &Resolved) -> Box<dyn Ftl> {
    match r.zones {
        Some(shape) => Box::new(crate::ftl::zones::ZonedFtl::new(ftl, shape)),
        None => ftl,
    }
}

/// `ftl.gc_background_free_blocks` when background cleaning is on, else 0.
fn background(r: &Resolved) -> u32 {
    r.ftl.page().and_then(|p| p.gc_background_free_blocks).unwrap_or(0)
}

/// The page FTL's RAM region and wear-aware allocation (from its placement), allocation,
/// background cleaning, endurance and wear leveler (units: physical blocks): what a `PageFtl`
/// gets after `PageFtl::new` or `PageFtl::recover`.
fn configure_page_ftl(ftl: &mut PageFtl, r: &Resolved) {
    ftl.set_allocator(r.allocation.build(&r.hardware));
    ftl.set_background_cleaning(background(r));
    let ram_pages = r.ram_region_pages();
    if ram_pages > 0 {
        ftl.set_ram_region(ram_pages, r.ram_write_back_threshold(), r.timing.ram_page_ns);
    }
    ftl.set_wear_aware_allocation(r.placement().is_some_and(PlacementSpec::wear_aware_allocation));
    ftl.set_endurance_cycles(r.wear.endurance_cycles);
    let erases = erase_sum(ftl.erase_counts());
    let blocks = r.geometry.blocks;
    ftl.set_wear_leveler(r.wear.build(blocks, blocks, erases, r.config.run.seed));
}

/// The hybrid FTL of `spec`, wear leveler attached. A hybrid FTL keeps one more block spare on
/// a served drive (see `Resolved::served`).
fn build_hybrid(spec: &HybridSpec, flash: Flash, r: &Resolved) -> HybridFtl {
    let mut ftl = HybridFtl::from_spec(spec, flash, r.wear.endurance_cycles, u32::from(r.served));
    ftl.set_allocator(r.allocation.build(&r.hardware));
    attach_hybrid_wear(&mut ftl, r, 0);
    ftl
}

fn rebuild_hybrid(
    spec: &HybridSpec,
    flash: Flash,
    r: &Resolved,
) -> Result<(HybridFtl, FtlRecovery), RecoveryError> {
    let (mut ftl, recovery) =
        recover_from_spec(spec, &r.geometry, flash, r.wear.endurance_cycles, u32::from(r.served))?;
    ftl.set_allocator(r.allocation.build(&r.hardware));
    // The leveler's erase average starts from the recovered erase counts.
    let erases = erase_sum(ftl.erase_counts());
    attach_hybrid_wear(&mut ftl, r, erases);
    Ok((ftl, recovery))
}

/// The hybrid FTL's wear leveler (units: logical blocks), `erases` erases already done.
fn attach_hybrid_wear(ftl: &mut HybridFtl, r: &Resolved, erases: u64) {
    let leveler = r.wear.build(ftl.logical_blocks(), r.geometry.blocks, erases, r.config.run.seed);
    ftl.set_wear_leveler(leveler);
}

fn erase_sum(counts: &[u32]) -> u64 {
    counts.iter().map(|&c| u64::from(c)).sum()
}

fn build_buffer(r: &Resolved) -> Option<Box<dyn crate::buffer::Buffer>> {
    r.buffer.as_ref().map(|b| b.build(&r.geometry, r.timing.ram_page_ns))
}

fn page_spec(r: &Resolved) -> Result<&PageSpec, ConfigError> {
    r.ftl
        .page()
        .ok_or_else(|| ConfigError::new("ftl.kind", "the hybrid kinds are not the page FTL"))
}

fn hybrid_spec(r: &Resolved) -> Result<&HybridSpec, ConfigError> {
    match &r.ftl {
        FtlSpec::Hybrid(spec) => Ok(spec),
        FtlSpec::Page(_) => Err(ConfigError::new("ftl.kind", "the page FTL is not a hybrid FTL")),
    }
}
