//! `nandlab suite NAME --out TRACE.csv`: writes a benchmark suite's trace (benchmarks paper §5.2,
//! docs/PAPERS.md; `nandlab_trace::suites`) and prints its analysed figures beside the targets.

use std::path::PathBuf;

use clap::builder::PossibleValuesParser;
use clap::Args;
use nandlab_core::human_bytes;
use nandlab_run::suite::{suite_params, write_suite};
use nandlab_trace::suites::SUITE_NAMES;

use crate::args::OutputArgs;
use crate::table::Table;

/// `suite NAME --out TRACE.csv [--set param=value]... [--json PATH|-] [--quiet]`.
#[derive(Args, Debug)]
pub struct SuiteArgs {
    /// The suite
    #[arg(value_name = "NAME", value_parser = PossibleValuesParser::new(SUITE_NAMES))]
    pub name: String,
    /// The trace file to write (MSR CSV)
    #[arg(long, value_name = "TRACE.csv")]
    pub out: PathBuf,
    /// Set a suite parameter (repeatable), e.g. write_bytes=1073741824
    #[arg(short = 's', long = "set", value_name = "PARAM=VALUE")]
    pub overrides: Vec<String>,
    #[command(flatten)]
    pub output: OutputArgs,
}

pub fn suite(args: &SuiteArgs) -> Result<(), String> {
    let (name, out) = (args.name.as_str(), args.out.as_path());
    let params = suite_params(name, &args.overrides)?;
    let report = write_suite(params, out)?;
    let to_stdout = crate::out::json(args.output.json.as_deref(), &report.to_json_value())?;
    if to_stdout || args.output.quiet {
        return Ok(());
    }
    let a = &report.analysis.analysis;
    let p = &report.params;
    let pct = |x: f64| format!("{:.1} %", 100.0 * x);
    let mut t = Table::new(&["figure", "target", "trace"]);
    t.row(vec!["rewrite ratio".into(), pct(p.rewrite_ratio), pct(a.rewrite_ratio())]);
    t.row(vec!["sequential ratio".into(), pct(p.sequential_ratio), pct(a.sequential_ratio())]);
    t.row(vec!["alignment ratio".into(), pct(p.alignment_ratio), pct(a.alignment_ratio())]);
    t.row(vec!["typical request".into(), String::new(), human_bytes(a.request_bytes_typical())]);
    t.row(vec!["written".into(), human_bytes(p.write_bytes), human_bytes(a.write_bytes)]);
    let (suite, reason) = a.suite();
    t.row(vec!["suite".into(), name.into(), suite.name().into()]);
    outln!("{} (MSR CSV, {} writes)", out.display(), a.write_requests)?;
    outp!("{}", t.render())?;
    outln!("why: {reason}")?;
    Ok(())
}
