//! `nandlab serve`: check the serving options (TLS credentials, the listening policy, the stats
//! file, that a `--read-only` image exists), bind, open or create the image, then serve it over
//! NBD until SIGTERM/SIGINT.
//!
//! Security defaults: loopback only; a non-loopback TCP address needs `--tls require` (or the
//! explicit `--allow-insecure-listen`), because anyone who reaches the port can read and
//! overwrite the drive and, with `--tls on`, a client (or a man in the middle) can skip TLS.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;
use nandlab_core::Geometry;
use nandlab_nbd::{Listen, ServeOptions, TlsConfig, TlsCredentials, TlsMode};
use nandlab_run::load_config;
use nandlab_serve::{resolve, SimEngine, DEFAULT_PORT};

use crate::args::{at_least_one, ConfigArgs};

/// `serve [CONFIG.toml] [--set key=value]... --image PATH [network options]`; the defaults
/// shown are `nandlab_nbd::ServeOptions::default()`'s.
#[derive(Args, Debug)]
pub struct ServeArgs {
    #[command(flatten)]
    pub config: ConfigArgs,
    /// The NAND image to serve (created, sparse, if missing)
    #[arg(long, value_name = "PATH")]
    pub image: PathBuf,
    /// TCP address (port 0: any free one)
    #[arg(long, value_name = "ADDR", conflicts_with = "unix",
          default_value_t = SocketAddr::from(([127, 0, 0, 1], DEFAULT_PORT)))]
    pub listen: SocketAddr,
    /// Unix socket to listen on, instead of TCP
    #[arg(long, value_name = "PATH")]
    pub unix: Option<PathBuf>,
    /// Keep PATH updated with the live metrics (JSON)
    #[arg(long, value_name = "PATH")]
    pub stats_json: Option<PathBuf>,
    /// Export read-only (the image must exist)
    #[arg(long)]
    pub read_only: bool,
    /// Clients served at once
    #[arg(long, value_name = "N", value_parser = at_least_one,
          default_value_t = ServeOptions::default().max_connections)]
    pub max_connections: usize,
    /// Connections in the handshake at once
    #[arg(long, value_name = "N", value_parser = at_least_one,
          default_value_t = ServeOptions::default().max_handshakes)]
    pub max_handshakes: usize,
    /// Seconds a client has to finish its handshake
    #[arg(long, value_name = "S", value_parser = seconds, allow_negative_numbers = true,
          default_value_t = ServeOptions::default().negotiation_timeout.as_secs_f64())]
    pub handshake_timeout_s: f64,
    /// Seconds before a stalled client is closed
    #[arg(long, value_name = "S", value_parser = seconds, allow_negative_numbers = true,
          default_value_t = ServeOptions::default().stall_timeout.as_secs_f64())]
    pub stall_timeout_s: f64,
    /// Microseconds a connection polls for its next request before sleeping (0: never;
    /// default 50, or 0 with serve.emulate_latency)
    #[arg(long, value_name = "US")]
    pub busy_poll_us: Option<u64>,
    /// TLS: off, on (optional) or require; credentials alone: require
    #[arg(long, value_name = "MODE", value_parser = ["off", "on", "require"],
          hide_possible_values = true)]
    pub tls: Option<String>,
    /// Certificates: DIR/server-cert.pem and DIR/server-key.pem
    #[arg(long, value_name = "DIR")]
    pub tls_certificates: Option<PathBuf>,
    /// Check client certificates against DIR/ca-cert.pem
    #[arg(long)]
    pub tls_verify_peer: bool,
    /// Pre-shared keys: FILE of username:hexkey lines
    #[arg(long, value_name = "FILE")]
    pub tls_psk: Option<PathBuf>,
    /// Serve a non-loopback TCP address without --tls require
    #[arg(long)]
    pub allow_insecure_listen: bool,
}

/// Longest timeout accepted, seconds (a day): beyond it a timeout is no protection at all, and
/// far beyond it `Duration` would overflow.
const MAX_TIMEOUT_S: f64 = 86_400.0;

