//! How the `nandlab` binary does the Python part of a command (`handoff.rs`): `nandlab sweep`,
//! `nandlab report` and the HTML report of `nandlab run --report` live in the `nandlab` Python
//! package, so the binary runs them in one child process, `PYTHON -m nandlab ...`. With this
//! the Rust binary and `python -m nandlab` are the same command line. (Inside Python,
//! `nandlab._native.cli`, none of this runs: the calling Python code does that part itself.)
//!
//! PYTHON is `$NANDLAB_PYTHON` if set, else the repository's `.venv/bin/python` when the binary
//! sits at `target/<profile>/nandlab` in a checkout that has one (`make python`), else `python3`.
//! It is checked before the command starts, so that a long run is not lost to a missing Python.

use std::ffi::OsString;
use std::io::Write;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};

use crate::handoff::{Handoff, ReportJob};

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

/// Does the Python part of a command (`handoff.rs`) in one child process of `python`, with this
/// process's standard streams, and returns its exit status.
pub fn hand_off(python: &Python, handoff: Handoff) -> Result<u8, String> {
    match handoff {
        Handoff::Command { name, args } => {
            let status = Command::new(&python.program)
                .args(["-m", "nandlab", name])
                .args(args)
                .status()
                .map_err(|e| cannot_run(python, &e))?;
            Ok(exit_code(status))
        }
        Handoff::Report(job) => write_report(python, &job).map(|()| 0),
    }
}

/// `run --report FILE.html`: runs `PYTHON -m nandlab report - --out FILE.html` with the run's
/// JSON on its standard input. With `--json -` the report's own output goes to stderr, so that
/// standard output stays the one JSON document.
fn write_report(python: &Python, job: &ReportJob) -> Result<(), String> {
    let mut command = Command::new(&python.program);
    command.args(["-m", "nandlab", "report", "-", "--out"]).arg(&job.html).stdin(Stdio::piped());
    if job.json_on_stdout {
        command.stdout(stderr_stdio()?);
    }
    let mut child = command.spawn().map_err(|e| cannot_run(python, &e))?;
    if let Some(mut stdin) = child.stdin.take() {
        // A report that fails before reading its input closes the pipe: its exit status
        // below says why, so a failed write is not an error of its own.
        let _ = stdin.write_all(job.json.as_bytes()).and_then(|()| stdin.write_all(b"\n"));
    }
    let status = child.wait().map_err(|e| cannot_run(python, &e))?;
    if !status.success() {
        return Err(format!(
            "the report {} was not written: `{} -m nandlab report` exited with status {}",
            job.html.display(),
            Path::new(&python.program).display(),
            exit_code(status)
        ));
    }
    Ok(())
}

fn cannot_run(python: &Python, e: &std::io::Error) -> String {
    format!("cannot run {}: {e}", Path::new(&python.program).display())
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
