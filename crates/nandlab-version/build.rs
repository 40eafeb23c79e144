//! Names the code being built: the short git commit of the checkout, `-dirty` when tracked files
//! differ from it, or why there is no commit. The result reaches the crate as the compile-time
//! environment variable `NANDLAB_COMMIT`.
//!
//! Rerun trade-off: the script reruns when the checkout's `HEAD`, its index, the current
//! branch's ref or `packed-refs` change (a commit, checkout, reset, stash, `git add`), and never
//! because a source file changed: watching the sources would rerun it, and relink every crate
//! that depends on this one, after each edit. So the dirty flag reflects the work tree as it was
//! when HEAD or the index last changed: editing a tracked file after a clean build does not add
//! `-dirty` until one of them changes again (`git add`, a commit) or this crate is rebuilt. A
//! commit or checkout always refreshes the hash.
//!
//! Packagers building without a checkout can name the commit with `NANDLAB_BUILD_COMMIT`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=NANDLAB_BUILD_COMMIT");
    // Without any rerun-if-changed line Cargo would rerun on every change in this package; with
    // only this one it reruns when the script changes (which it does anyway) plus the git files
    // named below.
    println!("cargo:rerun-if-changed=build.rs");
    let commit = match std::env::var("NANDLAB_BUILD_COMMIT") {
        Ok(given) if !given.trim().is_empty() => match checked_override(given.trim()) {
            Ok(commit) => commit,
            Err(message) => {
                // A build script reports a bad input by failing the build; exit rather than
                // panic so the message is not buried in a backtrace note.
                eprintln!("error: NANDLAB_BUILD_COMMIT: {message}");
                std::process::exit(1);
            }
        },
        _ => {
            let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from);
            let dir = manifest_dir.unwrap_or_else(|| PathBuf::from("."));
            from_git(&dir)
        }
    };
    println!("cargo:rustc-env=NANDLAB_COMMIT={commit}");
}

/// A packager's commit: a 7- to 40-digit lowercase hex hash, optionally with `-dirty`, so every
/// build keeps the documented `nandlab X.Y.Z (COMMIT)` shape.
fn checked_override(given: &str) -> Result<String, String> {
    let hash = given.strip_suffix("-dirty").unwrap_or(given);
    let is_hex = hash.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    if !(7..=40).contains(&hash.len()) || !is_hex {
        return Err(format!(
            "{given:?} is not a commit; expected 7 to 40 lowercase hex digits, optionally \
             followed by -dirty"
        ));
    }
    Ok(given.to_string())
}

/// The commit of the checkout holding `dir`, or a sentence starting `no git commit:`.
fn from_git(dir: &Path) -> String {
    let git_dir = match git(dir, &["rev-parse", "--absolute-git-dir"]) {
        Git::Ok(text) => text,
        Git::Missing => return "no git commit: git not found".into(),
        // A checkout owned by another user (a container, CI) is refused by git unless
        // `safe.directory` allows it; saying "outside a checkout" would mislead.
        Git::Failed(why) if why.contains("safe.directory") => {
            return "no git commit: git refused the checkout, see git config safe.directory".into()
        }
        Git::Failed(_) => return "no git commit: built outside a git checkout".into(),
    };
    watch_git_files(dir, Path::new(&git_dir));
    // An unpacked source archive that happens to sit inside some other repository must not take
    // that repository's commit: this file has to be tracked by it.
    if !matches!(git(dir, &["ls-files", "--error-unmatch", "--", "build.rs"]), Git::Ok(_)) {
        return "no git commit: built outside a git checkout".into();
    }
    let Git::Ok(hash) = git(dir, &["rev-parse", "--short=12", "HEAD"]) else {
        return "no git commit: the checkout has no commit yet".into();
    };
    // `--no-optional-locks`: a plain `git status` may rewrite the index to refresh file stat
    // data, which would touch a watched file and make the next build rerun this script.
    match git(dir, &["--no-optional-locks", "status", "--porcelain", "--untracked-files=no"]) {
        Git::Ok(changes) if changes.is_empty() => hash,
        Git::Ok(_) => format!("{hash}-dirty"),
        // The hash alone would claim a clean tree that was never checked.
        Git::Missing | Git::Failed(_) => format!("{hash}-dirty"),
    }
}

/// Asks Cargo to rerun this script when HEAD moves or the index changes. The paths come from
/// git itself because a linked worktree has a `.git` file pointing elsewhere, with its own HEAD
/// and index but the refs of the main repository. Only existing paths are named: Cargo reruns
/// a script on every build while a watched path is missing.
fn watch_git_files(dir: &Path, git_dir: &Path) {
    let mut paths = vec![git_dir.join("HEAD")];
    let mut names = vec!["index".to_string(), "packed-refs".to_string()];
    // The branch's own ref file, not all of refs/: other branches (other worktrees' commits)
    // must not rerun this script. A branch whose ref is only in packed-refs is covered by the
    // index, which every commit rewrites.
    if let Git::Ok(branch) = git(dir, &["symbolic-ref", "-q", "HEAD"]) {
        names.push(branch);
    }
    for name in &names {
        // `--git-path` answers relative to `dir` unless the path is elsewhere (older git has no
        // `--path-format=absolute`); joining an absolute path keeps it as it is.
        if let Git::Ok(p) = git(dir, &["rev-parse", "--git-path", name]) {
            paths.push(dir.join(p));
        }
    }
    for path in paths.iter().filter_map(|p| std::fs::canonicalize(p).ok()) {
        println!("cargo:rerun-if-changed={}", path.display());
    }
}

enum Git {
    /// Standard output, trimmed.
    Ok(String),
    /// The git program could not be started.
    Missing,
    /// git ran and failed (not a repository, no commit, ...): its standard error.
    Failed(String),
}

fn git(dir: &Path, args: &[&str]) -> Git {
    let output = Command::new("git").arg("-C").arg(dir).args(args).output();
    match output {
        Err(_) => Git::Missing,
        Ok(o) if !o.status.success() => Git::Failed(String::from_utf8_lossy(&o.stderr).into()),
        Ok(o) => match String::from_utf8(o.stdout) {
            Ok(text) => Git::Ok(text.trim().to_string()),
            Err(_) => Git::Failed("output is not UTF-8".into()),
        },
    }
}
