//! `nandlab run`: one simulation, its summary table or JSON report, and with `--report
//! FILE.html` the hand-off of its HTML report to Python (`handoff.rs`).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use clap::Args;
use nandlab_core::Metrics;
use nandlab_run::{load_config, prepare, run, RunReport};

use crate::args::{ConfigArgs, OutputArgs};
use crate::handoff::ReportJob;
use crate::out;
use crate::table;

/// `run [CONFIG.toml] [--set key=value]... [--json PATH|-] [--report FILE.html] [--quiet]`.
#[derive(Args, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    pub config: ConfigArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    /// Then write an HTML report of the result (in Python)
    #[arg(long, value_name = "FILE.html")]
    pub report: Option<PathBuf>,
}

/// `nandlab run`: runs, prints, and returns the HTML report it leaves to Python, if any.
pub fn run_command(args: &RunArgs) -> Result<Option<ReportJob>, String> {
    let config = load_config(args.config.config.as_deref(), &args.config.overrides)
        .map_err(|e| e.to_string())?;
    let prepared = prepare(&config).map_err(|e| e.to_string())?;
    let show_progress = !args.output.quiet && std::io::stderr().is_terminal();
    let mut bar = ProgressBar::new(show_progress);
    let report =
        run(&prepared, &mut |done, total| bar.update(done, total)).map_err(|e| e.to_string())?;
    bar.finish();
    if let Some(target) = &args.output.json {
        write_json(target, &report)?;
    }
    let json_on_stdout = args.output.json.as_deref() == Some(Path::new("-"));
    if !json_on_stdout {
        outp!("{}", summary(&report))?;
    }
    Ok(args.report.as_ref().map(|html| ReportJob {
        json: report.to_json(),
        html: html.clone(),
        json_on_stdout,
    }))
}

fn write_json(target: &PathBuf, report: &RunReport) -> Result<(), String> {
    let json = report.to_json();
    if target.as_os_str() == "-" {
        outln!("{json}")
    } else {
        std::fs::write(target, json + "\n").map_err(|e| format!("{}: {e}", target.display()))
    }
}

/// The human-readable summary of one run.
fn summary(r: &RunReport) -> String {
    let m = &r.metrics;
    let c = &r.config;
    let mut out = String::new();
    out += &format!(
        "{} · seed {} · {} FTL, {} cleaning, {} placement ({} region{}) · {} workload\n",
        r.version,
        r.seed,
        c.ftl.kind,
        c.ftl.cleaning,
        c.ftl.placement,
        c.ftl.regions.unwrap_or(1),
        if c.ftl.regions.unwrap_or(1) == 1 { "" } else { "s" },
        c.workload.kind,
    );
    let d = &c.device;
    out += &format!(
        "device: {} preset, {} blocks × {} pages × {} B, utilization {:.3}\n",
        d.preset,
        d.blocks.unwrap_or(0),
        d.pages_per_block.unwrap_or(0),
        d.page_size_bytes.unwrap_or(0),
        d.utilization.unwrap_or(0.0)
    );
    if let Some(t) = &r.trace {
        out += &format!(
            "trace: {} ({} format, {} records, fit {}{})\n",
            t.path.display(),
            t.format,
            t.records,
            t.fit,
            if t.sized_from_trace { ", device sized from the trace" } else { "" }
        );
    }
    let mut t = table::Table::new(&["metric", "value"]);
    let mut rows = metric_rows(m, r.config.run.timing.is_on());
    policy_rows(m, &mut rows);
    lifetime_rows(m, &mut rows);
    rows.extend([(
        "wall time / speed",
        format!(
            "{:.2} s / {:.2} M host page writes/s",
            m.wall_seconds,
            m.host_writes_per_wall_second / 1e6
        ),
    )]);
    for (k, v) in rows {
        t.row(vec![k.into(), v]);
    }
    out += &t.render();
    if m.victim_searches_capped > 0 {
        out += &format!(
            "note: {} victim searches hit ftl.victim_scan_limit (approximate choices)\n",
            m.victim_searches_capped
        );
    }
    out
}

