//! `nandlab probe TARGET`: black-box geometry detection (`nandlab_probe::probe`, the geometry
//! paper, docs/PAPERS.md): the effective page, block and mapping-zone sizes and the parallel units,
//! each with its confidence; the raw curves as CSV and SVG in `--out DIR`.

use std::fmt::Write as _;
use std::io::IsTerminal;

use nandlab_probe::probe::{probe as run_probe, ProbeOptions};
use nandlab_probe::{open_target, TargetSpec};

use crate::args::Args;
use crate::svg;
use crate::table::Table;

pub fn probe(args: &Args) -> Result<(), String> {
    let target = args.target.as_deref().ok_or("probe needs a TARGET")?;
    let spec = TargetSpec::parse(target, &args.overrides)?;
    let mut t = open_target(&spec, args.destroy_data)?;
    let mut options = ProbeOptions::default();
    if let Some(n) = args.repeats {
        options.repeats = n;
    }
    if let Some(only) = &args.probes {
        options.page = false;
        options.block = false;
        options.zone = false;
        options.parallel = false;
        for p in only.split(',') {
            match p.trim() {
                "page" => options.page = true,
                "block" => options.block = true,
                "zone" => options.zone = true,
                "parallel" => options.parallel = true,
                other => {
                    return Err(format!(
                        "--only takes page, block, zone, parallel (comma-separated), not {other:?}"
                    ))
                }
            }
        }
    }
    let show = !args.quiet && std::io::stderr().is_terminal();
    let mut progress = |what: &str| {
        if show {
            crate::out::note(&format!("probing {what}...\n"));
        }
    };
    let report = run_probe(t.as_mut(), &options, &mut progress)?;
    let value = serde_json::to_value(&report).map_err(|e| e.to_string())?;
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let text = serde_json::to_string_pretty(&value).map_err(|e| e.to_string())? + "\n";
        std::fs::write(dir.join("probe.json"), text)
            .map_err(|e| format!("{}: {e}", dir.display()))?;
        for (i, c) in report.curves.iter().enumerate() {
            let mut csv =
                format!("{},{}\n", c.x_label.replace(' ', "_"), c.y_label.replace(' ', "_"));
            for (x, y) in c.x.iter().zip(&c.y) {
                let _ = writeln!(csv, "{x},{y}");
            }
            let stem = format!("curve{i}");
            std::fs::write(dir.join(format!("{stem}.csv")), csv)
                .map_err(|e| format!("{}: {e}", dir.display()))?;
            let points: Vec<(f64, f64)> = c.x.iter().copied().zip(c.y.iter().copied()).collect();
            let chart = svg::scatter(&points, &c.name, &c.x_label, &c.y_label, false);
            std::fs::write(dir.join(format!("{stem}.svg")), chart)
                .map_err(|e| format!("{}: {e}", dir.display()))?;
        }
    }
    if crate::out::json(args.json.as_deref(), &value)? || args.quiet {
        return Ok(());
    }
    let c = report.configured;
    let size = |v: Option<u64>| v.map_or_else(|| "not found".to_string(), |b| format!("{b} B"));
    let mut tab = Table::new(&["probe", "detected", "confidence", "configured", "how"]);
    let rows = [
        ("effective page", &report.page, c.map(|c| size(Some(c.effective_page_bytes)))),
        ("block", &report.block, c.map(|c| size(Some(c.block_bytes)))),
        ("zone", &report.zone, c.map(|c| size(c.zone_bytes))),
        (
            "parallel units",
            &report.parallel,
            c.map(|c| format!("{} dies, {} gangs", c.dies, c.gangs)),
        ),
    ];
    let selected = [options.page, options.block, options.zone, options.parallel];
    for ((name, d, configured), on) in rows.into_iter().zip(selected) {
        if !on {
            continue;
        }
        let detected = if name == "parallel units" {
            d.value.map_or_else(|| "not found".into(), |v| v.to_string())
        } else {
            size(d.value)
        };
        tab.row(vec![
            name.into(),
            detected,
            format!("{:.2}", d.confidence),
            configured.unwrap_or_else(|| "-".into()),
            d.how.clone(),
        ]);
    }
    outln!("{} ({} bytes)", report.target, report.capacity_bytes)?;
    outp!("{}", tab.render())?;
    Ok(())
}
