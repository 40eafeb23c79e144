//! Argument parsing (hand-written: a handful of flags does not need a parser dependency).

use std::path::PathBuf;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    Run,
    PrintConfig,
    Presets,
    Demo,
    Bench,
    Serve,
    Analyze,
    Suite,
    Pbr,
    Probe,
    /// Runs in Python (`delegate.rs`): its arguments are `Args::passthrough`, unparsed.
    Sweep,
    /// Runs in Python, as `Sweep`.
    Report,
    Help,
    Version,
}

#[derive(Debug)]
pub struct Args {
    pub command: Command,
    pub config: Option<PathBuf>,
    pub overrides: Vec<String>,
    pub json: Option<PathBuf>,
    pub quiet: bool,
    pub quick: bool,
    pub bench_blocks: u32,
    pub bench_passes: f64,
    /// `bench --only page|hybrid|buffer|parallel|analyze`: one section of the benchmark.
    pub bench_only: Option<String>,
    pub image: Option<PathBuf>,
    pub listen: Option<String>,
    pub unix: Option<PathBuf>,
    pub stats_json: Option<PathBuf>,
    /// `serve --read-only`.
    pub read_only: bool,
    /// `serve --max-connections N`.
    pub max_connections: Option<usize>,
    /// `serve --max-handshakes N`.
    pub max_handshakes: Option<usize>,
    /// `serve --handshake-timeout-s S`.
    pub handshake_timeout_s: Option<f64>,
    /// `serve --stall-timeout-s S`.
    pub stall_timeout_s: Option<f64>,
    /// `serve --tls off|on|require` (checked to be one of those).
    pub tls: Option<String>,
    /// `serve --tls-certificates DIR`.
    pub tls_certificates: Option<PathBuf>,
    /// `serve --tls-psk FILE`.
    pub tls_psk: Option<PathBuf>,
    /// `serve --tls-verify-peer`.
    pub tls_verify_peer: bool,
    /// `serve --allow-insecure-listen`.
    pub allow_insecure_listen: bool,
    /// `analyze TRACE`.
    pub trace: Option<PathBuf>,
    /// `analyze --format F`.
    pub format: Option<String>,
    /// `analyze --device D`.
    pub device: Option<u64>,
    /// `analyze --plots DIR`.
    pub plots: Option<PathBuf>,
    /// `suite NAME`.
    pub suite: Option<String>,
    /// `suite --out PATH`, `pbr --out DIR`.
    pub out: Option<PathBuf>,
    /// `pbr TARGET`.
    pub target: Option<String>,
    /// `pbr --trace PATH`.
    pub pbr_trace: Option<PathBuf>,
    /// `pbr --destroy-data`.
    pub destroy_data: bool,
    /// `pbr --max-writes N`.
    pub max_writes: Option<u64>,
    /// `probe --only page,block,zone,parallel`.
    pub probes: Option<String>,
    /// `probe --repeats N`.
    pub repeats: Option<usize>,
    /// `run --report FILE.html`.
    pub report: Option<PathBuf>,
    /// `sweep`, `report`: every argument after the subcommand, verbatim, for the Python CLI
    /// (which has its own parser and `--help`).
    pub passthrough: Vec<String>,
}

