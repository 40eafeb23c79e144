//! Goal: a refactoring of the wiring (typed policy specs, one composition root) must
//! not change a single simulated number. This test pins the metrics of fixed configurations
//! covering every FTL kind, cleaning policy, placement, buffer, wear leveler and workload kind
//! (and the trace, Poisson and read paths) to committed JSON, byte for byte, wall-clock fields
//! aside.
//! Method: run each configuration through the runner, serialize its metrics and resolved config
//! with serde_json (pretty, keys in struct order), drop `wall_seconds`,
//! `measured_wall_seconds` and `host_writes_per_wall_second`, check the simulator's own RAM
//! figures did not grow (they may shrink: they are not simulated numbers), and compare with
//! `tests/golden/metrics/<name>.json` at the repository root. `NANDLAB_BLESS=1 cargo test
//! --release -p nandlab-run --test golden_metrics` rewrites the files: do that only for a change
//! that is meant to change results, and say why in the commit.

use std::path::{Path, PathBuf};

use nandlab_run::{load_config, run_config};

use nandlab_testkit::Scratch;

/// A small device (128 blocks of 32 pages) so that every case runs in milliseconds.
const SMALL: &[&str] = &["device.blocks=128", "device.pages_per_block=32"];

const CASES: &[(&str, &[&str])] = &[
    ("page-greedy-none-uniform", &["workload.kind=uniform"]),
    (
        "page-costbenefit-dac-hotcold",
        &["ftl.cleaning=cost-benefit", "ftl.placement=dac", "workload.kind=hotcold"],
    ),
    ("page-cat-dac-phases", &["ftl.cleaning=cat", "ftl.placement=dac", "workload.kind=phases"]),
    ("page-fifo-none-sequential", &["ftl.cleaning=fifo", "workload.kind=sequential"]),
    ("page-randomd-none-uniform", &["ftl.cleaning=random-d", "workload.kind=uniform"]),
    ("page-greedy-oracle-hotcold", &["ftl.placement=oracle", "workload.kind=hotcold"]),
    ("page-greedy-hostgc-uniform", &["ftl.placement=host-gc", "workload.kind=uniform"]),
    ("page-greedy-lifetime-hotcold", &["ftl.placement=lifetime", "workload.kind=hotcold"]),
    ("page-greedy-sepbit-hotcold", &["ftl.placement=sepbit", "workload.kind=hotcold"]),
    ("page-greedy-warcip-hotcold", &["ftl.placement=warcip", "workload.kind=hotcold"]),
    ("page-greedy-fadac-hotcold", &["ftl.placement=fadac", "workload.kind=hotcold"]),
    (
        "page-costbenefit-sqrtage-sepbit-hotcold",
        &[
            "ftl.cleaning=cost-benefit",
            "ftl.cost_benefit_form=sqrt-append-age",
            "ftl.placement=sepbit",
            "workload.kind=hotcold",
        ],
    ),
    ("page-greedy-midas-hotcold", &["ftl.placement=midas", "workload.kind=hotcold"]),
    (
        "page-greedy-deb-hotcold",
        &[
            "ftl.placement=deb",
            "workload.kind=hotcold",
            "workload.arrival=poisson",
            "workload.arrival_rate_per_s=2000",
        ],
    ),
    ("bast-mergeonly-uniform", &["ftl.kind=bast", "workload.kind=uniform"]),
    (
        "bast-costbased-hotcold",
        &["ftl.kind=bast", "ftl.recycling=cost-based", "workload.kind=hotcold"],
    ),
    ("bast-optimal-hotcold", &["ftl.kind=bast", "ftl.recycling=optimal", "workload.kind=hotcold"]),
    (
        "bast-periodic-sequential",
        &[
            "ftl.kind=bast",
            "ftl.recycling=periodic",
            "workload.kind=sequential",
            "workload.request_bytes=8192",
        ],
    ),
    ("sast-hotcold", &["ftl.kind=sast", "workload.kind=hotcold"]),
    ("fast-uniform", &["ftl.kind=fast", "workload.kind=uniform"]),
    (
        "page-lru-hotcold-reads",
        &[
            "buffer.kind=lru",
            "buffer.size_bytes=262144",
            "workload.kind=hotcold",
            "workload.read_fraction=0.3",
        ],
    ),
    (
        "page-fab-sequential",
        &[
            "buffer.kind=fab",
            "buffer.size_bytes=262144",
            "workload.kind=sequential",
            "workload.request_bytes=16384",
        ],
    ),
    (
        "bast-bplru-hotcold",
        &[
            "ftl.kind=bast",
            "buffer.kind=bplru",
            "buffer.size_bytes=262144",
            "workload.kind=hotcold",
        ],
    ),
    (
        "fast-cflru-uniform",
        &[
            "ftl.kind=fast",
            "buffer.kind=cflru",
            "buffer.size_bytes=262144",
            "workload.kind=uniform",
            "workload.read_fraction=0.2",
        ],
    ),
    (
        "page-static-hotcold",
        &["wear.kind=static", "wear.threshold=2", "workload.kind=hotcold", "workload.passes=6"],
    ),
    (
        "page-lazy-hotcold",
        &["wear.kind=lazy", "wear.delta=2", "workload.kind=hotcold", "workload.passes=6"],
    ),
    (
        "page-lazy-adaptive-hotcold",
        &[
            "wear.kind=lazy",
            "wear.delta=4",
            "wear.adaptive=true",
            "wear.session_wear_erases=20",
            "workload.kind=hotcold",
            "workload.passes=6",
        ],
    ),
    (
        "bast-lazy-hotcold",
        &[
            "ftl.kind=bast",
            "wear.kind=lazy",
            "wear.delta=2",
            "workload.kind=hotcold",
            "workload.passes=4",
        ],
    ),
    (
        "page-postmark",
        &["workload.kind=postmark", "device.blocks=512", "workload.fs.transactions=2000"],
    ),
    ("fast-embedded", &["ftl.kind=fast", "workload.kind=embedded", "device.blocks=512"]),
    (
        "fast-media-player",
        &[
            "ftl.kind=fast",
            "workload.kind=media-player",
            "device.blocks=1024",
            "workload.media=mp3",
        ],
    ),
    (
        "page-costbenefit-zipf-drift",
        &[
            "ftl.cleaning=cost-benefit",
            "workload.kind=zipf",
            "workload.zipf_exponent=1.0",
            "workload.zipf_drift_fraction=0.2",
        ],
    ),
    (
        "page-greedy-fio-zoned-reads",
        &[
            "workload.kind=fio",
            "workload.random_distribution=zoned:60/10:30/20:10/70",
            "workload.read_fraction=0.3",
        ],
    ),
    (
        "page-poisson-uniform",
        &["workload.kind=uniform", "workload.arrival=poisson", "workload.duration_s=2"],
    ),
    ("page-dac-trace", &["ftl.placement=dac", "workload.kind=trace"]),
    (
        "fast-lru-trace",
        &["ftl.kind=fast", "buffer.kind=lru", "buffer.size_bytes=131072", "workload.kind=trace"],
    ),
];

