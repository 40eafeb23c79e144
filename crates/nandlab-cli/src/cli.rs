//! The command line's grammar (clap's derive API): `Cli` and its subcommands, each a struct of
//! only its own flags (in the subcommand's module; shared groups in `args.rs`). Parsing only:
//! `lib.rs` runs the parsed command.

use clap::{CommandFactory, Parser, Subcommand};

use crate::analyze::AnalyzeArgs;
use crate::args::{BenchArgs, DemoArgs, PrintConfigArgs, Unparsed};
use crate::pbr::PbrArgs;
use crate::probe::ProbeArgs;
use crate::run::RunArgs;
use crate::suite::SuiteArgs;

/// `serve`'s flags; a build without the `serve` feature takes any arguments and refuses them
/// all with one line, so that `--image` missing or the like cannot hide why.
#[cfg(feature = "serve")]
type ServeArgs = crate::serve::ServeArgs;
#[cfg(not(feature = "serve"))]
type ServeArgs = Unparsed;

#[cfg(feature = "serve")]
const SERVE_ABOUT: &str = "Serve the simulated drive over NBD, on a persistent NAND image";
#[cfg(not(feature = "serve"))]
const SERVE_ABOUT: &str = "Serve the drive over NBD: not in this build (no OpenSSL)";

const AFTER_HELP: &str = "\
Every config key has a default; `nandlab print-config` shows them all, resolved.
`nandlab --version` prints `nandlab X.Y.Z (COMMIT)`, the git commit of the build (`-dirty` with
uncommitted changes): the string every result records as its `version`.
`sweep` and `report` (and the HTML of `run --report`) are written in Python: the binary runs
them with $NANDLAB_PYTHON, else the repository's .venv/bin/python, else python3. `python -m
nandlab` and the `nandlab` console script of `pip install .` are this CLI without `serve`.

Examples:
  nandlab run --set workload.kind=hotcold --set ftl.placement=dac --set ftl.cleaning=cat
  nandlab run --set workload.kind=trace --set workload.path=trace.csv.gz --json out.json
  nandlab sweep --grid ftl.cleaning=greedy,cat --grid ftl.regions=1,2,4 --out sweep/";

/// nandlab — a flash-storage laboratory.
#[derive(Parser, Debug)]
#[command(
    name = "nandlab",
    version = version(),
    after_help = AFTER_HELP,
    subcommand_value_name = "SUBCOMMAND",
    subcommand_help_heading = "Subcommands"
)]
pub struct Cli {
    // None (no arguments at all): the help is printed.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// What `--version` prints after the program name: `X.Y.Z (COMMIT)`, so that the line is
/// `nandlab_version::VERSION_STRING`.
fn version() -> &'static str {
    let v = nandlab_version::VERSION_STRING;
    v.strip_prefix("nandlab ").unwrap_or(v)
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run one simulation and print its metrics (or write them as JSON)
    Run(RunArgs),
    /// Print every config key, resolved, and the memory estimate
    PrintConfig(PrintConfigArgs),
    /// List the device presets and their geometry and timing
    Presets,
    /// Run the built-in experiment (the DAC paper's table)
    Demo(DemoArgs),
    /// Measure the simulator's speed
    Bench(BenchArgs),
    #[command(about = SERVE_ABOUT)]
    Serve(ServeArgs),
    /// Characterise a block trace (rewrite, sequential, alignment ratios, ...)
    Analyze(AnalyzeArgs),
    /// Write a benchmark suite's trace (MSR CSV) and print its figures
    Suite(SuiteArgs),
    /// Replay a trace's writes against a target, timing each (Per-Byte-Response)
    Pbr(PbrArgs),
    /// Detect a target's geometry: page, block and zone sizes, parallel units
    Probe(ProbeArgs),
    /// Run a resumable sweep into a result store (in Python: see its --help)
    Sweep(Unparsed),
    /// Write an HTML report of a run, sweep or table (in Python: see its --help)
    Report(Unparsed),
    /// Print the version, as --version does
    #[command(hide = true)]
    Version,
}

/// The grammar as `nandlab` parses it: `Cli`'s, with a flag given twice taking its last value
/// (`--set` and `--only` add up), as scripts that append flags expect.
pub fn grammar() -> clap::Command {
    Cli::command().mut_subcommands(|sub| sub.args_override_self(true))
}

impl Command {
    /// The part of the command written in Python, named for messages (`handoff.rs`).
    pub fn python_part(&self) -> Option<&'static str> {
        match self {
            Command::Sweep(_) => Some("sweep"),
            Command::Report(_) => Some("report"),
            Command::Run(r) if r.report.is_some() => Some("run --report"),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::BenchSection;
    use clap::error::ErrorKind;
    use clap::FromArgMatches;

    fn parse(argv: &[&str]) -> Result<Command, clap::Error> {
        let words = std::iter::once("nandlab").chain(argv.iter().copied());
        let cli = Cli::from_arg_matches(&grammar().try_get_matches_from(words)?)?;
        Ok(cli.command.expect("a subcommand"))
    }

    #[test]
    fn the_grammar_is_consistent() {
        grammar().debug_assert();
    }

    #[test]
    fn a_flag_given_twice_takes_its_last_value() {
        let argv = ["run", "-q", "--quiet", "--json", "a", "--json", "b", "-s", "x=1", "-s", "y=2"];
        let Command::Run(r) = parse(&argv).unwrap() else { panic!("not run") };
        assert!(r.output.quiet);
        assert_eq!(r.output.json.as_deref(), Some(std::path::Path::new("b")));
        assert_eq!(r.config.overrides, ["x=1", "y=2"]);
        let argv = ["probe", "sim:", "--only", "page", "--only", "zone,block"];
        let Command::Probe(p) = parse(&argv).unwrap() else { panic!("not probe") };
        use crate::probe::Probe;
        assert_eq!(p.only, [Probe::Page, Probe::Zone, Probe::Block]);
        let Command::Bench(b) = parse(&["bench", "--only", "page", "--only", "buffer"]).unwrap()
        else {
            panic!("not bench")
        };
        assert_eq!(b.only, Some(BenchSection::Buffer));
    }

    #[test]
    fn a_flag_of_another_subcommand_is_an_unexpected_argument() {
        for argv in [
            &["run", "--stall-timeout-s", "5"][..],
            &["run", "--plots", "x"],
            &["presets", "--report", "x.html"],
            &["print-config", "--json", "-"],
            &["bench", "--quick"],
            &["probe", "sim:", "--trace", "t.csv"],
            &["analyze", "t.csv", "--destroy-data"],
        ] {
            let e = parse(argv).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::UnknownArgument, "{argv:?}");
            assert_eq!(e.exit_code(), 2);
            let flag = argv.iter().find(|a| a.starts_with("--")).unwrap();
            assert!(e.to_string().contains(&format!("unexpected argument '{flag}'")), "{e}");
        }
    }

    #[test]
    fn shared_flags_parse_in_both_spellings() {
        let Command::Run(r) =
            parse(&["run", "c.toml", "-s", "a=1", "--set=b=2", "--json", "-", "-q"]).unwrap()
        else {
            panic!("not run")
        };
        assert_eq!(r.config.config.as_deref(), Some(std::path::Path::new("c.toml")));
        assert_eq!(r.config.overrides, ["a=1", "b=2"]);
        assert_eq!(r.output.json.as_deref(), Some(std::path::Path::new("-")));
        assert!(r.output.quiet && r.report.is_none());
    }

    #[test]
    fn bench_and_probe_only_name_their_own_sections() {
        let Command::Bench(b) = parse(&["bench", "--only", "parallel"]).unwrap() else { panic!() };
        assert_eq!((b.blocks, b.passes, b.only), (65_536, 4.0, Some(BenchSection::Parallel)));
        assert!(parse(&["bench", "--only", "zone"]).is_err());
        let Command::Probe(p) = parse(&["probe", "sim:", "--only", "page,zone"]).unwrap() else {
            panic!()
        };
        assert_eq!(p.only, [crate::probe::Probe::Page, crate::probe::Probe::Zone]);
        let e = parse(&["probe", "sim:", "--only", "cache"]).unwrap_err();
        assert!(e.to_string().contains("--only"), "{e}");
        let e = parse(&["probe", "sim:", "--repeats", "0"]).unwrap_err();
        assert!(e.to_string().contains("--repeats"), "{e}");
    }

    #[test]
    fn python_subcommands_take_their_arguments_verbatim() {
        let rest = ["--out", "d", "--help", "", "two words", "-x", "--", "--set=a=1"];
        for name in ["sweep", "report"] {
            let mut argv = vec![name];
            argv.extend(rest);
            let (Command::Sweep(u) | Command::Report(u)) = parse(&argv).unwrap() else {
                panic!("{name}")
            };
            assert_eq!(u.args, rest, "{name}");
        }
        let Command::Sweep(u) = parse(&["sweep"]).unwrap() else { panic!() };
        assert!(u.args.is_empty());
        let Command::Report(u) = parse(&["report", "-q", "--title", "t"]).unwrap() else {
            panic!()
        };
        assert_eq!(u.args, ["-q", "--title", "t"]);
    }

    #[test]
    fn run_report_is_the_only_python_part_of_run() {
        assert_eq!(parse(&["run"]).unwrap().python_part(), None);
        let run = parse(&["run", "--report", "r.html"]).unwrap();
        assert_eq!(run.python_part(), Some("run --report"));
        assert_eq!(parse(&["sweep", "--out", "d"]).unwrap().python_part(), Some("sweep"));
    }

    #[cfg(feature = "serve")]
    #[test]
    fn serve_limit_flags_parse_and_name_themselves_when_wrong() {
        let serve = |extra: &[&str]| {
            let mut argv = vec!["serve", "--image", "x.img"];
            argv.extend(extra);
            match parse(&argv) {
                Ok(Command::Serve(s)) => Ok(s),
                Ok(other) => panic!("{other:?}"),
                Err(e) => Err(e.to_string()),
            }
        };
        let a = serve(&["--max-handshakes", "8", "--handshake-timeout-s", "2.5"]).unwrap();
        assert_eq!((a.max_handshakes, a.handshake_timeout_s), (8, 2.5));
        let a = serve(&["--stall-timeout-s", "60"]).unwrap();
        assert_eq!(a.stall_timeout_s, 60.0);
        let defaults = nandlab_nbd::ServeOptions::default();
        assert_eq!(a.max_connections, defaults.max_connections);
        assert_eq!(a.handshake_timeout_s, defaults.negotiation_timeout.as_secs_f64());
        for (flag, bad) in [
            ("--max-handshakes", "0"),
            ("--max-handshakes", "many"),
            ("--handshake-timeout-s", "0"),
            ("--handshake-timeout-s", "-1"),
            ("--stall-timeout-s", "NaN"),
            ("--stall-timeout-s", "inf"),
            ("--stall-timeout-s", "1e9"),
            ("--tls", "maybe"),
        ] {
            let e = serve(&[flag, bad]).unwrap_err();
            assert!(e.contains(flag) && e.contains(bad), "{flag} {bad}: {e}");
        }
        let e = serve(&["--listen", "127.0.0.1:1", "--unix", "s.sock"]).unwrap_err();
        assert!(e.contains("--listen") && e.contains("--unix"), "{e}");
        let e = parse(&["serve"]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::MissingRequiredArgument);
    }
}