pub fn parse(argv: &[String]) -> Result<Args, String> {
    let mut args = Args {
        command: Command::Help,
        config: None,
        overrides: Vec::new(),
        json: None,
        quiet: false,
        quick: false,
        bench_blocks: 65_536,
        bench_passes: 4.0,
        bench_only: None,
        image: None,
        listen: None,
        unix: None,
        stats_json: None,
        read_only: false,
        max_connections: None,
        max_handshakes: None,
        handshake_timeout_s: None,
        stall_timeout_s: None,
        tls: None,
        tls_certificates: None,
        tls_psk: None,
        tls_verify_peer: false,
        allow_insecure_listen: false,
        trace: None,
        format: None,
        device: None,
        plots: None,
        suite: None,
        out: None,
        target: None,
        pbr_trace: None,
        destroy_data: false,
        max_writes: None,
        probes: None,
        repeats: None,
        report: None,
        passthrough: Vec::new(),
    };
    let Some(first) = argv.first() else { return Ok(args) };
    args.command = match first.as_str() {
        "run" => Command::Run,
        "print-config" => Command::PrintConfig,
        "presets" => Command::Presets,
        "demo" => Command::Demo,
        "bench" => Command::Bench,
        "serve" => Command::Serve,
        "analyze" => Command::Analyze,
        "suite" => Command::Suite,
        "pbr" => Command::Pbr,
        "probe" => Command::Probe,
        "sweep" => Command::Sweep,
        "report" => Command::Report,
        "help" | "--help" | "-h" => Command::Help,
        "--version" | "-V" | "version" => Command::Version,
        other => return Err(format!("unknown command {other:?}")),
    };
    if matches!(args.command, Command::Sweep | Command::Report) {
        args.passthrough = argv[1..].to_vec();
        return Ok(args);
    }
    let mut it = argv[1..].iter();
    while let Some(a) = it.next() {
        let mut value =
            |flag: &str| it.next().cloned().ok_or_else(|| format!("{flag} needs a value"));
        match a.as_str() {
            "--set" | "-s" => args.overrides.push(value(a)?),
            "--json" => args.json = Some(PathBuf::from(value(a)?)),
            "--quiet" | "-q" => args.quiet = true,
            "--quick" => args.quick = true,
            "--blocks" => {
                args.bench_blocks =
                    value(a)?.parse().map_err(|_| "--blocks needs a whole number".to_string())?;
            }
            "--passes" => {
                args.bench_passes =
                    value(a)?.parse().map_err(|_| "--passes needs a number".to_string())?;
            }
            "--only" if args.command == Command::Probe => args.probes = Some(value(a)?),
            "--repeats" => {
                let v = value(a)?;
                args.repeats =
                    Some(v.parse().ok().filter(|&n| n >= 1).ok_or_else(|| {
                        format!("--repeats needs a whole number >= 1, not {v:?}")
                    })?);
            }
            "--only" => {
                let v = value(a)?;
                if !["page", "hybrid", "buffer", "parallel", "analyze"].contains(&v.as_str()) {
                    return Err(format!(
                        "--only takes page, hybrid, buffer, parallel or analyze, not {v:?}"
                    ));
                }
                args.bench_only = Some(v);
            }
            "--report" => args.report = Some(PathBuf::from(value(a)?)),
            "--image" => args.image = Some(PathBuf::from(value(a)?)),
            "--listen" => args.listen = Some(value(a)?),
            "--unix" => args.unix = Some(PathBuf::from(value(a)?)),
            "--stats-json" => args.stats_json = Some(PathBuf::from(value(a)?)),
            "--read-only" => args.read_only = true,
            "--max-connections" => {
                let v = value(a)?;
                match v.parse::<usize>() {
                    Ok(n) if n >= 1 => args.max_connections = Some(n),
                    _ => {
                        return Err(format!(
                            "--max-connections needs a whole number >= 1, not {v:?}"
                        ))
                    }
                }
            }
            "--max-handshakes" => {
                let v = value(a)?;
                match v.parse::<usize>() {
                    Ok(n) if n >= 1 => args.max_handshakes = Some(n),
                    _ => {
                        return Err(format!(
                            "--max-handshakes needs a whole number >= 1, not {v:?}"
                        ))
                    }
                }
            }
            "--handshake-timeout-s" => args.handshake_timeout_s = Some(seconds(a, &value(a)?)?),
            "--stall-timeout-s" => args.stall_timeout_s = Some(seconds(a, &value(a)?)?),
            "--tls" => {
                let v = value(a)?;
                if !["off", "on", "require"].contains(&v.as_str()) {
                    return Err(format!("--tls takes off, on or require, not {v:?}"));
                }
                args.tls = Some(v);
            }
            "--tls-certificates" => args.tls_certificates = Some(PathBuf::from(value(a)?)),
            "--tls-psk" => args.tls_psk = Some(PathBuf::from(value(a)?)),
            "--tls-verify-peer" => args.tls_verify_peer = true,
            "--allow-insecure-listen" => args.allow_insecure_listen = true,
            "--format" => args.format = Some(value(a)?),
            "--device" => {
                let v = value(a)?;
                args.device = Some(
                    v.parse().map_err(|_| format!("--device needs a whole number, not {v:?}"))?,
                );
            }
            "--plots" => args.plots = Some(PathBuf::from(value(a)?)),
            "--out" => args.out = Some(PathBuf::from(value(a)?)),
            "--trace" => args.pbr_trace = Some(PathBuf::from(value(a)?)),
            "--destroy-data" => args.destroy_data = true,
            "--max-writes" => {
                let v = value(a)?;
                args.max_writes = Some(
                    v.parse()
                        .map_err(|_| format!("--max-writes needs a whole number, not {v:?}"))?,
                );
            }
            "--help" | "-h" => args.command = Command::Help,
            s if s.starts_with("--set=") => args.overrides.push(s["--set=".len()..].to_string()),
            s if s.starts_with('-') => return Err(format!("unknown option {s:?}")),
            s if matches!(args.command, Command::Pbr | Command::Probe) => {
                if args.target.is_some() {
                    return Err(format!("unexpected argument {s:?} (one TARGET at most)"));
                }
                args.target = Some(s.to_string());
            }
            s if args.command == Command::Suite => {
                if args.suite.is_some() {
                    return Err(format!("unexpected argument {s:?} (one suite at most)"));
                }
                args.suite = Some(s.to_string());
            }
            s if args.command == Command::Analyze => {
                if args.trace.is_some() {
                    return Err(format!("unexpected argument {s:?} (one trace at most)"));
                }
                args.trace = Some(PathBuf::from(s));
            }
            s => {
                if args.config.is_some() {
                    return Err(format!("unexpected argument {s:?} (one config file at most)"));
                }
                args.config = Some(PathBuf::from(s));
            }
        }
    }
    if args.report.is_some() && args.command != Command::Run {
        return Err("--report belongs to `nandlab run`".into());
    }
    let takes_config = matches!(args.command, Command::Run | Command::PrintConfig | Command::Serve);
    if args.command == Command::Serve {
        if args.image.is_none() {
            return Err("serve needs --image PATH (created if missing)".into());
        }
        if args.listen.is_some() && args.unix.is_some() {
            return Err("give --listen or --unix, not both".into());
        }
    } else if args.image.is_some()
        || args.listen.is_some()
        || args.unix.is_some()
        || args.stats_json.is_some()
        || args.read_only
        || args.max_connections.is_some()
        || args.max_handshakes.is_some()
        || args.handshake_timeout_s.is_some()
        || args.stall_timeout_s.is_some()
        || args.tls.is_some()
        || args.tls_certificates.is_some()
        || args.tls_psk.is_some()
        || args.tls_verify_peer
        || args.allow_insecure_listen
    {
        return Err("--image, --listen, --unix, --stats-json, --read-only, --max-connections, \
                    --max-handshakes, --handshake-timeout-s, --stall-timeout-s, --tls*, \
                    --allow-insecure-listen belong to `nandlab serve`"
            .into());
    }
    if args.command == Command::Analyze {
        if args.trace.is_none() {
            return Err("analyze needs a TRACE file".into());
        }
    } else if args.command != Command::Pbr
        && (args.format.is_some() || args.device.is_some() || args.plots.is_some())
    {
        return Err("--format, --device and --plots belong to `nandlab analyze`".into());
    }
    if args.command == Command::Probe {
        if args.target.is_none() {
            return Err("probe needs a TARGET (sim:[CONFIG.toml], nbd://HOST[:PORT], \
                        nbd+unix:///?socket=PATH or a block device)"
                .into());
        }
        if args.pbr_trace.is_some() || args.format.is_some() || args.device.is_some() {
            return Err("--trace, --format and --device belong to `nandlab pbr`".into());
        }
        return Ok(args);
    } else if args.probes.is_some() || args.repeats.is_some() {
        return Err("--repeats and --only page,... belong to `nandlab probe`".into());
    }
    if args.command == Command::Pbr {
        if args.target.is_none() || args.pbr_trace.is_none() {
            return Err("pbr needs a TARGET (sim:[CONFIG.toml], nbd://HOST[:PORT], \
                        nbd+unix:///?socket=PATH or a block device) and --trace PATH"
                .into());
        }
        if args.plots.is_some() {
            return Err(
                "--plots belongs to `nandlab analyze` (pbr writes its plots to --out)".into()
            );
        }
        // Its --set values configure a sim: target; --format and --device read the trace.
        return Ok(args);
    } else if args.pbr_trace.is_some()
        || (args.destroy_data && args.command != Command::Probe)
        || args.max_writes.is_some()
    {
        return Err("--trace, --destroy-data and --max-writes belong to `nandlab pbr`".into());
    }
    if args.command == Command::Suite {
        if args.suite.is_none() || args.out.is_none() {
            return Err("suite needs a NAME (transfer, mapping, gc, buffer) and --out PATH".into());
        }
        // Its --set values are the suite's parameters.
        return Ok(args);
    } else if args.out.is_some() {
        return Err("--out belongs to `nandlab suite`".into());
    }
    if !takes_config && (args.config.is_some() || !args.overrides.is_empty()) {
        return Err("this command takes no config file or --set".into());
    }
    Ok(args)
}

