//! The `nandlab` command line as a library: `main_with_args` is everything the binary does
//! (argument parsing, progress bars, tables and JSON over `nandlab-run`; errors become one clear
//! line and exit status 2). The `nandlab` binary (`main.rs`) and the Python module
//! (`nandlab._native.cli`, for `python -m nandlab`) both call it, so they are one CLI.
//!
//! Feature `serve` (default) adds `nandlab serve` and with it the NBD server and OpenSSL; the
//! Python wheel builds without it so that it installs with only Python and Rust.

#[macro_use]
mod out;
mod analyze;
mod args;
mod delegate;
mod demo;
mod pbr;
mod probe;
#[cfg(feature = "serve")]
mod serve;
mod suite;
mod svg;
mod table;

use std::io::IsTerminal;
use std::path::PathBuf;

use args::{Args, Command};
use nandlab_core::presets::PRESETS;
use nandlab_run::{load_config, prepare, run, RunReport};

const USAGE: &str = "\
nandlab — a flash-storage laboratory

Usage:
  nandlab run [CONFIG.toml] [--set key=value]... [--json PATH|-] [--report FILE.html] [--quiet]
  nandlab print-config [CONFIG.toml] [--set key=value]...
  nandlab presets
  nandlab demo [--quick]
  nandlab bench [--blocks N] [--passes P] [--only page|hybrid|buffer|parallel|analyze]
  nandlab sweep [CONFIG.toml] [--set key=value]... --grid KEY=V1,V2,... [--seeds A-B]
                [--backend local|ray] [--address ADDR] [--jobs N] --out DIR [--retry-failed]
                [--quiet]
  nandlab report PATH --out FILE.html [--title T]
  nandlab serve [CONFIG.toml] [--set key=value]... --image PATH
                [--listen 127.0.0.1:10809 | --unix PATH] [--stats-json PATH]
                [--read-only (the image must exist)] [--max-connections N (64)]
                [--max-handshakes N (32)] [--handshake-timeout-s S (10)]
                [--stall-timeout-s S (30)]
                [--tls off|on|require] [--tls-certificates DIR [--tls-verify-peer]]
                [--tls-psk FILE] [--allow-insecure-listen]
  nandlab analyze TRACE [--format F] [--device D] [--json PATH|-] [--plots DIR] [--quiet]
  nandlab suite transfer|mapping|gc|buffer --out TRACE.csv [--set param=value]... [--json PATH|-]
  nandlab pbr TARGET --trace PATH [--out DIR] [--set key=value]... [--format F] [--device D]
              [--max-writes N] [--destroy-data] [--json PATH|-] [--quiet]
  nandlab probe TARGET [--set key=value]... [--only page,block,zone,parallel] [--repeats N]
              [--destroy-data] [--out DIR] [--json PATH|-] [--quiet]
      TARGET: sim:[CONFIG.toml] | nbd://HOST[:PORT][/EXPORT] | nbd+unix:///[EXPORT]?socket=PATH
              | a block device path (overwritten: needs --destroy-data)
  nandlab --version | --help

Every config key has a default; `nandlab print-config` shows them all, resolved.
`nandlab --version` prints `nandlab X.Y.Z (COMMIT)`, the git commit of the build (`-dirty` with
uncommitted changes), the string every result records as its `version`.
`sweep`, `report` and `run --report` run in Python (`python -m nandlab`): the interpreter is
$NANDLAB_PYTHON, else the repository's .venv/bin/python, else python3. `python -m nandlab` and
the `nandlab` console script of `pip install .` are this CLI without `serve`.
Examples:
  nandlab run --set workload.kind=hotcold --set ftl.placement=dac --set ftl.cleaning=cat
  nandlab run --set workload.kind=trace --set workload.path=trace.csv.gz --json out.json
  nandlab sweep --grid ftl.cleaning=greedy,cat --grid ftl.regions=1,2,4 --out sweep/
";

/// What `nandlab serve` says in a build without the `serve` feature.
#[cfg(not(feature = "serve"))]
const NO_SERVE: &str = "this nandlab has no `serve`: it was built without OpenSSL (as the \
Python wheel is); for the full binary run `make build` in the source tree (target/release/nandlab) \
or `cargo install --path crates/nandlab-cli`";

/// Runs the command line `argv` (the arguments after the program name) to the end and returns
/// the process exit status: 0 on success, 2 on a usage or run error (one line on stderr), 141
/// when standard output was closed, or the status of the Python process a Python-only
/// subcommand ran in.
pub fn main_with_args(argv: &[String]) -> u8 {
    // Before parsing: `serve`'s own checks (`--image` missing, ...) would otherwise hide that
    // this build cannot serve at all.
    #[cfg(not(feature = "serve"))]
    if argv.first().map(String::as_str) == Some("serve") {
        out::note(&format!("nandlab: error: {NO_SERVE}\n"));
        return 2;
    }
    let args = match args::parse(argv) {
        Ok(a) => a,
        Err(message) => {
            out::note(&format!("nandlab: {message}\n\n{USAGE}"));
            return 2;
        }
    };
    match dispatch(args) {
        Ok(status) => status,
        Err(message) if message == out::CLOSED => out::CLOSED_STATUS,
        Err(message) => {
            out::note(&format!("nandlab: error: {message}\n"));
            2
        }
    }
}

