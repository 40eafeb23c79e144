//! `workload.kind = "phases"`: phases of uniform or hot/cold access, each of a given length
//! (docs/ALGORITHMS.md §10). Default: the DAC paper's server run — after the prefill, four
//! phases of equal length alternating 90/10 locality and uniform access.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{hot_fractions, WorkloadKindEntry, HOT_ACCESS, HOT_DATA};
use crate::error::ConfigError;
use crate::spec::{check, fraction, one_of, Param, Params};
use crate::workload::{Mix, Phase, Shape, SyntheticPlan};

/// One phase of `workload.phases`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PhaseConfig {
    /// `uniform` or `hotcold`.
    pub kind: String,
    #[serde(default)]
    pub hot_access_fraction: Option<f64>,
    #[serde(default)]
    pub hot_data_fraction: Option<f64>,
    /// Length in bytes written (alternative: `passes`).
    #[serde(default)]
    pub bytes: Option<u64>,
    /// Length in host page writes ÷ logical pages.
    #[serde(default)]
    pub passes: Option<f64>,
}

pub(super) const ENTRY: WorkloadKindEntry = WorkloadKindEntry {
    name: "phases",
    params: &[HOT_ACCESS, HOT_DATA, Param::new("workload", "phases")],
    replayed: false,
    default_passes: (1.0, 2.0),
    resolve: |_, params, _| Ok(Arc::new(SyntheticPlan { mix: Mix::Phases(resolve(params)?) })),
};

/// `workload.phases` checked and filled (a hot/cold phase takes the workload's x/y unless it
/// gives its own), recorded; the phases as the generator runs them.
fn resolve(params: &mut Params<'_>) -> Result<Vec<Phase>, ConfigError> {
    let (x, y) = hot_fractions(params)?;
    let mut phases: Vec<PhaseConfig> = params.get("phases")?.unwrap_or_else(default_phases);
    check(!phases.is_empty(), "workload.phases", "needs at least one phase")?;
    let mut out = Vec::with_capacity(phases.len());
    for (i, p) in phases.iter_mut().enumerate() {
        let key = format!("workload.phases[{i}]");
        one_of(&p.kind, &format!("{key}.kind"), &["uniform", "hotcold"])?;
        let shape = if p.kind == "hotcold" {
            let access = *p.hot_access_fraction.get_or_insert(x);
            let data = *p.hot_data_fraction.get_or_insert(y);
            fraction(access, &format!("{key}.hot_access_fraction"), true)?;
            fraction(data, &format!("{key}.hot_data_fraction"), true)?;
            Shape::HotCold { access, data }
        } else {
            Shape::Uniform
        };
        check(
            p.bytes.is_some() != p.passes.is_some(),
            &format!("{key}.passes"),
            "each phase needs exactly one of bytes or passes",
        )?;
        if let Some(v) = p.passes {
            check(v.is_finite() && v > 0.0, &format!("{key}.passes"), "must be > 0")?;
        }
        out.push(Phase { shape, bytes: p.bytes, passes: p.passes });
    }
    params.set("phases", &phases);
    Ok(out)
}

/// The DAC paper's server run: four phases of equal length alternating 90/10 locality and
/// uniform access. Each phase writes 40 MB onto 24 MB × 0.9 of data in the paper, i.e. 1.85
/// passes over the logical space.
fn default_phases() -> Vec<PhaseConfig> {
    let passes = 40.0 / (24.0 * 0.9);
    ["hotcold", "uniform", "hotcold", "uniform"]
        .iter()
        .map(|k| PhaseConfig {
            kind: (*k).into(),
            hot_access_fraction: (*k == "hotcold").then_some(0.9),
            hot_data_fraction: (*k == "hotcold").then_some(0.1),
            bytes: None,
            passes: Some(passes),
        })
        .collect()
}
