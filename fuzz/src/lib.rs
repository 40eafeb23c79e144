//! Helpers shared by the fuzz targets (`fuzz_targets/*.rs`).

use std::path::PathBuf;
use std::sync::OnceLock;

/// This process's scratch directory (`$TMPDIR/nandlab-fuzz-<pid>`, or under `/dev/shm` when it
/// exists: the targets rewrite small files on every execution). `fuzz/run.sh` removes the
/// directories of processes that have ended.
pub fn scratch_dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let shm = std::path::Path::new("/dev/shm");
        let base = if shm.is_dir() { shm.to_path_buf() } else { std::env::temp_dir() };
        let dir = base.join(format!("nandlab-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("cannot create the fuzz scratch directory");
        dir
    })
}

/// Whether known, reported findings should be reproduced instead of stepped around
/// (`NANDLAB_FUZZ_STRICT=1`; see fuzz/README.md "Known findings").
pub fn strict() -> bool {
    static STRICT: OnceLock<bool> = OnceLock::new();
    *STRICT.get_or_init(|| std::env::var_os("NANDLAB_FUZZ_STRICT").is_some_and(|v| v != "0"))
}

/// A little-endian byte cursor over the fuzz input that yields zeros once exhausted (so every
/// input decodes to something).
pub struct Bytes<'a> {
    data: &'a [u8],
}

impl<'a> Bytes<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Bytes { data }
    }
    pub fn u8(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }
    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.u8(), self.u8()])
    }
    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.u8(), self.u8(), self.u8(), self.u8()])
    }
    pub fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.data)
    }
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
}
