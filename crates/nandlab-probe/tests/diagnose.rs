//! Goal: the diagnosis names the paper's symptom on simulated devices built to have it, and
//! "none" on healthy ones (benchmarks paper, Figures 1–3; scores and the margin rule in
//! `nandlab_probe::diagnose`) — each verdict by a margin, not by the order the rules are tried.
//! Method: a matrix of suite traces (`nandlab_trace::suites`, generated: no trace files needed)
//! replayed with PBR on prefilled `sim:` devices (generic preset: 4 KiB pages, program 200 us,
//! RAM 1 us a page), varying geometry, utilization, buffer and trace:
//! - buffer: small FAB / LRU / BPLRU buffers in front of the page FTL at 50–70 % utilization;
//! - mapping: BAST and SAST with 4–16 log blocks under writes scattered over the whole device;
//! - GC: greedy or cost-benefit foreground cleaning at 85–95 % utilization;
//! - none: the page FTL at 50–60 % utilization, and a buffer larger than all the writes.
//!
//! Every case must get its verdict, and a symptom's score must be at least `SCORE_MIN` and
//! `MARGIN_MIN` × the runner-up's. `cargo test -p nandlab-probe --test diagnose -- --ignored
//! matrix_table` also runs boundary cases (not asserted) and writes
//! `experiments/diagnosis/RESULTS.md`.

use std::fmt::Write as _;
use std::path::Path;

use nandlab_probe::diagnose::{Diagnosis, Symptom, MARGIN_MIN, SCORE_MIN};
use nandlab_probe::pbr::replay_records;
use nandlab_probe::target::SimTarget;
use nandlab_trace::suites::{SuiteGenerator, SuiteKind, SuiteParams};

/// One constructed device and trace.
struct Case {
    name: &'static str,
    /// The trace in words (the table's column).
    trace: &'static str,
    suite: SuiteKind,
    params: &'static [(&'static str, &'static str)],
    device: &'static [&'static str],
    /// The symptom the device was built to have.
    built: Symptom,
    /// Asserted (false: a boundary case, reported only).
    asserted: bool,
}

const MIB_256: &str = "device.logical_bytes=268435456";
const MIB_128: &str = "device.logical_bytes=134217728";

/// The Buffer suite's writes, 4 KiB aligned, over 256 MiB.
const BUFFER_ALIGNED: &[(&str, &str)] = &[
    ("write_bytes", "33554432"),
    ("area_bytes", "268435456"),
    ("alignment_ratio", "1"),
    ("partition_offset_bytes", "0"),
];
/// The GC suite's hot and cold rewrites over 256 MiB.
const GC_256: &[(&str, &str)] = &[("write_bytes", "67108864"), ("area_bytes", "268435456")];
/// The GC suite over 128 MiB.
const GC_128: &[(&str, &str)] = &[("write_bytes", "33554432"), ("area_bytes", "134217728")];
/// Uniform random 4 KiB aligned writes over 128 MiB (the Mapping suite in one group, never
/// sequential).
const RANDOM_4K_128: &[(&str, &str)] = &[
    ("write_bytes", "33554432"),
    ("area_bytes", "134217728"),
    ("groups", "1"),
    ("group_header_bytes", "0"),
    ("sequential_ratio", "0"),
    ("alignment_ratio", "1"),
    ("request_bytes", "4096"),
];
/// Uniform random 4 KiB and 128 KiB unaligned writes over 1 GiB.
const RANDOM_MIXED_1G: &[(&str, &str)] = &[
    ("write_bytes", "33554432"),
    ("area_bytes", "1073741824"),
    ("groups", "1"),
    ("group_header_bytes", "0"),
    ("sequential_ratio", "0"),
];

