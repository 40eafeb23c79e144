//! Goal: a report names the exact code: its `version` is `nandlab X.Y.Z (COMMIT)`
//! (`nandlab_version::VERSION_STRING`), X.Y.Z being the core's crate version, in the struct and
//! in the JSON.
//! Method: one small run.

use nandlab_run::{load_config, run_config};

#[test]
fn a_report_records_the_version_string() {
    assert_eq!(nandlab_version::CRATE_VERSION, nandlab_core::VERSION);
    let overrides = ["device.blocks=64", "device.pages_per_block=16"].map(String::from);
    let config = load_config(None, &overrides).unwrap();
    let report = run_config(&config, &mut |_, _| {}).unwrap();
    assert_eq!(report.version, nandlab_version::VERSION_STRING);
    let prefix = format!("nandlab {} (", nandlab_core::VERSION);
    assert!(report.version.starts_with(&prefix), "{}", report.version);
    let json: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
    assert_eq!(json["version"], nandlab_version::VERSION_STRING);
}
