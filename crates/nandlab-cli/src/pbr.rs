//! `nandlab pbr TARGET --trace PATH [--out DIR]`: the Per-Byte-Response replay
//! (`nandlab_probe::pbr`): the trace's writes one at a time against the target; a summary and
//! the symptom diagnosis (`nandlab_probe::diagnose`) on the terminal, and in `--out DIR` the series (`pbr.csv`), the summary (`summary.json`) and
//! the paper's 2-D projections of its 3-D view (`pbr_index.svg`: PBR over the request index,
//! `pbr_lba.svg`: PBR over the logical address). Python's `nandlab.pbr` draws the 3-D view.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use clap::Args;
use nandlab_probe::pbr::{replay, PbrOptions, PbrResult};
use nandlab_probe::{open_target, TargetSpec};

use crate::args::{OutputArgs, TARGET_FORMS, TARGET_HELP, TARGET_SET_HELP};
use crate::svg;
use crate::table::Table;

/// `pbr TARGET --trace PATH [--out DIR] [--set key=value]... [--format F] [--device D]
/// [--max-writes N] [--destroy-data] [--json PATH|-] [--quiet]`.
#[derive(Args, Debug)]
#[command(after_help = TARGET_FORMS)]
pub struct PbrArgs {
    #[arg(value_name = "TARGET", help = TARGET_HELP)]
    pub target: String,
    /// The trace whose writes are replayed
    #[arg(long, value_name = "PATH")]
    pub trace: PathBuf,
    /// Write pbr.csv, summary.json and SVG plots to DIR
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    #[arg(short = 's', long = "set", value_name = "KEY=VALUE", help = TARGET_SET_HELP)]
    pub overrides: Vec<String>,
    /// Trace format (default: detected; as `nandlab analyze --format`)
    #[arg(long, value_name = "F")]
    pub format: Option<String>,
    /// Keep only this device / volume / LUN of the trace
    #[arg(long, value_name = "D")]
    pub device: Option<u64>,
    /// Replay at most N writes
    #[arg(long, value_name = "N")]
    pub max_writes: Option<u64>,
    /// Allow writing to a block device or file target (its data is overwritten)
    #[arg(long)]
    pub destroy_data: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

pub fn pbr(args: &PbrArgs) -> Result<(), String> {
    let trace = args.trace.as_path();
    let spec = TargetSpec::parse(&args.target, &args.overrides)?;
    let mut t = open_target(&spec, args.destroy_data)?;
    let show = !args.output.quiet && std::io::stderr().is_terminal();
    let options = PbrOptions {
        format: args.format.clone(),
        device: args.device,
        max_writes: args.max_writes,
    };
    let mut progress = |n: u64| {
        if show {
            crate::out::note(&format!("\rreplaying {}: {n} writes", trace.display()));
        }
    };
    let result = replay(t.as_mut(), trace, &options, &mut progress);
    if show {
        crate::out::note("\n");
    }
    let result = result?;
    let summary = result.summary();
    if let Some(dir) = &args.out {
        write_out_dir(&result, &summary, trace, dir)?;
    }
    let to_stdout = crate::out::json(args.output.json.as_deref(), &summary)?;
    if to_stdout || args.output.quiet {
        return Ok(());
    }
    let q = &summary["pbr_ns_per_byte"];
    let mut tab = Table::new(&["figure", "value"]);
    tab.row(vec!["target".into(), result.target.clone()]);
    tab.row(vec![
        "time".into(),
        if result.simulated { "simulated".into() } else { "wall clock".into() },
    ]);
    tab.row(vec!["writes replayed".into(), result.points.len().to_string()]);
    tab.row(vec!["addresses wrapped".into(), result.wrapped.to_string()]);
    tab.row(vec!["records skipped (not writes)".into(), result.skipped.to_string()]);
    for k in ["p50", "p90", "p99", "max", "mean"] {
        tab.row(vec![format!("PBR {k} (ns/B)"), format!("{:.3}", q[k].as_f64().unwrap_or(0.0))]);
    }
    tab.row(vec![
        "throughput".into(),
        format!("{:.2} MB/s", summary["mb_per_s"].as_f64().unwrap_or(0.0)),
    ]);
    outp!("{}", tab.render())?;
    let d = result.diagnose();
    outln!(
        "diagnosis: {} (scores: buffer {:.2}, mapping {:.2}, gc {:.2}; best {:.1}x the \
         runner-up, {})",
        d.symptom.name(),
        d.evidence.buffer_score,
        d.evidence.mapping_score,
        d.evidence.gc_score,
        d.evidence.margin,
        d.evidence.runner_up.name()
    )?;
    outln!("  {}", d.explanation)?;
    if let Some(dir) = &args.out {
        outln!("series, summary and plots: {}", dir.display())?;
    }
    Ok(())
}

/// `--out DIR`: the series (`pbr.csv`), the summary (`summary.json`) and the two plots.
fn write_out_dir(
    result: &PbrResult,
    summary: &serde_json::Value,
    trace: &Path,
    dir: &Path,
) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    result.write_csv(&dir.join("pbr.csv"))?;
    let text = serde_json::to_string_pretty(summary).map_err(|e| e.to_string())? + "\n";
    std::fs::write(dir.join("summary.json"), text)
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    let name = trace.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let by_index: Vec<(f64, f64)> =
        result.points.iter().map(|p| (p.index as f64, p.pbr_ns_per_byte())).collect();
    let by_lba: Vec<(f64, f64)> = result
        .points
        .iter()
        .map(|p| ((p.offset_bytes / 512) as f64, p.pbr_ns_per_byte()))
        .collect();
    for (file, points, x) in [
        ("pbr_index.svg", &by_index, "write index"),
        ("pbr_lba.svg", &by_lba, "logical sector address"),
    ] {
        let chart = svg::scatter(
            points,
            &format!("{name}: Per-Byte-Response of each write"),
            x,
            "PBR (ns per byte, log scale)",
            true,
        );
        std::fs::write(dir.join(file), chart).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    Ok(())
}