fn cases() -> Vec<Case> {
    use SuiteKind as K;
    use Symptom as S;
    let case = |name, trace, suite, params, device, built| Case {
        name,
        trace,
        suite,
        params,
        device,
        built,
        asserted: true,
    };
    vec![
        case(
            "fab-256k",
            "buffer suite, aligned",
            K::Buffer,
            BUFFER_ALIGNED,
            &[MIB_256, "device.utilization=0.5", "buffer.kind=fab", "buffer.size_bytes=262144"],
            S::Buffer,
        ),
        case(
            "lru-512k",
            "buffer suite, aligned, seed 2",
            K::Buffer,
            &[
                ("write_bytes", "33554432"),
                ("area_bytes", "268435456"),
                ("alignment_ratio", "1"),
                ("partition_offset_bytes", "0"),
                ("seed", "2"),
            ],
            &[MIB_256, "device.utilization=0.5", "buffer.kind=lru", "buffer.size_bytes=524288"],
            S::Buffer,
        ),
        case(
            "bplru-1m",
            "gc suite, aligned",
            K::Gc,
            &[("write_bytes", "33554432"), ("area_bytes", "268435456"), ("alignment_ratio", "1")],
            &[MIB_256, "device.utilization=0.5", "buffer.kind=bplru", "buffer.size_bytes=1048576"],
            S::Buffer,
        ),
        case(
            "fab-512k-128ppb",
            "buffer suite, aligned",
            K::Buffer,
            BUFFER_ALIGNED,
            &[
                MIB_256,
                "device.pages_per_block=128",
                "device.utilization=0.5",
                "buffer.kind=fab",
                "buffer.size_bytes=524288",
            ],
            S::Buffer,
        ),
        case(
            "fab-4m",
            "buffer suite, aligned",
            K::Buffer,
            BUFFER_ALIGNED,
            &[MIB_256, "device.utilization=0.5", "buffer.kind=fab", "buffer.size_bytes=4194304"],
            S::Buffer,
        ),
        case(
            "lru-1m-70util",
            "gc suite, aligned, 128 MiB",
            K::Gc,
            &[("write_bytes", "33554432"), ("area_bytes", "134217728"), ("alignment_ratio", "1")],
            &[MIB_128, "device.utilization=0.7", "buffer.kind=lru", "buffer.size_bytes=1048576"],
            S::Buffer,
        ),
        case(
            "bast-4",
            "mapping suite",
            K::Mapping,
            &[("write_bytes", "67108864")],
            &["ftl.kind=bast", "ftl.log_blocks=4", "device.logical_bytes=2147483648"],
            S::Mapping,
        ),
        case(
            "sast-4",
            "mapping suite",
            K::Mapping,
            &[("write_bytes", "67108864")],
            &["ftl.kind=sast", "ftl.log_blocks=4", "device.logical_bytes=2147483648"],
            S::Mapping,
        ),
        case(
            "bast-8",
            "gc suite",
            K::Gc,
            &[("write_bytes", "33554432"), ("area_bytes", "268435456")],
            &["ftl.kind=bast", "ftl.log_blocks=8", MIB_256],
            S::Mapping,
        ),
        case(
            "bast-16-32ppb",
            "random 4K/128K, 1 GiB",
            K::Mapping,
            RANDOM_MIXED_1G,
            &[
                "ftl.kind=bast",
                "ftl.log_blocks=16",
                "device.logical_bytes=1073741824",
                "device.pages_per_block=32",
            ],
            S::Mapping,
        ),
        case(
            "sast-8-128ppb",
            "gc suite, aligned",
            K::Gc,
            &[("write_bytes", "33554432"), ("area_bytes", "268435456"), ("alignment_ratio", "1")],
            &["ftl.kind=sast", "ftl.log_blocks=8", MIB_256, "device.pages_per_block=128"],
            S::Mapping,
        ),
        case(
            "bast-8-random",
            "random 4K aligned, 1 GiB",
            K::Mapping,
            &[
                ("write_bytes", "33554432"),
                ("area_bytes", "1073741824"),
                ("groups", "1"),
                ("group_header_bytes", "0"),
                ("sequential_ratio", "0"),
                ("alignment_ratio", "1"),
                ("request_bytes", "4096"),
            ],
            &["ftl.kind=bast", "ftl.log_blocks=8", "device.logical_bytes=1073741824"],
            S::Mapping,
        ),
        case("greedy-90", "gc suite", K::Gc, GC_256, &[MIB_256, "device.utilization=0.9"], S::Gc),
        case(
            "cost-benefit-90-128ppb",
            "gc suite, seed 3",
            K::Gc,
            &[("write_bytes", "67108864"), ("area_bytes", "268435456"), ("seed", "3")],
            &[
                MIB_256,
                "device.utilization=0.9",
                "ftl.cleaning=cost-benefit",
                "device.pages_per_block=128",
            ],
            S::Gc,
        ),
        case(
            "greedy-95",
            "gc suite, 128 MiB",
            K::Gc,
            GC_128,
            &[MIB_128, "device.utilization=0.95"],
            S::Gc,
        ),
        case(
            "greedy-92-aligned",
            "gc suite, aligned, 128 MiB",
            K::Gc,
            &[("write_bytes", "33554432"), ("area_bytes", "134217728"), ("alignment_ratio", "1")],
            &[MIB_128, "device.utilization=0.92"],
            S::Gc,
        ),
        case(
            "greedy-90-random",
            "random 4K aligned, 128 MiB",
            K::Mapping,
            RANDOM_4K_128,
            &[MIB_128, "device.utilization=0.9"],
            S::Gc,
        ),
        case(
            "greedy-85-32ppb",
            "gc suite, 128 MiB",
            K::Gc,
            GC_128,
            &[MIB_128, "device.utilization=0.85", "device.pages_per_block=32"],
            S::Gc,
        ),
        case("page-50", "gc suite", K::Gc, GC_256, &[MIB_256, "device.utilization=0.5"], S::None),
        case(
            "page-50-transfer",
            "transfer suite",
            K::Transfer,
            &[("write_bytes", "67108864")],
            &[MIB_256, "device.utilization=0.5"],
            S::None,
        ),
        case(
            "page-60-random",
            "random 4K aligned, 128 MiB",
            K::Mapping,
            RANDOM_4K_128,
            &[MIB_128, "device.utilization=0.6"],
            S::None,
        ),
        case(
            "page-50-buffer-trace",
            "buffer suite, aligned",
            K::Buffer,
            BUFFER_ALIGNED,
            &[MIB_256, "device.utilization=0.5"],
            S::None,
        ),
        // The prefill leaves a buffer full of dirty pages, so only one that holds the whole
        // device absorbs every write.
        case(
            "lru-128m-whole-device",
            "gc suite, 128 MiB",
            K::Gc,
            GC_128,
            &[
                MIB_128,
                "device.utilization=0.9",
                "device.ram_bytes=268435456",
                "buffer.kind=lru",
                "buffer.size_bytes=134217728",
            ],
            S::None,
        ),
    ]
}