const WALL_CLOCK: &[&str] =
    &["wall_seconds", "measured_wall_seconds", "host_writes_per_wall_second"];

/// The simulator's RAM for its tables and media metadata (see the comparison).
const SIMULATOR_RAM: &[&str] =
    &["table_memory_bytes", "media_memory_bytes", "memory_bytes_per_page"];

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden/metrics")
}

/// A deterministic MSR trace generated here (the real traces may not be copied into the
/// repository): 3000 requests, 4-64 KiB, mostly writes, over a 24 MiB hot/cold address range.
/// Kept in a scratch directory of the test's own, removed when the guard drops.
fn trace() -> (Scratch, PathBuf) {
    let dir = Scratch::new("nandlab-golden");
    let path = dir.join("golden.csv");
    let mut state = 0x2545_F491_4F6C_DD1D_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut text = String::new();
    let mut ticks = 128_166_372_003_061_629_u64;
    for _ in 0..3000 {
        ticks += 500 + next() % 20_000;
        let hot = next() % 10 < 8;
        let span_pages = if hot { 600 } else { 6000 };
        let offset = (next() % span_pages) * 4096;
        let size = 4096 * (1 + next() % 16);
        let op = if next() % 10 < 8 { "Write" } else { "Read" };
        text.push_str(&format!("{ticks},golden,0,{op},{offset},{size},100\n"));
    }
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

#[test]
fn metrics_match_the_committed_golden_files() {
    let bless = std::env::var_os("NANDLAB_BLESS").is_some_and(|v| v != "0");
    let (_scratch, trace) = trace();
    let dir = golden_dir();
    if bless {
        std::fs::create_dir_all(&dir).unwrap();
    }
    let mut mismatches = Vec::new();
    for (name, overrides) in CASES {
        let mut o: Vec<String> = Vec::new();
        // Trace cases size their device from the trace.
        let is_trace = overrides.contains(&"workload.kind=trace");
        if !is_trace && !overrides.iter().any(|s| s.starts_with("device.blocks=")) {
            o.extend(SMALL.iter().map(|s| s.to_string()));
        } else if !is_trace {
            o.push("device.pages_per_block=32".into());
        }
        o.extend(overrides.iter().map(|s| s.to_string()));
        if is_trace {
            o.push(format!("workload.path={}", trace.display()));
        }
        let config = load_config(None, &o).unwrap_or_else(|e| panic!("{name}: {e}"));
        let report = run_config(&config, &mut |_, _| {}).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut metrics = serde_json::to_value(&report.metrics).unwrap();
        for key in WALL_CLOCK {
            metrics.as_object_mut().unwrap().remove(*key).expect("a wall-clock field");
        }
        let file = dir.join(format!("{name}.json"));
        // The simulator's own RAM is not a simulated number: packing its tables may shrink it
        // (never grow it) without changing a result. Its committed figures stay in the files;
        // a smaller one is compared as the committed one, a larger one is a mismatch.
        if !bless {
            let committed: Option<serde_json::Value> =
                std::fs::read_to_string(&file).ok().and_then(|t| serde_json::from_str(&t).ok());
            for key in SIMULATOR_RAM {
                let (Some(was), Some(now)) = (
                    committed.as_ref().and_then(|c| c["metrics"].get(*key)).cloned(),
                    metrics.get(*key).and_then(serde_json::Value::as_f64),
                ) else {
                    continue;
                };
                if now > was.as_f64().unwrap_or(f64::INFINITY) * (1.0 + 1e-12) {
                    mismatches.push(format!("{name}: {key} grew from {was} to {now}"));
                }
            }
        }
        let mut config = serde_json::to_value(&report.config).unwrap();
        // The trace lives in a temp dir whose name changes from run to run.
        if is_trace {
            config["workload"]["path"] = "golden.csv".into();
        }
        let value =
            serde_json::json!({ "metrics": metrics, "config": config, "seed": report.seed });
        let text = serde_json::to_string_pretty(&value).unwrap() + "\n";
        if bless {
            std::fs::write(&file, &text).unwrap();
            continue;
        }
        // The RAM lines are compared above, by value.
        let simulated = |t: &str| -> String {
            t.lines()
                .filter(|l| {
                    !SIMULATOR_RAM.iter().any(|k| l.trim_start().starts_with(&format!("\"{k}\"")))
                })
                .map(|l| format!("{l}\n"))
                .collect()
        };
        match std::fs::read_to_string(&file).map(|w| (simulated(&w), simulated(&text))) {
            Ok((want, text)) if want == text => {}
            Ok((want, text)) => {
                let line = want.lines().zip(text.lines()).position(|(a, b)| a != b).unwrap_or(0);
                mismatches.push(format!(
                    "{name}: differs from {} at line {}: want {:?}, got {:?}",
                    file.display(),
                    line + 1,
                    want.lines().nth(line).unwrap_or(""),
                    text.lines().nth(line).unwrap_or("")
                ));
            }
            Err(e) => mismatches.push(format!("{name}: cannot read {}: {e}", file.display())),
        }
    }
    assert!(mismatches.is_empty(), "metrics changed:\n{}", mismatches.join("\n"));
}

#[test]
fn the_cases_cover_every_policy_name() {
    let all: Vec<&str> = CASES.iter().flat_map(|(_, o)| o.iter().copied()).collect();
    let has = |key: &str, value: &str, default: bool| {
        default || all.iter().any(|s| *s == format!("{key}={value}"))
    };
    for v in &nandlab_core::names::ftl_kinds() {
        assert!(has("ftl.kind", v, *v == "page"), "ftl.kind={v}");
    }
    for v in &nandlab_core::names::cleaning() {
        assert!(has("ftl.cleaning", v, *v == "greedy"), "ftl.cleaning={v}");
    }
    for v in &nandlab_core::names::placements() {
        assert!(has("ftl.placement", v, *v == "none"), "ftl.placement={v}");
    }
    for v in &nandlab_core::names::buffers() {
        assert!(has("buffer.kind", v, *v == "none"), "buffer.kind={v}");
    }
    for v in &nandlab_core::names::wear_levelers() {
        assert!(has("wear.kind", v, *v == "none"), "wear.kind={v}");
    }
    for v in &nandlab_core::names::workload_kinds() {
        assert!(has("workload.kind", v, false), "workload.kind={v}");
    }
}