/// Longest timeout accepted, seconds (a day): beyond it a timeout is no protection at all, and
/// far beyond it `Duration` would overflow.
const MAX_TIMEOUT_S: f64 = 86_400.0;

/// Parses the value of a timeout flag: seconds, a number in (0, 86400].
fn seconds(flag: &str, v: &str) -> Result<f64, String> {
    match v.parse::<f64>() {
        Ok(s) if s > 0.0 && s <= MAX_TIMEOUT_S => Ok(s),
        _ => Err(format!("{flag} needs a number of seconds in (0, {MAX_TIMEOUT_S}], not {v:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn serve(extra: &[&str]) -> Result<Args, String> {
        let mut argv = vec!["serve".to_string(), "--image".into(), "x.img".into()];
        argv.extend(extra.iter().map(|s| s.to_string()));
        parse(&argv)
    }

    #[test]
    fn serve_limit_flags_parse_and_name_themselves_when_wrong() {
        let a = serve(&["--max-handshakes", "8", "--handshake-timeout-s", "2.5"]).unwrap();
        assert_eq!((a.max_handshakes, a.handshake_timeout_s), (Some(8), Some(2.5)));
        let a = serve(&["--stall-timeout-s", "60"]).unwrap();
        assert_eq!(a.stall_timeout_s, Some(60.0));
        for (flag, bad) in [
            ("--max-handshakes", "0"),
            ("--max-handshakes", "many"),
            ("--handshake-timeout-s", "0"),
            ("--handshake-timeout-s", "-1"),
            ("--stall-timeout-s", "NaN"),
            ("--stall-timeout-s", "inf"),
            ("--stall-timeout-s", "1e9"),
        ] {
            let e = serve(&[flag, bad]).unwrap_err();
            assert!(e.contains(flag) && e.contains(bad), "{flag} {bad}: {e}");
        }
        let e = parse(&["run".into(), "--stall-timeout-s".into(), "5".into()]).unwrap_err();
        assert!(e.contains("belong to `nandlab serve`"), "{e}");
    }
}