/// Parses the value of a timeout flag: seconds, a number in (0, 86400].
fn seconds(v: &str) -> Result<f64, String> {
    match v.parse::<f64>() {
        Ok(s) if s > 0.0 && s <= MAX_TIMEOUT_S => Ok(s),
        _ => Err(format!("needs a number of seconds in (0, {MAX_TIMEOUT_S}]")),
    }
}

/// The TLS set-up the flags ask for: `None` is `--tls off`.
fn tls_config(args: &ServeArgs) -> Result<Option<TlsConfig>, String> {
    let creds_given = args.tls_certificates.is_some() || args.tls_psk.is_some();
    // Credentials without --tls mean TLS is wanted; `require` is the mode a downgrade cannot
    // defeat (nbdkit would pick `on` here).
    let mode = match args.tls.as_deref() {
        None if creds_given => TlsMode::Require,
        None => TlsMode::Off,
        Some(s) => TlsMode::parse(s).ok_or_else(|| format!("--tls {s:?}: off, on or require"))?,
    };
    if args.tls_verify_peer && args.tls_certificates.is_none() {
        return Err(
            "--tls-verify-peer checks client certificates: it needs --tls-certificates DIR \
                    (with DIR/ca-cert.pem)"
                .into(),
        );
    }
    let credentials = match (&args.tls_certificates, &args.tls_psk) {
        (Some(_), Some(_)) => {
            return Err("give --tls-certificates DIR or --tls-psk FILE, not both".into());
        }
        (Some(dir), None) => {
            TlsCredentials::Certificates { dir: dir.clone(), verify_peer: args.tls_verify_peer }
        }
        (None, Some(file)) => TlsCredentials::Psk { file: file.clone() },
        (None, None) if mode == TlsMode::Off => return Ok(None),
        (None, None) => {
            return Err(format!(
                "--tls {} needs credentials: --tls-certificates DIR (server-cert.pem, \
                 server-key.pem) or --tls-psk FILE (username:hexkey lines)",
                args.tls.as_deref().unwrap_or("on")
            ));
        }
    };
    if mode == TlsMode::Off {
        return Err("--tls off contradicts --tls-certificates/--tls-psk; drop one of them".into());
    }
    TlsConfig::load(mode, credentials).map(Some).map_err(|e| e.to_string())
}

/// Refuses a non-loopback TCP address unless TLS is required or the user opted in.
pub fn check_listen_policy(
    listen: &Listen,
    tls: TlsMode,
    allow_insecure: bool,
) -> Result<(), String> {
    let Listen::Tcp(addr) = listen else { return Ok(()) };
    if addr.ip().is_loopback() || tls == TlsMode::Require || allow_insecure {
        return Ok(());
    }
    let why = match tls {
        TlsMode::On => "--tls on still lets clients connect in plaintext",
        _ => "without TLS anyone who can reach it can read and overwrite the drive",
    };
    Err(format!(
        "refusing to listen on {addr}, which is not a loopback address: {why}. Either use \
         --tls require with --tls-certificates DIR or --tls-psk FILE, or pass \
         --allow-insecure-listen to serve this address in plaintext anyway"
    ))
}

/// Checks at start-up that the stats file can be written the way the engine writes it (a
/// sibling `PATH.json.tmp` renamed over `PATH`), so a typo is an error now, not silence later.
pub fn check_stats_path(path: &Path) -> Result<(), String> {
    if path.is_dir() {
        return Err(format!("--stats-json {}: is a directory", path.display()));
    }
    let tmp = path.with_extension("json.tmp");
    std::fs::OpenOptions::new().write(true).create(true).truncate(true).open(&tmp).map_err(
        |e| format!("--stats-json {}: cannot write {}: {e}", path.display(), tmp.display()),
    )?;
    let _ = std::fs::remove_file(&tmp);
    Ok(())
}

