//! Goal: the trace-side findings of the hostile-input probe stay fixed. Each test reproduces one
//! finding of the probe and asserts the exact outcome: a request split by compact fitting counts
//! once; prefill pages held by a buffer are not written back inside the measured window; a
//! corrupt request length or timestamp is a clean error naming file:line, found at once (the
//! length once made compact fitting loop for ever and grow without bound); replays that would
//! pass the end of simulated time stop with an error instead of wrapping.
//! Method: tiny MSR-format traces written to a temp dir, run through the whole runner.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nandlab_run::{load_config, run_config, Error, RunReport};

use nandlab_testkit::Scratch;

/// The file `name` holding `text`, in a scratch directory of the test's own, removed when the
/// guard drops.
fn temp_file(name: &str, text: &str) -> (Scratch, PathBuf) {
    let dir = Scratch::new("nandlab-hostile");
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    (dir, p)
}

fn run(trace: &Path, overrides: &[&str]) -> Result<RunReport, Error> {
    let mut o =
        vec!["workload.kind=trace".to_string(), format!("workload.path={}", trace.display())];
    o.extend(overrides.iter().map(|s| s.to_string()));
    run_config(&load_config(None, &o)?, &mut |_, _| {})
}

/// One MSR line: Windows filetime (100 ns ticks), host, disk, type, offset, size, response.
fn msr(ticks: u64, op: &str, offset: u64, size: u64) -> String {
    format!("{ticks},hm,0,{op},{offset},{size},10\n")
}

const T0: u64 = 128_166_385_295_514_878;
const CHUNK: u64 = 64 * 4096;

#[test]
fn a_request_split_by_compact_fitting_counts_once() {
    // Chunk 3 is touched first (dense index 0), chunk 1 next (index 1); the third write spans
    // the chunk 2 | chunk 3 boundary, so it maps to index 2 and index 0: two extents that are
    // not adjacent. The read of the same range splits the same way.
    let text = [
        msr(T0, "Write", 3 * CHUNK, 4096),
        msr(T0 + 10, "Write", CHUNK, 4096),
        msr(T0 + 20, "Write", 3 * CHUNK - 4096, 8192),
        msr(T0 + 30, "Read", 3 * CHUNK - 4096, 8192),
    ]
    .concat();
    let (_dir, p) = temp_file("split.csv", &text);
    let r = run(&p, &["workload.fit=compact", "workload.prefill=false"]).unwrap();
    let m = &r.metrics;
    assert_eq!(m.host_write_requests, 3, "the split write is one request");
    assert_eq!(m.host_read_requests, 1, "the split read is one request");
    assert_eq!(m.host_write_pages, 4);
    assert_eq!(m.host_read_pages, 2);
}

#[test]
fn prefill_pages_in_a_buffer_are_written_back_before_the_measurement() {
    // A read-only trace: nothing in the measured window writes, so no page may be programmed
    // there. Before the fix, the buffer's share of the prefill (up to one buffer) was written
    // back inside the window (trace runs have no warm-up by default).
    let text = [msr(T0, "Read", 0, 4096), msr(T0 + 10, "Read", 8192, 4096)].concat();
    let (_dir, p) = temp_file("reads.csv", &text);
    for buffer in ["lru", "fab", "bplru"] {
        let kind = format!("buffer.kind={buffer}");
        let o = [
            kind.as_str(),
            "buffer.size_bytes=1048576",
            "device.blocks=64",
            "device.pages_per_block=64",
            "workload.fit=fold",
        ];
        let r = run(&p, &o).unwrap();
        assert_eq!(r.metrics.host_write_pages, 0, "{buffer}");
        assert_eq!(
            r.metrics.flash_program_pages, 0,
            "{buffer}: prefill written back in the window"
        );
    }
}

#[test]
fn a_huge_request_length_is_refused_at_once_naming_the_line() {
    // The probe's line: a 4 EiB write. Compact fitting used to insert every chunk of it.
    let (_dir, p) = temp_file(
        "huge.csv",
        "128166385295514663,hm,0,Write,9056014336,4611686018427387904,2833\n",
    );
    for fit in ["compact", "fold", "auto"] {
        let started = Instant::now();
        let msg = run(&p, &[&format!("workload.fit={fit}")]).unwrap_err().to_string();
        assert!(started.elapsed() < Duration::from_secs(10), "{fit}: took {:?}", started.elapsed());
        assert!(msg.contains("huge.csv:1:") && msg.contains("longer than"), "{fit}: {msg}");
    }
}

#[test]
fn a_timestamp_past_the_span_limit_names_the_line() {
    // 2 × 10^17 ticks = 2 × 10^19 ns after the first record: past what u64 ns can hold. It
    // used to saturate silently (and wrap after shifting), failing later as "request #N ...
    // earlier than the previous arrival" with no file or line.
    let text =
        [msr(T0, "Write", 0, 4096), msr(T0 + 200_000_000_000_000_000, "Write", 0, 4096)].concat();
    let (_dir, p) = temp_file("late.csv", &text);
    let msg = run(&p, &[]).unwrap_err().to_string();
    assert!(msg.contains("late.csv:2:") && msg.contains("timestamp"), "{msg}");
}

#[test]
fn replays_past_the_end_of_simulated_time_stop_naming_the_line() {
    // A trace spanning 9 × 10^17 ns: the 21st replay would start after u64 nanoseconds end.
    let text =
        [msr(T0, "Write", 0, 4096), msr(T0 + 9_000_000_000_000_000, "Write", 4096, 4096)].concat();
    let (_dir, p) = temp_file("long.csv", &text);
    let msg = run(&p, &["workload.passes=30"]).unwrap_err().to_string();
    assert!(msg.contains("long.csv:") && msg.contains("end of simulated time"), "{msg}");
    // Closed-loop timing ignores the timestamps, so the same replays run.
    let r = run(&p, &["workload.passes=30", "workload.trace_timing=closed"]).unwrap();
    assert_eq!(r.metrics.host_write_requests, 60);
}
