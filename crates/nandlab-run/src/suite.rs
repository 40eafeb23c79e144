//! Benchmark suite traces (`nandlab suite`, Python `nandlab.suite`): a suite generator
//! (`nandlab_trace::suites`; benchmarks paper §5.2, docs/PAPERS.md) written as an MSR Cambridge CSV
//! trace, then analysed from the file (`analyze`), so the figures reported are those of the trace a
//! user replays, with the targets beside them.

use std::io::Write;
use std::path::Path;

use nandlab_trace::analyze::AnalyzeOptions;
use nandlab_trace::suites::{msr_line, SuiteGenerator, SuiteKind, SuiteParams, SUITE_NAMES};
use serde_json::{json, Value};

use crate::analyze::{analyze_trace, AnalyzeReport};

/// A written suite trace and its analysis.
pub struct SuiteReport {
    pub params: SuiteParams,
    pub analysis: AnalyzeReport,
}

/// The parameters of suite `name` with `overrides` (`key=value`) applied; errors name the
/// suite or parameter at fault.
pub fn suite_params(name: &str, overrides: &[String]) -> Result<SuiteParams, String> {
    let kind = SuiteKind::from_name(name).ok_or_else(|| {
        format!("unknown suite {name:?}; expected one of {}", SUITE_NAMES.join(", "))
    })?;
    let mut p = SuiteParams::new(kind);
    for o in overrides {
        let (k, v) = o
            .split_once('=')
            .ok_or_else(|| format!("suite parameter {o:?}: expected key=value"))?;
        p.set(k.trim(), v.trim())?;
    }
    p.validate()?;
    Ok(p)
}

/// Writes suite `p` to `out` (MSR CSV) and analyses the file.
pub fn write_suite(p: SuiteParams, out: &Path) -> Result<SuiteReport, String> {
    let generator = SuiteGenerator::new(p.clone())?;
    let file = std::fs::File::create(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let mut w = std::io::BufWriter::new(file);
    let host = format!("nandlab-{}", p.kind.name());
    for r in generator {
        writeln!(w, "{}", msr_line(&r, &host)).map_err(|e| format!("{}: {e}", out.display()))?;
    }
    w.flush().map_err(|e| format!("{}: {e}", out.display()))?;
    let analysis = analyze_trace(out, Some("msr"), None, &AnalyzeOptions::default())
        .map_err(|e| e.to_string())?;
    Ok(SuiteReport { params: p, analysis })
}

impl SuiteReport {
    /// The analysis JSON (`nandlab analyze --json`) plus `suite_name`, `targets` and
    /// `suite_params`.
    #[must_use]
    pub fn to_json_value(&self) -> Value {
        let p = &self.params;
        let mut v = self.analysis.to_json_value();
        let sizes = |s: &[(u64, f64)]| s.iter().map(|&(b, w)| json!([b, w])).collect::<Vec<_>>();
        v["suite_name"] = json!(p.kind.name());
        v["targets"] = json!({
            "rewrite_ratio": p.rewrite_ratio,
            "sequential_ratio": p.sequential_ratio,
            "alignment_ratio": p.alignment_ratio,
        });
        v["suite_params"] = json!({
            "seed": p.seed,
            "write_bytes": p.write_bytes,
            "area_bytes": p.area_bytes,
            "request_bytes": sizes(&p.request_bytes),
            "rewrite_request_bytes": sizes(&p.rewrite_request_bytes),
            "partition_offset_bytes": p.partition_offset_bytes,
            "hot_fraction": p.hot_fraction,
            "hot_extents": p.hot_extents,
            "groups": p.groups,
            "group_header_bytes": p.group_header_bytes,
            "interarrival_ns": p.interarrival_ns,
        });
        v
    }
}