/// `--read-only` serves an existing image and never creates one: a missing path (a typo, most
/// likely) would otherwise become a new blank drive that looks like the real one emptied. An
/// empty file is refused too, since the image code takes it for "create here".
pub fn check_read_only_image(image: &Path) -> Result<(), String> {
    let path = image.display();
    match std::fs::metadata(image) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(format!(
            "--image {path}: no such file, and --read-only never creates an image (check the \
             path, or drop --read-only to create a new image there)"
        )),
        Err(e) => Err(format!("--image {path}: {e}")),
        Ok(m) if m.is_dir() => Err(format!("--image {path}: is a directory")),
        Ok(m) if m.len() == 0 => Err(format!(
            "--image {path}: the file is empty, not a nandlab image, and --read-only never \
             creates one"
        )),
        Ok(_) => Ok(()),
    }
}

pub fn serve(args: &ServeArgs) -> Result<(), String> {
    let image = args.image.as_path();
    // First: a mistyped path is the likeliest error of all, and nothing below should run (or
    // create anything) on it.
    if args.read_only {
        check_read_only_image(image)?;
    }
    let config = load_config(args.config.config.as_deref(), &args.config.overrides)
        .map_err(|e| e.to_string())?;
    let resolved = resolve(&config, image).map_err(|e| e.to_string())?;
    let options = serve_options(args, resolved.config.serve.emulate_latency)?;
    let tls_mode = options.tls.as_ref().map_or(TlsMode::Off, TlsConfig::mode);
    let max_connections = options.max_connections;
    // Bind before the (possibly slow) mount: an address in use fails at once, and the address
    // printed below is the one really bound.
    let bound = nandlab_nbd::bind(options).map_err(|e| e.to_string())?;

    let g = resolved.geometry;
    let emulate = resolved.config.serve.emulate_latency;
    let engine =
        SimEngine::open(resolved, image, args.stats_json.clone()).map_err(|e| e.to_string())?;
    eprintln!("{}", mounted_line(image, &engine, &g, emulate));
    if let Some(repairs) = engine.repairs_summary() {
        eprintln!("nandlab serve: start-up repaired or completed: {repairs}");
    }
    let uri = bound.address().uri();
    let uri = match tls_mode {
        TlsMode::Off => uri,
        _ => uri.replacen("nbd", "nbds", 1),
    };
    eprintln!(
        "nandlab serve: listening on {uri} (TLS {}, {}at most {max_connections} connections; \
         SIGTERM or Ctrl-C stops cleanly)",
        match tls_mode {
            TlsMode::Off => "off",
            TlsMode::On => "on, optional",
            TlsMode::Require => "required",
        },
        if args.read_only { "read-only, " } else { "" }
    );
    let report = bound.serve(Box::new(engine)).map_err(|e| e.to_string())?;
    eprintln!(
        "nandlab serve: stopped after {} connections ({} refused for want of a slot, {} closed in \
         the handshake, {} closed for stalling), {} requests, {} protocol errors",
        report.connections,
        report.refused_connections,
        report.dropped_handshakes,
        report.stalled_connections,
        report.requests,
        report.protocol_errors
    );
    if report.engine_failed {
        return Err("the simulator panicked while serving (see above); it was not shut down \
                    cleanly, so no final checkpoint or stats were written — the image recovers \
                    on the next start like after a crash"
            .into());
    }
    Ok(())
}

/// The start-up line: the image, its geometry, how it was mounted and in how long.
fn mounted_line(image: &Path, engine: &SimEngine, g: &Geometry, emulate: bool) -> String {
    format!(
        "nandlab serve: {} ({} image, {} logical bytes, {} blocks x {} pages x {} B); {} in {:.3} s; \
         latency emulation {}",
        image.display(),
        if engine.recovered() { "existing" } else { "new" },
        g.logical_bytes(),
        g.blocks,
        g.pages_per_block,
        g.page_size_bytes,
        match (engine.recovered(), engine.mount_report().from_checkpoint) {
            (false, _) => "created".to_string(),
            (true, false) => "tables rebuilt from OOB".to_string(),
            (true, true) => format!(
                "tables rebuilt from checkpoint {} + {} rolled-forward blocks",
                engine.mount_report().checkpoint_generation,
                engine.mount_report().blocks_scanned
            ),
        },
        engine.mount_seconds(),
        if emulate { "on" } else { "off" }
    )
}

