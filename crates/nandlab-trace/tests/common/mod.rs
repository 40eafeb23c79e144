//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use nandlab_trace::{open, TraceOptions, TraceRecord};

/// Writes `content` to a fresh file under Cargo's per-target temp dir.
pub fn write_tmp(name: &str, content: &[u8]) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("nandlab-trace-tests");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, content).unwrap();
    path
}

/// A fixture shipped in tests/fixtures/.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

/// A sample under /work/shared/traces (../../../shared/traces from the crate),
/// or None (with a printed note) when it is not available.
pub fn shared_trace(rel: &str) -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces");
    let path = root.join(rel);
    if path.is_file() {
        Some(path)
    } else {
        eprintln!("note: skipping, {} is not available", path.display());
        None
    }
}

/// Reads every record, panicking on an error (tests only).
pub fn read_all(path: &Path, options: &TraceOptions) -> Vec<TraceRecord> {
    open(path, options)
        .unwrap_or_else(|e| panic!("open: {e}"))
        .map(|r| r.unwrap_or_else(|e| panic!("record: {e}")))
        .collect()
}

/// Gzip-compresses `data`.
pub fn gzip(data: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(data).unwrap();
    enc.finish().unwrap()
}

/// An SRT file: `header` text, the form feed ending it, then `records` (each a list of
/// big-endian 32-bit words).
pub fn srt_file(header: &str, records: &[Vec<u32>]) -> Vec<u8> {
    let mut out = header.as_bytes().to_vec();
    out.push(0x0C);
    for w in records.iter().flatten() {
        out.extend_from_slice(&w.to_be_bytes());
    }
    out
}
