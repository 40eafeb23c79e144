//! Goal: `nandlab serve`'s stats file names the exact code, like a run's report: its `version`
//! is `nandlab_version::VERSION_STRING` (`nandlab X.Y.Z (COMMIT)`).
//! Method: open a `SimEngine` on a fresh temp image and read `stats_json` (no server started).

use nandlab_core::Config;
use nandlab_serve::{resolve, SimEngine};

use nandlab_testkit::Scratch;

#[test]
fn stats_record_the_version_string() {
    let dir = Scratch::new("nandlab-serve-version");
    let image = dir.join("disk.img");
    let _ = std::fs::remove_file(&image);
    let config = Config::from_overrides(&[
        "device.blocks=64",
        "device.pages_per_block=16",
        "serve.emulate_latency=false",
    ])
    .unwrap();
    let resolved = resolve(&config, &image).unwrap();
    let engine = SimEngine::open(resolved, &image, None).unwrap();
    let stats: serde_json::Value = serde_json::from_str(&engine.stats_json()).unwrap();
    assert_eq!(stats["version"], nandlab_version::VERSION_STRING);
    assert!(nandlab_version::VERSION_STRING.starts_with("nandlab "));
}