/// The server's options from the flags, checked: the listening address, TLS (credentials
/// loaded), the listening policy and the stats file. Busy polling is off by default when
/// replies wait for their simulated completion: the client cannot send its next request
/// before that, so polling would only take a CPU from the thread that releases the reply and
/// from the client (on 2 cores it made the served probes' timings noisier).
fn serve_options(args: &ServeArgs, emulate_latency: bool) -> Result<ServeOptions, String> {
    let listen = match &args.unix {
        Some(path) => Listen::Unix(path.clone()),
        None => Listen::Tcp(args.listen),
    };
    let tls = tls_config(args)?;
    let tls_mode = tls.as_ref().map_or(TlsMode::Off, TlsConfig::mode);
    check_listen_policy(&listen, tls_mode, args.allow_insecure_listen)?;
    if let Some(p) = &args.stats_json {
        check_stats_path(p)?;
    }
    Ok(ServeOptions {
        listen,
        tick: Duration::from_millis(100),
        handle_signals: true,
        read_only: args.read_only,
        max_connections: args.max_connections,
        max_handshakes: args.max_handshakes,
        negotiation_timeout: Duration::from_secs_f64(args.handshake_timeout_s),
        stall_timeout: Duration::from_secs_f64(args.stall_timeout_s),
        busy_poll: args.busy_poll_us.map_or(
            if emulate_latency { Duration::ZERO } else { ServeOptions::default().busy_poll },
            Duration::from_micros,
        ),
        tls,
        ..ServeOptions::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_policy() {
        let tcp = |s: &str| Listen::Tcp(s.parse().unwrap());
        for ok in ["127.0.0.1:10809", "[::1]:10809", "127.3.4.5:1"] {
            assert!(check_listen_policy(&tcp(ok), TlsMode::Off, false).is_ok(), "{ok}");
        }
        assert!(
            check_listen_policy(&Listen::Unix("/tmp/x.sock".into()), TlsMode::Off, false).is_ok()
        );
        let e = check_listen_policy(&tcp("0.0.0.0:10809"), TlsMode::Off, false).unwrap_err();
        assert!(
            e.contains("0.0.0.0:10809")
                && e.contains("--tls require")
                && e.contains("--allow-insecure-listen"),
            "{e}"
        );
        let e = check_listen_policy(&tcp("10.0.0.1:10809"), TlsMode::On, false).unwrap_err();
        assert!(e.contains("--tls on still lets clients connect in plaintext"), "{e}");
        assert!(check_listen_policy(&tcp("0.0.0.0:1"), TlsMode::Require, false).is_ok());
        assert!(check_listen_policy(&tcp("0.0.0.0:1"), TlsMode::Off, true).is_ok());
    }

    #[test]
    fn a_read_only_image_must_exist() {
        let dir = std::env::temp_dir().join(format!("nandlab-ro-check-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let missing = dir.join("typo.img");
        let e = check_read_only_image(&missing).unwrap_err();
        assert!(e.contains(&missing.display().to_string()) && e.contains("no such file"), "{e}");
        assert!(!missing.exists());
        let empty = dir.join("empty.img");
        std::fs::write(&empty, b"").unwrap();
        assert!(check_read_only_image(&empty).unwrap_err().contains("empty"));
        assert!(check_read_only_image(&dir).unwrap_err().contains("is a directory"));
        std::fs::write(&empty, b"x").unwrap();
        assert!(check_read_only_image(&empty).is_ok());
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn stats_path_must_be_writable() {
        let dir = std::env::temp_dir();
        assert!(check_stats_path(&dir.join("nandlab-stats-ok.json")).is_ok());
        assert!(!dir.join("nandlab-stats-ok.json.tmp").exists(), "probe file left behind");
        let e = check_stats_path(Path::new("/nonexistent-dir/stats.json")).unwrap_err();
        assert!(e.contains("/nonexistent-dir/stats.json") && e.contains("cannot write"), "{e}");
        let e = check_stats_path(&dir).unwrap_err();
        assert!(e.contains("is a directory"), "{e}");
    }
}
