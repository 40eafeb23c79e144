//! The version string of this build: `nandlab X.Y.Z (COMMIT)`, where X.Y.Z is the crate version
//! and COMMIT the short git commit of the checkout it was built from, with `-dirty` when tracked
//! files differed from that commit, or a sentence starting `no git commit:` when the build had
//! no checkout (a source archive) or no git. `build.rs` works it out and explains when it is
//! refreshed.
//!
//! Every result records this string (the JSON report's `version`, `nandlab serve`'s stats, every
//! Python `Result` and DataFrame row), so (config, seed, version) names the exact code. It lives
//! in its own leaf crate so that the simulation core stays free of build-time git queries, and
//! so that a new commit relinks only the crates that print it.

/// The crate version, X.Y.Z (the workspace version, equal to `nandlab_core::VERSION`).
pub const CRATE_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The commit part: a short hash, the hash with `-dirty`, or `no git commit: <why>`.
pub const COMMIT: &str = env!("NANDLAB_COMMIT");

/// `nandlab X.Y.Z (COMMIT)`: what `nandlab --version` prints and every result records.
pub const VERSION_STRING: &str =
    concat!("nandlab ", env!("CARGO_PKG_VERSION"), " (", env!("NANDLAB_COMMIT"), ")");

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape external checks rely on, without a regex crate: `nandlab `, three numbers,
    /// then the commit in parentheses.
    #[test]
    fn version_string_has_the_documented_shape() {
        let rest = VERSION_STRING.strip_prefix("nandlab ").expect("the program name first");
        let (numbers, commit) = rest.split_once(' ').expect("a space before the commit");
        assert_eq!(numbers, CRATE_VERSION);
        let parts: Vec<&str> = numbers.split('.').collect();
        assert_eq!(parts.len(), 3, "{numbers}");
        assert!(parts.iter().all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())));
        assert_eq!(commit, format!("({COMMIT})"));
        let hash = COMMIT.strip_suffix("-dirty").unwrap_or(COMMIT);
        let is_hash = (7..=40).contains(&hash.len())
            && hash.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        assert!(is_hash || COMMIT.starts_with("no git commit: "), "{COMMIT}");
    }
}
