//! Configuration parsing as `nandlab run -c FILE --set key=value...` does it
//! (`nandlab_run::load_config`: TOML text, then the overrides, then `Config::from_value`), or as
//! the Python front end does it (`Config::from_json`); then `resolve`, the memory estimate and
//! the memory check. Errors are fine; a panic (overflow checks are on) is a finding. Also
//! checked: a resolved config resolves again to itself, directly and through its TOML value
//! (every result records its resolved config so that it can be re-run).
//!
//! Input: byte 0 = mode (bit 0: JSON instead of TOML), then UTF-8 text; NUL bytes split it
//! into the file text and up to 16 `key=value` overrides.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nandlab_core::estimate_memory;
use nandlab_core::{apply_overrides, Config};
use nandlab_run::memory::{check_against, MemoryLimit};

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let Ok(text) = std::str::from_utf8(rest) else { return };
    let mut parts = text.split('\0');
    let file = parts.next().unwrap_or("");
    let overrides: Vec<String> = parts.take(16).map(str::to_string).collect();

    let config = if mode & 1 == 1 {
        let Ok(c) = Config::from_json(file) else { return };
        let mut value = c.to_value();
        if apply_overrides(&mut value, &overrides).is_err() {
            return;
        }
        match Config::from_value(value) {
            Ok(c) => c,
            Err(_) => return,
        }
    } else {
        // `load_config` step by step.
        let mut value: toml::Value = match toml::from_str(file) {
            Ok(v) => v,
            Err(e) => {
                let message = nandlab_core::toml_error_message(file, &e);
                assert!(!message.is_empty());
                assert!(Config::from_toml(file, "fuzz.toml").is_err());
                return;
            }
        };
        let direct = Config::from_toml(file, "fuzz.toml");
        if apply_overrides(&mut value, &overrides).is_err() {
            return;
        }
        let parsed = Config::from_value(value);
        if overrides.is_empty() {
            assert_eq!(parsed.is_ok(), direct.is_ok(), "from_toml and load_config disagree");
        }
        match parsed {
            Ok(c) => c,
            Err(_) => return,
        }
    };

    let Ok(mut r) = config.resolve() else { return };
    let again = r.config.resolve().unwrap_or_else(|e| {
        panic!("a resolved config does not resolve again: {e}\n{:#?}", r.config)
    });
    assert_eq!(again.config, r.config, "resolving twice changed the config");
    assert_eq!(again.geometry, r.geometry);
    let reparsed = Config::from_value(r.config.to_value())
        .unwrap_or_else(|e| panic!("a resolved config does not parse back: {e}"));
    assert_eq!(reparsed, r.config, "the TOML value of a resolved config parses differently");

    let limit = MemoryLimit { bytes: 2 << 30, source: "fuzz".into() };
    for served in [false, true] {
        r.served = served;
        let e = estimate_memory(&r, served);
        let _ = e.total_bytes();
        let _ = e.describe();
        let _ = check_against(&r, served, &limit);
    }
});
