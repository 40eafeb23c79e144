//! `nandlab probe TARGET`: black-box geometry detection (`nandlab_probe::probe`, the geometry
//! paper, docs/PAPERS.md): the effective page, block and mapping-zone sizes and the parallel units,
//! each with its confidence; the raw curves as CSV and SVG in `--out DIR`.

use std::fmt::Write as _;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use nandlab_probe::probe::{probe as run_probe, ProbeOptions, ProbeReport};
use nandlab_probe::{open_target, TargetSpec};

use crate::args::{at_least_one, OutputArgs, TARGET_FORMS, TARGET_HELP, TARGET_SET_HELP};
use crate::svg;
use crate::table::Table;

/// `probe TARGET [--set key=value]... [--only page,block,zone,parallel] [--repeats N]
/// [--destroy-data] [--out DIR] [--json PATH|-] [--quiet]`.
#[derive(Args, Debug)]
#[command(after_help = TARGET_FORMS)]
pub struct ProbeArgs {
    #[arg(value_name = "TARGET", help = TARGET_HELP)]
    pub target: String,
    #[arg(short = 's', long = "set", value_name = "KEY=VALUE", help = TARGET_SET_HELP)]
    pub overrides: Vec<String>,
    /// Run only these probes: page,block,zone,parallel (default: all)
    #[arg(long, value_name = "PROBES", value_delimiter = ',', hide_possible_values = true)]
    pub only: Vec<Probe>,
    /// Measurements per step on a wall-clock target (median kept)
    #[arg(long, value_name = "N", value_parser = at_least_one,
          default_value_t = ProbeOptions::default().repeats)]
    pub repeats: usize,
    /// Allow writing to a block device or file target (its data is overwritten)
    #[arg(long)]
    pub destroy_data: bool,
    /// Write probe.json and the raw curves (CSV and SVG) to DIR
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// One probe of `--only`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Probe {
    // The effective page size, the erase block size, the mapping-zone size, the parallel units.
    Page,
    Block,
    Zone,
    Parallel,
}

pub fn probe(args: &ProbeArgs) -> Result<(), String> {
    let spec = TargetSpec::parse(&args.target, &args.overrides)?;
    let mut t = open_target(&spec, args.destroy_data)?;
    let mut options = ProbeOptions { repeats: args.repeats, ..ProbeOptions::default() };
    if !args.only.is_empty() {
        let on = |p: Probe| args.only.contains(&p);
        options.page = on(Probe::Page);
        options.block = on(Probe::Block);
        options.zone = on(Probe::Zone);
        options.parallel = on(Probe::Parallel);
    }
    let show = !args.output.quiet && std::io::stderr().is_terminal();
    let mut progress = |what: &str| {
        if show {
            crate::out::note(&format!("probing {what}...\n"));
        }
    };
    let report = run_probe(t.as_mut(), &options, &mut progress)?;
    let value = serde_json::to_value(&report).map_err(|e| e.to_string())?;
    if let Some(dir) = &args.out {
        write_out_dir(&report, &value, dir)?;
    }
    if crate::out::json(args.output.json.as_deref(), &value)? || args.output.quiet {
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

/// `--out DIR`: the report (`probe.json`) and each raw curve as `curveN.csv` and `curveN.svg`.
fn write_out_dir(
    report: &ProbeReport,
    value: &serde_json::Value,
    dir: &Path,
) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let text = serde_json::to_string_pretty(value).map_err(|e| e.to_string())? + "\n";
    std::fs::write(dir.join("probe.json"), text).map_err(|e| format!("{}: {e}", dir.display()))?;
    for (i, c) in report.curves.iter().enumerate() {
        let mut csv = format!("{},{}\n", c.x_label.replace(' ', "_"), c.y_label.replace(' ', "_"));
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
    Ok(())
}
