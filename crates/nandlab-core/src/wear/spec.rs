//! The wear-leveling family's configuration: the raw `[wear]` table and the typed `WearSpec`
//! it resolves to (a registered leveler, or none, plus the endurance every kind has), which
//! builds the leveler for an FTL.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{WearLeveler, WearSetup};
use crate::error::ConfigError;
use crate::spec::{self, ExtraKeys, Family, Named, Param, Params, Tables};

/// `[wear]`: wear leveling and endurance (`wear/`, docs/ALGORITHMS.md §6; lazy wear-leveling
/// paper). The levelers' own parameters (`wear.delta`, `wear.threshold`, ...) are declared in
/// their files; keys a kind does not use stay unset in the resolved config.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct WearConfig {
    /// `none`, `static` (Chang's SW Leveler), `lazy` (Algorithm 1).
    pub kind: String,
    /// Rated program/erase cycles per block; a block reaching it is retired. Default: the
    /// preset's `endurance_cycles`; 0 = unlimited.
    pub endurance_cycles: Option<u32>,
    /// The levelers' parameters (`spec::Params`).
    #[serde(flatten)]
    pub extra: ExtraKeys,
}

impl Default for WearConfig {
    fn default() -> Self {
        Self { kind: "none".into(), endurance_cycles: None, extra: ExtraKeys::new() }
    }
}

/// The name of `wear.kind` that means no leveler.
pub const NO_LEVELER: &str = "none";

/// One registered leveler: its `wear.kind` name, the parameters it declares, and how it
/// resolves them into a leveler builder.
#[derive(Clone, Copy, Debug)]
pub struct WearEntry {
    pub name: &'static str,
    pub params: &'static [Param],
    pub resolve: fn(&mut Params<'_>) -> Result<Arc<dyn ResolvedLeveler>, ConfigError>,
}

impl Named for WearEntry {
    fn name(&self) -> &'static str {
        self.name
    }
    fn params(&self) -> &'static [Param] {
        self.params
    }
}

/// A leveler with its parameters resolved: it builds the leveler for a host.
pub trait ResolvedLeveler: std::fmt::Debug + Send + Sync {
    fn build(&self, setup: WearSetup) -> Box<dyn WearLeveler>;
}

/// `wear.kind` values.
#[must_use]
pub fn kinds() -> Vec<&'static str> {
    let mut names = vec![NO_LEVELER];
    names.extend(spec::names(super::REGISTRY));
    names
}

/// A resolved `[wear]`: the leveler (if any) with its parameters, and the endurance.
#[derive(Clone, Debug)]
pub struct WearSpec {
    name: &'static str,
    leveler: Option<Arc<dyn ResolvedLeveler>>,
    /// `wear.endurance_cycles`: rated program/erase cycles per block (0 = unlimited).
    pub endurance_cycles: u32,
}

impl Default for WearSpec {
    fn default() -> Self {
        Self { name: NO_LEVELER, leveler: None, endurance_cycles: 0 }
    }
}

impl WearSpec {
    /// `[wear]` resolved: the kind's parameters filled in (other kinds' are refused by
    /// `Tables::settle`); endurance from `preset_cycles` unless set.
    pub fn resolve(
        w: &mut WearConfig,
        tables: &mut Tables,
        preset_cycles: u64,
    ) -> Result<Self, ConfigError> {
        let entry = spec::lookup_or_none(super::REGISTRY, &w.kind, "wear.kind", NO_LEVELER)?;
        let endurance_cycles =
            *w.endurance_cycles.get_or_insert(preset_cycles.min(u64::from(u32::MAX)) as u32);
        let leveler = match entry {
            Some(e) => Some((e.resolve)(&mut tables.params("wear"))?),
            None => None,
        };
        Ok(Self { name: entry.map_or(NO_LEVELER, |e| e.name), leveler, endurance_cycles })
    }

    /// The family's declarations (`Tables::settle`).
    #[must_use]
    pub fn family() -> Family {
        Family::of("wear.kind", super::REGISTRY)
    }

    #[must_use]
    pub fn name(&self) -> &'static str {
        self.name
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
        let setup = WearSetup { units, physical_blocks, erases_so_far, seed };
        self.leveler.as_ref().map(|l| l.build(setup))
    }
}
