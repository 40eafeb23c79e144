//! The `nandlab` command line as a library. `cli.rs` is its grammar (clap), `execute` runs a
//! parsed command: progress bars, tables and JSON over `nandlab-run`; errors become one clear
//! line and exit status 2. Two entry points share it, so that they are one CLI:
//!
//! - `main_with_args`: the `nandlab` binary (`main.rs`). The Python part of a command
//!   (`handoff.rs`: `sweep`, `report`, the HTML of `run --report`) runs in one child process.
//! - `main_in_python`: `nandlab._native.cli`, for `python -m nandlab` and the console script.
//!   It returns the HTML report of `run --report` to the calling Python code (`nandlab._cli`),
//!   which renders it in the same process; `sweep` and `report` never get here.
//!
//! Feature `serve` (default) adds `nandlab serve` and with it the NBD server and OpenSSL; the
//! Python wheel builds without it so that it installs with only Python and Rust.

#[macro_use]
mod out;
mod analyze;
mod args;
mod cli;
mod delegate;
mod demo;
mod handoff;
mod pbr;
mod probe;
mod run;
#[cfg(feature = "serve")]
mod serve;
mod suite;
mod svg;
mod table;

use std::io::IsTerminal;

use clap::{CommandFactory, FromArgMatches};
use nandlab_core::PRESETS;
use nandlab_run::{load_config, prepare};

use args::{BenchSection, ConfigArgs};
use cli::{Cli, Command};
use handoff::Handoff;
pub use handoff::ReportJob;

/// What `nandlab serve` says in a build without the `serve` feature.
#[cfg(not(feature = "serve"))]
const NO_SERVE: &str = "this nandlab has no `serve`: it was built without OpenSSL (as the \
Python wheel is); for the full binary run `make build` in the source tree (target/release/nandlab) \
or `cargo install --path crates/nandlab-cli`";

/// The `nandlab` binary: runs the command line `argv` (the arguments after the program name) to
/// the end and returns the process exit status: 0 on success, 2 on a usage or run error (one
/// line on stderr), 141 when standard output was closed, or the status of the Python process a
/// Python subcommand ran in. The Python interpreter is checked before the command runs, so that
/// a long run is not lost to a missing Python.
pub fn main_with_args(argv: &[String]) -> u8 {
    let command = match parse(argv) {
        Ok(command) => command,
        Err(status) => return status,
    };
    let python = match command.python_part().map(delegate::python_with_nandlab) {
        Some(Err(message)) => return fail(message),
        Some(Ok(python)) => Some(python),
        None => None,
    };
    let handoff = match execute(command) {
        Ok(handoff) => handoff,
        Err(message) => return fail(message),
    };
    match (handoff, python) {
        (None, _) => 0,
        (Some(handoff), Some(python)) => delegate::hand_off(&python, handoff).unwrap_or_else(fail),
        (Some(_), None) => {
            fail("internal error: a Python part `Command::python_part` does not name".into())
        }
    }
}

/// `nandlab._native.cli`: runs `argv` as `main_with_args` does, except the Python part: it
/// returns the exit status and, for `run --report FILE.html` that succeeded, the report for the
/// caller to write. `sweep` and `report` are refused (the Python CLI runs them itself).
pub fn main_in_python(argv: &[String]) -> (u8, Option<ReportJob>) {
    let command = match parse(argv) {
        Ok(command) => command,
        Err(status) => return (status, None),
    };
    match execute(command) {
        Ok(None) => (0, None),
        Ok(Some(Handoff::Report(job))) => (0, Some(job)),
        Ok(Some(Handoff::Command { name, .. })) => (
            fail(format!(
                "`nandlab {name}` runs in Python: `python -m nandlab {name}` (nandlab._cli.main)"
            )),
            None,
        ),
        Err(message) => (fail(message), None),
    }
}

/// Parses `argv`; `Err` is the exit status once clap has printed the help or the version (0)
/// or a usage error (2: `error: ...`, the usage line, and a pointer to `--help`).
fn parse(argv: &[String]) -> Result<Command, u8> {
    let words = std::iter::once("nandlab").chain(argv.iter().map(String::as_str));
    let parsed = cli::grammar()
        .try_get_matches_from(words)
        .and_then(|matches| Cli::from_arg_matches(&matches));
    match parsed {
        Ok(Cli { command: Some(command) }) => Ok(command),
        Ok(Cli { command: None }) => {
            let help = Cli::command().render_help();
            Err(print_or_fail(&styled(&help), 0))
        }
        Err(e) if e.use_stderr() => {
            let _ = e.print();
            Err(u8::try_from(e.exit_code()).unwrap_or(2))
        }
        // --help and --version: standard output, whose failures are reported as any other's.
        Err(e) => Err(print_or_fail(&styled(&e.render()), 0)),
    }
}

/// Help text with its styles on a terminal, plain otherwise.
fn styled(text: &clap::builder::StyledStr) -> String {
    if std::io::stdout().is_terminal() {
        text.ansi().to_string()
    } else {
        text.to_string()
    }
}

fn print_or_fail(text: &str, status: u8) -> u8 {
    out::print(text).map_or_else(fail, |()| status)
}

/// The exit status of a failed command, once its message is on stderr: 141 for a closed
/// standard output (nothing printed), else 2 with `nandlab: error: MESSAGE`.
fn fail(message: String) -> u8 {
    if message == out::CLOSED {
        return out::CLOSED_STATUS;
    }
    out::note(&format!("nandlab: error: {message}\n"));
    2
}

/// Runs the Rust part of a parsed command and returns its Python part, if it has one.
fn execute(command: Command) -> Result<Option<Handoff>, String> {
    match command {
        Command::Run(args) => return Ok(run::run_command(&args)?.map(Handoff::Report)),
        Command::Sweep(rest) => {
            return Ok(Some(Handoff::Command { name: "sweep", args: rest.args }))
        }
        Command::Report(rest) => {
            return Ok(Some(Handoff::Command { name: "report", args: rest.args }))
        }
        Command::Version => outln!("{}", nandlab_version::VERSION_STRING),
        Command::Presets => presets(),
        Command::PrintConfig(args) if args.keys => {
            nandlab_core::config_keys().iter().try_for_each(|k| outln!("{k}"))
        }
        Command::PrintConfig(args) => print_config(&args.config),
        Command::Demo(args) => demo::demo(args.quick),
        Command::Bench(args) => {
            demo::bench(args.blocks, args.passes, args.only.map(BenchSection::name))
        }
        #[cfg(feature = "serve")]
        Command::Serve(args) => serve::serve(&args),
        #[cfg(not(feature = "serve"))]
        Command::Serve(_) => Err(NO_SERVE.to_string()),
        Command::Analyze(args) => analyze::analyze(&args),
        Command::Suite(args) => suite::suite(&args),
        Command::Pbr(args) => pbr::pbr(&args),
        Command::Probe(args) => probe::probe(&args),
    }?;
    Ok(None)
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

fn print_config(args: &ConfigArgs) -> Result<(), String> {
    let config = load_config(args.config.as_deref(), &args.overrides).map_err(|e| e.to_string())?;
    let prepared = prepare(&config).map_err(|e| e.to_string())?;
    let text = toml::to_string(&prepared.resolved.config).map_err(|e| e.to_string())?;
    outp!("{text}")?;
    let g = prepared.resolved.geometry;
    let memory = nandlab_core::estimate_memory(&prepared.resolved, false);
    outln!(
        "# estimated memory: {} ({})",
        nandlab_core::human_bytes(memory.total_bytes()),
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
