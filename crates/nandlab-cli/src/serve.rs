//! `nandlab serve`: open or create the image, then serve it over NBD until SIGTERM/SIGINT.

use std::net::SocketAddr;

use nandlab_run::load_config;
use nandlab_serve::{resolve, Listen, ServeOptions, SimEngine, DEFAULT_PORT};

use crate::args::Args;

pub fn serve(args: &Args) -> Result<(), String> {
    let image = args.image.as_deref().expect("args checked --image");
    let config = load_config(args.config.as_deref(), &args.overrides).map_err(|e| e.to_string())?;
    let resolved = resolve(&config, image).map_err(|e| e.to_string())?;
    let listen = match (&args.unix, &args.listen) {
        (Some(path), _) => Listen::Unix(path.clone()),
        (None, Some(addr)) => Listen::Tcp(
            addr.parse::<SocketAddr>()
                .map_err(|e| format!("--listen {addr:?}: {e} (expected e.g. 127.0.0.1:10809)"))?,
        ),
        (None, None) => Listen::Tcp(SocketAddr::from(([127, 0, 0, 1], DEFAULT_PORT))),
    };
    let g = resolved.geometry;
    let emulate = resolved.config.serve.emulate_latency;
    let engine =
        SimEngine::open(resolved, image, args.stats_json.clone()).map_err(|e| e.to_string())?;
    eprintln!(
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
    );
    let where_ = match &listen {
        Listen::Tcp(a) => format!("nbd://{a}"),
        Listen::Unix(p) => format!("nbd+unix:///?socket={}", p.display()),
    };
    eprintln!("nandlab serve: listening on {where_} (SIGTERM or Ctrl-C stops cleanly)");
    let options =
        ServeOptions { listen, tick: std::time::Duration::from_millis(100), handle_signals: true };
    let report = nandlab_serve::serve(Box::new(engine), options).map_err(|e| e.to_string())?;
    eprintln!(
        "nandlab serve: stopped after {} connections, {} requests, {} protocol errors",
        report.connections, report.requests, report.protocol_errors
    );
    Ok(())
}
