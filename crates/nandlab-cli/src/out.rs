//! Standard output and error that report their failures instead of panicking (`println!`
//! panics when the write fails). A closed pipe (`nandlab run --json - | head -c 10`) ends the
//! program quietly, as Unix tools do (exit status 141, 128 + SIGPIPE); any other failure (a full
//! disk: `nandlab run > /dev/full`) is an error message and exit status 2.

use std::io::Write;

/// The error text meaning "standard output was closed": `main` exits quietly on it.
pub const CLOSED: &str = "\u{0}standard output closed";

/// Exit status for a closed output, as a shell reports a process killed by SIGPIPE.
pub const CLOSED_STATUS: u8 = 141;

/// Writes `text` to standard output and flushes it.
pub fn print(text: &str) -> Result<(), String> {
    let mut o = std::io::stdout().lock();
    o.write_all(text.as_bytes()).and_then(|()| o.flush()).map_err(|e| {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            CLOSED.to_string()
        } else {
            format!("cannot write to standard output: {e}")
        }
    })
}

/// Writes `text` to standard error; a failure there has nowhere to be reported, so it is
/// ignored (progress bars and notes only).
pub fn note(text: &str) {
    let mut e = std::io::stderr().lock();
    let _ = e.write_all(text.as_bytes()).and_then(|()| e.flush());
}

/// `print!` that returns the failure: `outp!(...)?`.
macro_rules! outp {
    ($($arg:tt)*) => { crate::out::print(&format!($($arg)*)) };
}

/// `println!` that returns the failure: `outln!(...)?`.
macro_rules! outln {
    () => { crate::out::print("\n") };
    ($($arg:tt)*) => { crate::out::print(&format!("{}\n", format!($($arg)*))) };
}

/// `--json PATH|-`: writes `value` (pretty JSON) to the file, or to standard output for `-`.
/// Returns whether it went to standard output (the command then prints nothing else).
pub fn json(target: Option<&std::path::Path>, value: &serde_json::Value) -> Result<bool, String> {
    let Some(target) = target else { return Ok(false) };
    let text = serde_json::to_string_pretty(value).map_err(|e| e.to_string())? + "\n";
    if target == std::path::Path::new("-") {
        print(&text)?;
        return Ok(true);
    }
    std::fs::write(target, text).map_err(|e| format!("{}: {e}", target.display()))?;
    Ok(false)
}
