//! The subcommands written in Python: `nandlab sweep`, `nandlab report` and the HTML report of
//! `nandlab run --report` live in the `nandlab` Python package (they need pandas, Parquet and
//! process pools), so the binary runs them as `PYTHON -m nandlab SUBCOMMAND ARGS...`. With
//! this the Rust binary and `python -m nandlab` are the same command line.
//!
//! PYTHON is `$NANDLAB_PYTHON` if set, else the repository's `.venv/bin/python` when the binary
//! sits at `target/<profile>/nandlab` in a checkout that has one (`make python`), else `python3`.
//! The Python CLI sets `NANDLAB_PYTHON` to its own interpreter before it runs this library, so
//! `python -m nandlab run --report` reports with the installation it runs from.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};

/// A Python interpreter that can import `nandlab._native`, and where it was found.
pub struct Python {
    program: OsString,
    /// Where the choice came from, for error messages: "NANDLAB_PYTHON", "the repository's
    /// virtualenv" or "the PATH".
    origin: &'static str,
}

/// The interpreter to use, before any check.
fn find_python() -> Python {
    if let Some(p) = std::env::var_os("NANDLAB_PYTHON").filter(|p| !p.is_empty()) {
        return Python { program: p, origin: "NANDLAB_PYTHON" };
    }
    // current_exe is the resolved path, so a symlink to the binary still finds its checkout;
    // exe.parent() is target/<profile>, two levels further up the checkout.
    let checkout = std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.parent()?.parent()?.to_path_buf()));
    if let Some(venv) = checkout.map(|c| c.join(".venv/bin/python")).filter(|p| p.exists()) {
        return Python { program: venv.into_os_string(), origin: "the repository's virtualenv" };
    }
    Python { program: "python3".into(), origin: "the PATH" }
}

/// Finds the interpreter and checks that it has the nandlab package, or says in one line what
/// to do. `what` names the subcommand for the message.
pub fn python_with_nandlab(what: &str) -> Result<Python, String> {
    let python = find_python();
    let shown = Path::new(&python.program).display().to_string();
    let problem = match Command::new(&python.program)
        .args(["-c", "import nandlab._native"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
    {
        Ok(out) if out.status.success() => return Ok(python),
        Ok(out) => {
            // The traceback's last line names the missing module or the failed import.
            let stderr = String::from_utf8_lossy(&out.stderr);
            let last = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
            format!(
                "{shown} (from {}) cannot import nandlab._native: {}",
                python.origin,
                last.trim()
            )
        }
        Err(e) => format!("cannot run {shown} (from {}): {e}", python.origin),
    };
    Err(format!(
        "`nandlab {what}` runs in Python, but {problem}. Install the Python package: \
         `make python` in the source tree, or `pip install .`; or set NANDLAB_PYTHON to a \
         Python that has it"
    ))
}

/// `nandlab sweep|report ARGS...`: runs `PYTHON -m nandlab SUBCOMMAND ARGS...` with the
/// arguments verbatim and this process's standard streams, and returns its exit status.
pub fn python_subcommand(subcommand: &str, rest: &[String]) -> Result<u8, String> {
    let python = python_with_nandlab(subcommand)?;
    let status = Command::new(&python.program)
        .args(["-m", "nandlab", subcommand])
        .args(rest)
        .status()
        .map_err(|e| format!("cannot run {}: {e}", Path::new(&python.program).display()))?;
    Ok(exit_code(status))
}

/// `run --report FILE.html`: writes the run's JSON to a temporary file (`FILE.json` in a
/// temporary directory) and runs `PYTHON -m nandlab report TMP --out FILE.html`. With
/// `--json -` the report's own output goes to stderr, so that standard output stays the one
/// JSON document.
pub fn write_report(
    python: &Python,
    json: &str,
    html: &Path,
    stdout_is_json: bool,
) -> Result<(), String> {
    let tmp = TempJson::create(json, html)?;
    let mut command = Command::new(&python.program);
    command.args(["-m", "nandlab", "report"]).arg(&tmp.path).arg("--out").arg(html);
    if stdout_is_json {
        command.stdout(stderr_stdio()?);
    }
    let status = command
        .status()
        .map_err(|e| format!("cannot run {}: {e}", Path::new(&python.program).display()))?;
    if !status.success() {
        return Err(format!(
            "the report {} was not written: `{} -m nandlab report` exited with status {}",
            html.display(),
            Path::new(&python.program).display(),
            exit_code(status)
        ));
    }
    Ok(())
}

/// A child's standard output that goes where ours of stderr goes.
fn stderr_stdio() -> Result<Stdio, String> {
    use std::os::fd::AsFd;
    let fd = std::io::stderr().as_fd().try_clone_to_owned().map_err(|e| e.to_string())?;
    Ok(Stdio::from(fd))
}

/// A process's exit status as a shell reports it: its code, or 128 + the signal that ended it.
fn exit_code(status: ExitStatus) -> u8 {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => u8::try_from(code).unwrap_or(1),
        (None, Some(signal)) => u8::try_from(128 + signal).unwrap_or(1),
        (None, None) => 1,
    }
}

/// A run's JSON in a private temporary directory, both removed when dropped. The file is named
/// after the HTML file (`run.html` → `run.json`): the report names its source, and a random
/// name would show in the page and make two reports of one run differ.
struct TempJson {
    dir: PathBuf,
    path: PathBuf,
}

impl TempJson {
    fn create(contents: &str, html: &Path) -> Result<Self, String> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir =
            std::env::temp_dir().join(format!("nandlab-run-{}-{nanos:09}", std::process::id()));
        // create_dir fails on an existing path: never write into a directory (or through a
        // symlink) someone else put there.
        std::fs::create_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let stem = html.file_stem().filter(|s| !s.is_empty()).unwrap_or("run".as_ref());
        let mut name = stem.to_os_string();
        name.push(".json");
        let done = TempJson { path: dir.join(name), dir };
        std::fs::write(&done.path, format!("{contents}\n"))
            .map_err(|e| format!("{}: {e}", done.path.display()))?;
        Ok(done)
    }
}

impl Drop for TempJson {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