/// Cases at the edges of the scores, reported by `matrix_table` but not asserted (the module
/// doc of `diagnose` says why they fall where they do).
fn boundary_cases() -> Vec<Case> {
    vec![
        Case {
            name: "lru-256k-unaligned",
            trace: "buffer suite, unaligned",
            suite: SuiteKind::Buffer,
            params: &[("write_bytes", "33554432"), ("area_bytes", "268435456")],
            device: &[
                MIB_256,
                "device.utilization=0.5",
                "buffer.kind=lru",
                "buffer.size_bytes=262144",
            ],
            built: Symptom::Buffer,
            asserted: false,
        },
        Case {
            name: "fast-4",
            trace: "random 4K/128K, 1 GiB",
            suite: SuiteKind::Mapping,
            params: RANDOM_MIXED_1G,
            device: &["ftl.kind=fast", "ftl.log_blocks=4", "device.logical_bytes=1073741824"],
            built: Symptom::Mapping,
            asserted: false,
        },
        Case {
            name: "fab-64m",
            trace: "buffer suite, aligned",
            suite: SuiteKind::Buffer,
            params: BUFFER_ALIGNED,
            device: &[
                MIB_256,
                "device.utilization=0.5",
                "buffer.kind=fab",
                "buffer.size_bytes=67108864",
            ],
            built: Symptom::None,
            asserted: false,
        },
        Case {
            name: "lru-32m",
            trace: "gc suite",
            suite: SuiteKind::Gc,
            params: &[("write_bytes", "33554432"), ("area_bytes", "268435456")],
            device: &[
                MIB_256,
                "device.utilization=0.5",
                "buffer.kind=lru",
                "buffer.size_bytes=33554432",
            ],
            built: Symptom::None,
            asserted: false,
        },
    ]
}

fn run(case: &Case) -> Diagnosis {
    let mut p = SuiteParams::new(case.suite);
    for (k, v) in case.params {
        p.set(k, v).unwrap();
    }
    let overrides: Vec<String> = case.device.iter().map(|s| (*s).to_string()).collect();
    let mut target = SimTarget::new(None, &overrides, true).unwrap();
    let records = SuiteGenerator::new(p).unwrap().map(Ok);
    replay_records(&mut target, records, Path::new(case.name), None, &mut |_| {})
        .unwrap()
        .diagnose()
}

