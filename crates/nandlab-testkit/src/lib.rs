//! Test support shared by the crates' integration tests (a dev-dependency only, never part of
//! the product): a test's own scratch directory under the system temp dir, removed when the
//! test ends.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// The directory `<prefix>-<pid>-<n>`, removed with its contents on drop, so also when the test
/// panics (unwinding drops it). Each test has its own: the tests of a binary run in parallel
/// threads, and one removing a shared directory would pull it from under the others. The pid
/// keeps concurrent runs apart, the counter a run's tests; the name stays short because Unix
/// socket paths are limited to 108 bytes.
pub struct Scratch(PathBuf);

impl Scratch {
    pub fn new(prefix: &str) -> Scratch {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("{prefix}-{}-{n}", std::process::id()));
        // A killed earlier run whose pid this one reuses may have left the same name behind.
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
