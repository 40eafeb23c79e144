//! What the Rust side of a command leaves to Python. Three commands have a part written in
//! Python (it needs pandas, Parquet, matplotlib and process pools): `sweep` and `report` are
//! Python's entirely, and `run --report FILE.html` renders its result as HTML there. The command
//! returns that part as a `Handoff` instead of doing it, and the caller crosses to Python once:
//! the `nandlab` binary in one child process (`delegate.rs`); inside Python
//! (`nandlab._native.cli`) by returning it to the calling Python code (`nandlab._cli`), which
//! also runs `sweep` and `report` itself before any Rust is involved.

use std::path::PathBuf;

/// The Python part of a command.
#[derive(Debug)]
pub enum Handoff {
    /// `nandlab sweep|report ARGS...`: the whole command, run as
    /// `python -m nandlab SUBCOMMAND ARGS...` with the arguments verbatim.
    Command { name: &'static str, args: Vec<String> },
    /// `nandlab run --report FILE.html`: the run is done; what is left is
    /// `nandlab report - --out FILE.html` with the result's JSON as its input.
    Report(ReportJob),
}

/// The HTML report of one run, for Python's `nandlab report`.
#[derive(Debug)]
pub struct ReportJob {
    /// The result, as `nandlab run --json` writes it.
    pub json: String,
    /// The HTML file to write.
    pub html: PathBuf,
    /// The run wrote its JSON to standard output (`--json -`): the report's own output goes to
    /// standard error, so that standard output stays that one JSON document.
    pub json_on_stdout: bool,
}
