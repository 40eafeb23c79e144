//! The flag groups several subcommands share (clap's derive API, flattened into each
//! subcommand's own struct) and the value checks of more than one module. Each subcommand's
//! flags are a struct beside its code (`run::RunArgs`, `serve::ServeArgs`, ...); `cli.rs` joins
//! them into the command line.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

/// `[CONFIG.toml] [--set key=value]...`: the configuration of a run or a served drive.
#[derive(Args, Debug)]
pub struct ConfigArgs {
    /// Configuration file (TOML); every key has a default
    #[arg(value_name = "CONFIG.toml")]
    pub config: Option<PathBuf>,
    /// Set a config key, over the file (repeatable)
    #[arg(short = 's', long = "set", value_name = "KEY=VALUE")]
    pub overrides: Vec<String>,
}

/// `print-config`: the resolved configuration, or (`--keys`) every key one may hold.
#[derive(Args, Debug)]
pub struct PrintConfigArgs {
    #[command(flatten)]
    pub config: ConfigArgs,
    /// List every key a configuration may hold (each policy's parameters included), one per
    /// line, instead of resolving one
    #[arg(long)]
    pub keys: bool,
}

/// `--json PATH|- --quiet`: where a command's JSON report goes, and its progress output.
#[derive(Args, Debug)]
pub struct OutputArgs {
    /// Write the JSON report to PATH (`-`: standard output)
    #[arg(long, value_name = "PATH|-")]
    pub json: Option<PathBuf>,
    /// No progress output on standard error
    #[arg(short, long)]
    pub quiet: bool,
}

/// The arguments of a subcommand that another program parses (`sweep` and `report`: the Python
/// CLI): every one after the subcommand, verbatim, `--help` included.
#[derive(Args, Debug)]
#[command(disable_help_flag = true)]
pub struct Unparsed {
    /// The subcommand's arguments (`nandlab SUBCOMMAND --help` lists them)
    #[arg(num_args = 0.., trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<String>,
}

/// `demo [--quick]`.
#[derive(Args, Debug)]
pub struct DemoArgs {
    /// A smaller device and fewer passes: seconds instead of minutes
    #[arg(long)]
    pub quick: bool,
}

/// `bench [--blocks N] [--passes P] [--only SECTION]`.
#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Erase blocks of the page and hybrid sections' device
    #[arg(long, value_name = "N", default_value_t = 65_536)]
    pub blocks: u32,
    /// Writes ÷ logical pages of the page and hybrid sections
    #[arg(long, value_name = "P", default_value_t = 4.0)]
    pub passes: f64,
    /// Run only this section: page, hybrid, buffer, parallel, analyze, placement, counts or trace
    #[arg(long, value_name = "SECTION", hide_possible_values = true)]
    pub only: Option<BenchSection>,
}

/// A section of `nandlab bench`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BenchSection {
    // The page-mapped FTL; the hybrid FTLs (BAST, SAST, FAST); the RAM buffers; the parallel
    // engine on the MQSim-comparable benchmark; trace analysis; each data placement's cost.
    Page,
    Hybrid,
    Buffer,
    Parallel,
    Analyze,
    Placement,
    // Counting speed beside the C yardstick (`run.timing` on and off).
    Counts,
    // Trace parsing beside the replay it feeds.
    Trace,
}

impl BenchSection {
    /// The name `--only` takes.
    pub fn name(self) -> &'static str {
        match self {
            BenchSection::Page => "page",
            BenchSection::Hybrid => "hybrid",
            BenchSection::Buffer => "buffer",
            BenchSection::Parallel => "parallel",
            BenchSection::Analyze => "analyze",
            BenchSection::Placement => "placement",
            BenchSection::Counts => "counts",
            BenchSection::Trace => "trace",
        }
    }
}

/// The value of a count that must be at least one (`--repeats`, `serve --max-connections`).
pub fn at_least_one(v: &str) -> Result<usize, String> {
    v.parse().ok().filter(|&n| n >= 1).ok_or_else(|| "needs a whole number >= 1".to_string())
}

/// The TARGET of `pbr` and `probe`, and its forms (their help's closing text).
pub const TARGET_HELP: &str = "What to measure (the forms are below)";
pub const TARGET_FORMS: &str = "\
TARGET is one of:
  sim:[CONFIG.toml]                  the simulator, configured by the file and --set
  nbd://HOST[:PORT][/EXPORT]         an NBD server over TCP
  nbd+unix:///[EXPORT]?socket=PATH   an NBD server on a Unix socket
  PATH                               a block device or file (overwritten: needs --destroy-data)";

/// `--set` of `pbr` and `probe`.
pub const TARGET_SET_HELP: &str = "Set a config key of a sim: target (repeatable)";