/// The rows every run has; a run that only counts (`run.timing = "off"`) says so instead of
/// showing latencies it did not measure.
fn metric_rows(m: &Metrics, timed: bool) -> Vec<(&'static str, String)> {
    let ms = |ns: u64| format!("{:.3} ms", ns as f64 / 1e6);
    let untimed = || "not timed (run.timing = \"off\")".to_string();
    vec![
        ("host write pages", m.host_write_pages.to_string()),
        ("host read pages", m.host_read_pages.to_string()),
        ("flash program pages", m.flash_program_pages.to_string()),
        ("gc copied pages", m.gc_copied_pages.to_string()),
        ("erases", m.erases.to_string()),
        ("write amplification", format!("{:.4}", m.write_amplification)),
        ("cleaning cost", format!("{:.2}", m.cleaning_cost)),
        (
            "wear mean / stddev / max",
            format!("{:.2} / {:.2} / {}", m.wear_mean, m.wear_stddev, m.wear_max),
        ),
        ("flash busy", format!("{:.3} s", m.flash_busy_ns as f64 / 1e9)),
        (
            "write latency p50 / p99 / max",
            if timed {
                format!(
                    "{} / {} / {}",
                    ms(m.write_latency_ns.p50),
                    ms(m.write_latency_ns.p99),
                    ms(m.write_latency_ns.max)
                )
            } else {
                untimed()
            },
        ),
        (
            "read latency p50 / p99",
            if timed {
                format!("{} / {}", ms(m.read_latency_ns.p50), ms(m.read_latency_ns.p99))
            } else {
                untimed()
            },
        ),
        (
            "RAM (tables + media)",
            format!(
                "{:.1} MiB ({:.1} B/page)",
                (m.table_memory_bytes + m.media_memory_bytes) as f64 / 1048576.0,
                m.memory_bytes_per_page
            ),
        ),
    ]
}

/// The rows of the policies a run has: merges, buffer, RAM region, wear leveling.
fn policy_rows(m: &Metrics, rows: &mut Vec<(&'static str, String)>) {
    let (sw, pa, fu) = (m.switch_merges, m.partial_merges, m.full_merges);
    if sw.count + pa.count + fu.count + m.migrations.count > 0 {
        rows.push((
            "merges switch / partial / full",
            format!(
                "{} / {} / {} (migrations {})",
                sw.count, pa.count, fu.count, m.migrations.count
            ),
        ));
    }
    if m.buffer_kind != nandlab_core::names::NO_BUFFER {
        let b = &m.buffer;
        rows.push(("buffer", format!("{} ({} pages)", m.buffer_kind, m.buffer_pages)));
        rows.push(("buffer hits read / write", format!("{} / {}", b.read_hits, b.write_hits)));
        rows.push((
            "buffer written back (at end)",
            format!("{} ({})", b.written_back_pages, b.final_written_pages),
        ));
    }
    if let Some(r) = &m.ram_region {
        let c = &r.counters;
        let buffered = m.buffer_kind != nandlab_core::names::NO_BUFFER;
        let what = if buffered { "RAM region (FTL)" } else { "RAM region" };
        rows.push((
            what,
            format!("{} pages, write-back at {}", r.capacity_pages, r.threshold_pages),
        ));
        rows.push((
            "RAM host writes (in place)",
            format!("{} ({})", c.host_write_pages, c.in_place_updates),
        ));
        rows.push((
            "RAM written back (at end)",
            format!("{} ({})", c.write_back_pages, c.final_write_back_pages),
        ));
    }
    if let Some(w) = &m.wear_leveling {
        let what = if w.summary.is_empty() { w.kind.to_string() } else { w.summary.clone() };
        rows.push(("wear leveling", what));
        rows.push((
            "wear-leveling erases / copies",
            format!("{} / {}", m.wear_leveling_erases, m.wear_leveling_copies),
        ));
    }
}

/// The lifetime and wear-sample rows, when the run has them.
fn lifetime_rows(m: &Metrics, rows: &mut Vec<(&'static str, String)>) {
    let l = &m.lifetime;
    if let Some(first) = l.first_wear_out_host_bytes {
        let gb = |b: u64| format!("{:.3} GB", b as f64 / 1e9);
        rows.push((
            "lifetime: first wear-out / unusable",
            format!(
                "{} / {} ({} blocks retired, {} cycles)",
                gb(first),
                l.unusable_host_bytes.map_or_else(|| "not reached".into(), gb),
                l.retired_blocks,
                l.endurance_cycles
            ),
        ));
    }
    // The samples themselves are a series for plots: the summary only says they are there.
    if !m.wear_samples.is_empty() {
        rows.push(("wear samples", format!("{} (in the --json report)", m.wear_samples.len())));
    }
}

/// A one-line progress bar on stderr, redrawn at most every 1/10 s of progress.
struct ProgressBar {
    enabled: bool,
    last_permille: u64,
    drawn: bool,
}

impl ProgressBar {
    fn new(enabled: bool) -> Self {
        Self { enabled, last_permille: u64::MAX, drawn: false }
    }

    fn update(&mut self, done: u64, total: u64) {
        if !self.enabled || total == 0 {
            return;
        }
        let permille = (done.min(total) * 1000 / total).min(1000);
        if permille == self.last_permille {
            return;
        }
        self.last_permille = permille;
        let width = 40;
        let filled = (permille * width / 1000) as usize;
        let bar = "#".repeat(filled) + &"-".repeat(width as usize - filled);
        out::note(&format!("\r[{bar}] {:>5.1} %  {done}/{total} requests", permille as f64 / 10.0));
        self.drawn = true;
    }

    fn finish(&mut self) {
        if self.drawn {
            out::note("\n");
        }
    }
}