/// Runs the parsed command; `Ok` carries the exit status (not 0 only for a Python subcommand
/// that failed: it has said why itself).
fn dispatch(args: Args) -> Result<u8, String> {
    let done = match args.command {
        Command::Help => outp!("{USAGE}"),
        Command::Version => outln!("{}", nandlab_version::VERSION_STRING),
        Command::Presets => presets(),
        Command::PrintConfig => print_config(&args),
        Command::Run => return run_command(&args),
        Command::Demo => demo::demo(args.quick),
        Command::Bench => {
            demo::bench(args.bench_blocks, args.bench_passes, args.bench_only.as_deref())
        }
        #[cfg(feature = "serve")]
        Command::Serve => serve::serve(&args),
        #[cfg(not(feature = "serve"))]
        Command::Serve => Err(NO_SERVE.to_string()),
        Command::Analyze => analyze::analyze(&args),
        Command::Suite => suite::suite(&args),
        Command::Pbr => pbr::pbr(&args),
        Command::Probe => probe::probe(&args),
        Command::Sweep => return delegate::python_subcommand("sweep", &args.passthrough),
        Command::Report => return delegate::python_subcommand("report", &args.passthrough),
    };
    done.map(|()| 0)
}

fn presets() -> Result<(), String> {
    let mut t = table::Table::new(&[
        "preset",
        "page B",
        "pages/blk",
        "blocks",
        "read ns",
        "prog ns",
        "erase ns",
        "xfer ns",
        "copy ns",
    ]);
    for p in PRESETS {
        let tm = p.timing;
        t.row(vec![
            p.name.into(),
            p.page_size_bytes.to_string(),
            p.pages_per_block.to_string(),
            p.blocks.to_string(),
            tm.read_page_ns.to_string(),
            tm.program_page_ns.to_string(),
            tm.erase_block_ns.to_string(),
            tm.transfer_page_ns.to_string(),
            tm.copy_page_ns.map_or_else(|| "-".into(), |c| c.to_string()),
        ]);
    }
    outp!("{}", t.render())?;
    outln!()?;
    for p in PRESETS {
        outln!("{:<9} {}", p.name, p.description)?;
    }
    Ok(())
}

fn print_config(args: &Args) -> Result<(), String> {
    let config = load_config(args.config.as_deref(), &args.overrides).map_err(|e| e.to_string())?;
    let prepared = prepare(&config).map_err(|e| e.to_string())?;
    let text = toml::to_string(&prepared.resolved.config).map_err(|e| e.to_string())?;
    outp!("{text}")?;
    let g = prepared.resolved.geometry;
    let memory = nandlab_core::memory::estimate(&prepared.resolved, false);
    outln!(
        "# estimated memory: {} ({})",
        nandlab_core::memory::human_bytes(memory.total_bytes()),
        memory.describe()
    )?;
    outln!(
        "# derived: {} physical pages, {} logical pages, utilization {:.4}, regions {}, \
         gc_free_blocks_min {}",
        g.physical_pages(),
        g.logical_pages,
        g.utilization(),
        prepared.resolved.regions,
        prepared.resolved.gc_free_blocks_min
    )
}

/// `nandlab run`; with `--report FILE.html` the Python report of the result follows, its
/// interpreter checked first so that a long run is not lost to a missing Python.
fn run_command(args: &Args) -> Result<u8, String> {
    let python = match &args.report {
        Some(_) => Some(delegate::python_with_nandlab("run --report")?),
        None => None,
    };
    let config = load_config(args.config.as_deref(), &args.overrides).map_err(|e| e.to_string())?;
    let prepared = prepare(&config).map_err(|e| e.to_string())?;
    let show_progress = !args.quiet && std::io::stderr().is_terminal();
    let mut bar = ProgressBar::new(show_progress);
    let report =
        run(&prepared, &mut |done, total| bar.update(done, total)).map_err(|e| e.to_string())?;
    bar.finish();
    if let Some(target) = &args.json {
        write_json(target, &report)?;
    }
    let json_to_stdout = args.json.as_deref() == Some(std::path::Path::new("-"));
    if !json_to_stdout {
        outp!("{}", summary(&report))?;
    }
    if let (Some(python), Some(html)) = (&python, &args.report) {
        delegate::write_report(python, &report.to_json(), html, json_to_stdout)?;
    }
    Ok(0)
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
    let ms = |ns: u64| format!("{:.3} ms", ns as f64 / 1e6);
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
    let mut rows: Vec<(&str, String)> = vec![
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
            format!(
                "{} / {} / {}",
                ms(m.write_latency_ns.p50),
                ms(m.write_latency_ns.p99),
                ms(m.write_latency_ns.max)
            ),
        ),
        (
            "read latency p50 / p99",
            format!("{} / {}", ms(m.read_latency_ns.p50), ms(m.read_latency_ns.p99)),
        ),
        (
            "RAM (tables + media)",
            format!(
                "{:.1} MiB ({:.1} B/page)",
                (m.table_memory_bytes + m.media_memory_bytes) as f64 / 1048576.0,
                m.memory_bytes_per_page
            ),
        ),
    ];
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
    if m.buffer_kind != "none" {
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
        let what = if m.buffer_kind == "none" { "RAM region" } else { "RAM region (FTL)" };
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
        let what = match w.kind {
            "lazy" => format!("lazy, {} re-mappings, Δ {:.1}", w.remaps, w.delta),
            _ => format!(
                "{}, {} sets forced, {} blocks evicted",
                w.kind, w.forced_sets, w.evicted_blocks
            ),
        };
        rows.push(("wear leveling", what));
        rows.push((
            "wear-leveling erases / copies",
            format!("{} / {}", m.wear_leveling_erases, m.wear_leveling_copies),
        ));
    }
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
