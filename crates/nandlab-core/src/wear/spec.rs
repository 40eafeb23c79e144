//! The wear-leveling family's configuration: the raw `[wear]` table and the typed `WearSpec`
//! it resolves to (a registered leveler, or none, plus the endurance every kind has), which
//! builds the leveler for an FTL.

use serde::{Deserialize, Serialize};

use super::{WearLeveler, WearParams};
use crate::error::ConfigError;
use crate::spec::{self, check, Named};

/// `[wear]`: wear leveling and endurance (`wear/`, docs/ALGORITHMS.md §6; lazy wear-leveling
/// paper).
/// Keys a kind does not use stay unset in the resolved config.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct WearConfig {
    /// `none`, `static` (Chang's SW Leveler), `lazy` (Algorithm 1).
    pub kind: String,
    /// Lazy: Δ, how far above the average erase count a victim may be before its erase
    /// re-maps a cold logical block onto it. Default 16 (the paper's).
    pub delta: Option<f64>,
    /// Lazy: retune Δ every session (Δ_next = sqrt(Δ·g/|λ|)). Default false.
    pub adaptive: Option<bool>,
    /// Adaptive Δ: λ, the overhead slope limit (% per unit of Δ). Default −0.1.
    pub lambda: Option<f64>,
    /// Adaptive Δ: session length in wear-leveling erases. Default 1000 (the paper's).
    pub session_wear_erases: Option<u64>,
    /// Static: TH, erases since the bitmap reset per erased set that force a set. Default 16.
    pub threshold: Option<f64>,
    /// Static: blocks per erase-bitmap set. Default 1 (the paper: "recently erased blocks").
    pub set_blocks: Option<u32>,
    /// Rated program/erase cycles per block; a block reaching it is retired. Default: the
    /// preset's `endurance_cycles`; 0 = unlimited.
    pub endurance_cycles: Option<u32>,
}

impl Default for WearConfig {
    fn default() -> Self {
        Self {
            kind: "none".into(),
            delta: None,
            adaptive: None,
            lambda: None,
            session_wear_erases: None,
            threshold: None,
            set_blocks: None,
            endurance_cycles: None,
        }
    }
}

pub(super) const WEAR_DELTA_DEFAULT: f64 = 16.0;
pub(super) const WEAR_LAMBDA_DEFAULT: f64 = -0.1;
pub(super) const WEAR_THRESHOLD_DEFAULT: f64 = 16.0;

/// The name of `wear.kind` that means no leveler.
pub const NO_LEVELER: &str = "none";

/// One registered leveler: its `wear.kind` name, how it checks and fills its keys of
/// `[wear]`, how it refuses them when another kind is chosen, and its constructor.
#[derive(Clone, Copy, Debug)]
pub struct WearEntry {
    pub name: &'static str,
    pub resolve: fn(&mut WearConfig) -> Result<(), ConfigError>,
    pub refuse_keys: fn(&WearConfig) -> Result<(), ConfigError>,
    pub build: fn(&WearParams) -> Box<dyn WearLeveler>,
}

impl Named for WearEntry {
    fn name(&self) -> &'static str {
        self.name
    }
}

/// `wear.kind` values.
#[must_use]
pub fn kinds() -> Vec<&'static str> {
    let mut names = vec![NO_LEVELER];
    names.extend(spec::names(super::REGISTRY));
    names
}

/// A resolved `[wear]`: the leveler (if any) with its filled keys, and the endurance.
#[derive(Clone, Debug)]
pub struct WearSpec {
    entry: Option<&'static WearEntry>,
    config: WearConfig,
    /// `wear.endurance_cycles`: rated program/erase cycles per block (0 = unlimited).
    pub endurance_cycles: u32,
}

impl WearSpec {
    /// `[wear]` resolved: the kind's keys filled in, other kinds' keys refused; endurance from
    /// `preset_cycles` unless set.
    pub fn resolve(w: &mut WearConfig, preset_cycles: u64) -> Result<Self, ConfigError> {
        let entry = spec::lookup_or_none(super::REGISTRY, &w.kind, "wear.kind", NO_LEVELER)?;
        let endurance_cycles =
            *w.endurance_cycles.get_or_insert(preset_cycles.min(u64::from(u32::MAX)) as u32);
        for e in super::REGISTRY {
            if entry.is_some_and(|chosen| chosen.name == e.name) {
                (e.resolve)(w)?;
            } else {
                (e.refuse_keys)(w)?;
            }
        }
        Ok(Self { entry, config: w.clone(), endurance_cycles })
    }

    #[must_use]
    pub fn name(&self) -> &'static str {
        self.entry.map_or(NO_LEVELER, |e| e.name)
    }

    /// The leveler for a host with `units` units (`WearHost::units`) over `physical_blocks`,
    /// `erases_so_far` erases already done; `None` without one.
    #[must_use]
    pub fn build(
        &self,
        units: u32,
        physical_blocks: u32,
        erases_so_far: u64,
        seed: u64,
    ) -> Option<Box<dyn WearLeveler>> {
        let w = &self.config;
        let params = WearParams {
            delta: w.delta.unwrap_or(WEAR_DELTA_DEFAULT),
            adaptive: w.adaptive.unwrap_or(false).then(|| {
                (w.lambda.unwrap_or(WEAR_LAMBDA_DEFAULT), w.session_wear_erases.unwrap_or(1000))
            }),
            threshold: w.threshold.unwrap_or(WEAR_THRESHOLD_DEFAULT),
            set_blocks: w.set_blocks.unwrap_or(1),
            units,
            physical_blocks,
            erases_so_far,
            seed,
        };
        self.entry.map(|e| (e.build)(&params))
    }
}

/// `Ok` unless `set`: the key belongs to another kind.
pub(super) fn only(set: bool, key: &str, kind: &str) -> Result<(), ConfigError> {
    check(!set, key, format!("only wear.kind = \"{kind}\" uses it"))
}