fn score(d: &Diagnosis, s: Symptom) -> f64 {
    match s {
        Symptom::Buffer => d.evidence.buffer_score,
        Symptom::Mapping => d.evidence.mapping_score,
        Symptom::Gc => d.evidence.gc_score,
        Symptom::None => 0.0,
    }
}

#[test]
fn every_constructed_case_gets_its_symptom_by_the_stated_margin() {
    let cases = cases();
    for s in [Symptom::Buffer, Symptom::Mapping, Symptom::Gc, Symptom::None] {
        assert!(cases.iter().filter(|c| c.built == s).count() >= 3, "{s:?}: at least 3 cases");
    }
    let mut failures = String::new();
    for case in &cases {
        let d = run(case);
        let e = &d.evidence;
        let ok = d.symptom == case.built
            && match case.built {
                // Healthy: nothing reaches the score a verdict needs.
                Symptom::None => e.buffer_score.max(e.mapping_score).max(e.gc_score) < SCORE_MIN,
                s => {
                    score(&d, s) >= SCORE_MIN
                        && e.margin >= MARGIN_MIN
                        && score(&d, s) >= MARGIN_MIN * score(&d, e.runner_up)
                }
            };
        if !ok {
            writeln!(failures, "{}: built {:?}, got {d:#?}", case.name, case.built).unwrap();
        }
    }
    assert!(failures.is_empty(), "{failures}");
}

#[test]
fn the_json_keeps_the_score_names_and_adds_the_margin() {
    let d = run(&cases()[0]);
    let v = serde_json::to_value(&d).unwrap();
    assert_eq!(v["symptom"], "buffer");
    for k in ["buffer_score", "mapping_score", "gc_score", "margin", "runner_up", "gap"] {
        assert!(!v["evidence"][k].is_null(), "{k}");
    }
    assert!(d.explanation.contains("runner-up"), "{}", d.explanation);
}

/// Runs the matrix and the boundary cases and writes `experiments/diagnosis/RESULTS.md`.
#[test]
#[ignore = "the experiment: writes experiments/diagnosis/RESULTS.md"]
fn matrix_table() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(&root)
            .output()
            .ok()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default()
    };
    let commit = git(&["rev-parse", "--short=12", "HEAD"]);
    let dirty = !git(&["status", "--porcelain", "--", "crates"]).is_empty();
    let mut table = String::from(
        "| case | trace | built with | verdict | buffer | mapping | gc | runner-up | margin |\n\
         |---|---|---|---|---:|---:|---:|---|---:|\n",
    );
    let (mut right, mut asserted, mut smallest) = (0, 0, f64::INFINITY);
    for case in cases().iter().chain(&boundary_cases()) {
        let d = run(case);
        let e = &d.evidence;
        if case.asserted {
            asserted += 1;
            right += usize::from(d.symptom == case.built);
            if case.built != Symptom::None {
                smallest = smallest.min(e.margin);
            }
        }
        let built = if case.asserted {
            case.built.name().to_string()
        } else {
            format!("{} (boundary)", case.built.name())
        };
        writeln!(
            table,
            "| {} | {} | {built} | {} | {:.3} | {:.3} | {:.3} | {} | {:.2} |",
            case.name,
            case.trace,
            d.symptom.name(),
            e.buffer_score,
            e.mapping_score,
            e.gc_score,
            // All three scores 0: no runner-up to speak of.
            if e.margin > 0.0 { e.runner_up.name() } else { "-" },
            e.margin
        )
        .unwrap();
    }
    let text = format!(
        "# PBR symptom diagnosis: the calibration matrix\n\n\
         Produced by `experiments/diagnosis/run.sh` at commit `{commit}`{}.\n\n\
         Verdict right in **{right} of {asserted}** asserted cases; smallest margin of a \
         symptomatic case (winner ÷ runner-up): **{smallest:.2}** (the rule needs score ≥ \
         {SCORE_MIN} and margin ≥ {MARGIN_MIN}). Healthy cases' margins are 0 ÷ 0.001 = 0.\n\n\
         {table}\n\
         Boundary rows are not asserted; `crates/nandlab-probe/src/diagnose.rs` explains them.\n",
        if dirty { " (with uncommitted changes under crates/)" } else { "" }
    );
    print!("{text}");
    let dir = root.join("experiments/diagnosis");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("RESULTS.md"), text).unwrap();
}
