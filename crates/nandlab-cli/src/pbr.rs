//! `nandlab pbr TARGET --trace PATH [--out DIR]`: the Per-Byte-Response replay
//! (`nandlab_probe::pbr`): the trace's writes one at a time against the target; a summary and
//! the symptom diagnosis (`nandlab_probe::diagnose`) on the terminal, and in `--out DIR` the series (`pbr.csv`), the summary (`summary.json`) and
//! the paper's 2-D projections of its 3-D view (`pbr_index.svg`: PBR over the request index,
//! `pbr_lba.svg`: PBR over the logical address). Python's `nandlab.pbr` draws the 3-D view.

use std::io::IsTerminal;

use nandlab_probe::pbr::{replay, PbrOptions};
use nandlab_probe::{open_target, TargetSpec};

use crate::args::Args;
use crate::svg;
use crate::table::Table;

pub fn pbr(args: &Args) -> Result<(), String> {
    let target = args.target.as_deref().ok_or("pbr needs a TARGET")?;
    let trace = args.pbr_trace.as_deref().ok_or("pbr needs --trace PATH")?;
    let spec = TargetSpec::parse(target, &args.overrides)?;
    let mut t = open_target(&spec, args.destroy_data)?;
    let show = !args.quiet && std::io::stderr().is_terminal();
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
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        result.write_csv(&dir.join("pbr.csv"))?;
        let text = serde_json::to_string_pretty(&summary).map_err(|e| e.to_string())? + "\n";
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
    }
    let to_stdout = crate::out::json(args.json.as_deref(), &summary)?;
    if to_stdout || args.quiet {
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
        "diagnosis: {} (scores: buffer {:.2}, mapping {:.2}, gc {:.2})",
        serde_json::to_value(d.symptom).map_err(|e| e.to_string())?.as_str().unwrap_or("?"),
        d.evidence.buffer_score,
        d.evidence.mapping_score,
        d.evidence.gc_score
    )?;
    outln!("  {}", d.explanation)?;
    if let Some(dir) = &args.out {
        outln!("series, summary and plots: {}", dir.display())?;
    }
    Ok(())
}
