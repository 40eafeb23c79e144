//! `nandlab analyze TRACE`: the benchmarks paper's workload characterisation of a trace file
//! (docs/PAPERS.md; the figures are defined in `nandlab_trace::analyze`): a table on the terminal,
//! the JSON report (`--json`), and SVG charts of the microscopic views (`--plots DIR`).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use clap::Args;

use nandlab_core::human_bytes;
use nandlab_run::analyze::{analyze_trace_with_progress, AnalyzeReport};
use nandlab_trace::analyze::{AnalyzeOptions, Log2Histogram};

use crate::args::OutputArgs;
use crate::svg;
use crate::table::Table;

/// `analyze TRACE [--format F] [--device D] [--json PATH|-] [--plots DIR] [--quiet]`.
#[derive(Args, Debug)]
pub struct AnalyzeArgs {
    /// The trace file (gzip allowed; its format is detected)
    #[arg(value_name = "TRACE")]
    pub trace: PathBuf,
    /// Trace format: msr spc disksim mqsim blkparse tencent systor cloudphysics alibaba srt
    #[arg(long, value_name = "F")]
    pub format: Option<String>,
    /// Keep only this device / volume / LUN of the trace
    #[arg(long, value_name = "D")]
    pub device: Option<u64>,
    /// Write SVG charts of the per-write views to DIR
    #[arg(long, value_name = "DIR")]
    pub plots: Option<PathBuf>,
    #[command(flatten)]
    pub output: OutputArgs,
}

pub fn analyze(args: &AnalyzeArgs) -> Result<(), String> {
    let path = args.trace.as_path();
    // Progress on a terminal: multi-GB traces take minutes.
    let show = !args.output.quiet && std::io::stderr().is_terminal();
    let started = std::time::Instant::now();
    let mut shown = false;
    let mut progress = |done: u64| {
        if show {
            crate::out::note(&format!(
                "\ranalyzing {}: {done} requests, {:.1} s",
                path.display(),
                started.elapsed().as_secs_f64()
            ));
            shown = true;
        }
    };
    let report = analyze_trace_with_progress(
        path,
        args.format.as_deref(),
        args.device,
        &AnalyzeOptions::default(),
        &mut progress,
    );
    if shown {
        crate::out::note("\n");
    }
    let report = report.map_err(|e| e.to_string())?;
    let to_stdout = crate::out::json(args.output.json.as_deref(), &report.to_json_value())?;
    if let Some(dir) = &args.plots {
        write_plots(&report, dir)?;
    }
    if !to_stdout {
        print_table(&report)?;
        if let Some(dir) = &args.plots {
            outln!("plots: {}", dir.display())?;
        }
    }
    Ok(())
}

fn print_table(r: &AnalyzeReport) -> Result<(), String> {
    let a = &r.analysis;
    let (suite, reason) = a.suite();
    let pct = |x: f64| format!("{:.1} %", 100.0 * x);
    let mut t = Table::new(&["figure", "value"]);
    let rows: Vec<(&str, String)> = vec![
        ("format", r.format.name().to_string()),
        (
            "requests (read/write/trim/flush)",
            format!(
                "{} ({}/{}/{}/{})",
                a.requests, a.read_requests, a.write_requests, a.trim_requests, a.flush_requests
            ),
        ),
        ("data transferred", human_bytes(a.data_transferred_bytes())),
        (
            "written / read",
            format!("{} / {}", human_bytes(a.write_bytes), human_bytes(a.read_bytes)),
        ),
        ("rewrite ratio", pct(a.rewrite_ratio())),
        ("sequential ratio (window 10)", pct(a.sequential_ratio())),
        ("typical write length", format!("{} B", a.request_bytes_typical())),
        ("alignment ratio (4 KiB)", pct(a.alignment_ratio())),
        ("footprint written", human_bytes(a.written_pages * nandlab_trace::analyze::PAGE_BYTES)),
        ("written bytes rewriting data < 1 s old", pct(a.short_rewrite_share())),
        ("duration", format!("{:.3} s", a.duration_ns as f64 / 1e9)),
        ("suite", suite.name().to_string()),
    ];
    for (k, v) in rows {
        t.row(vec![k.to_string(), v]);
    }
    outp!("{}", t.render())?;
    outln!("why: {reason}")?;
    outln!(
        "read {:.1} MB in {:.3} s: {:.0} MB/s{}",
        r.file_bytes as f64 / 1e6,
        r.wall_seconds,
        r.mb_per_s(),
        if r.gzip { " (compressed bytes)" } else { "" }
    )
}

fn hist_bars(h: &Log2Histogram, unit: &str) -> Vec<(String, u64)> {
    h.counts
        .iter()
        .enumerate()
        .map(|(i, &c)| {
            let floor = Log2Histogram::bucket_floor(i);
            (if i == 0 { format!("0 {unit}") } else { format!(">= {floor} {unit}") }, c)
        })
        .collect()
}

fn write_plots(r: &AnalyzeReport, dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let a = &r.analysis;
    let name = r.path.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let sectors = |b: u64| (b / 512) as f64;
    let charts = [
        (
            "lba.svg",
            svg::scatter(
                &a.lba_series
                    .points
                    .iter()
                    .map(|p| (p.write_index as f64, sectors(p.offset_bytes)))
                    .collect::<Vec<_>>(),
                &format!("{name}: logical address of each write"),
                "write index",
                "logical sector address",
                false,
            ),
        ),
        (
            "life_cycle.svg",
            svg::scatter(
                &a.life_series
                    .points
                    .iter()
                    .map(|p| (sectors(p.offset_bytes), p.life_ns as f64 / 1e6))
                    .collect::<Vec<_>>(),
                &format!("{name}: life cycle of rewritten data"),
                "logical sector address",
                "life cycle (ms, log scale)",
                true,
            ),
        ),
        (
            "seek.svg",
            svg::scatter(
                &a.seek_series
                    .points
                    .iter()
                    .map(|p| (sectors(p.offset_bytes), p.seek_bytes as f64 / 512.0))
                    .collect::<Vec<_>>(),
                &format!("{name}: seek distance of each write"),
                "logical sector address",
                "seek distance (sectors)",
                false,
            ),
        ),
        (
            "life_cycle_histogram.svg",
            svg::bars(
                &hist_bars(&a.life_cycle_ns, "ns"),
                &format!("{name}: life cycles of rewrites"),
                "time since the previous write to the page",
                "rewrites",
            ),
        ),
        (
            "seek_histogram.svg",
            svg::bars(
                &hist_bars(&a.seek_bytes, "B"),
                &format!("{name}: |seek distance| of writes"),
                "distance from the previous write's end",
                "writes",
            ),
        ),
    ];
    for (file, text) in charts {
        let p = dir.join(file);
        std::fs::write(&p, text).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    Ok(())
}
