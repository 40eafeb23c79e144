//! Goal: the file-system workloads (`postmark`, `embedded`, `media-player`) run end to end
//! through the runner like any other synthetic kind (`--set workload.kind=postmark`), including
//! the oracle's look-ahead, and a run is a pure function of config and seed.
//! Method: run small configs on the default page FTL (the media player on FAST, as in paper
//! 001) twice and compare the simulated figures.

use nandlab_run::{load_config, run_config, RunReport};

fn run(overrides: &[&str]) -> RunReport {
    let mut o = vec!["device.blocks=64"];
    o.extend_from_slice(overrides);
    run_sized(&o)
}

/// `run` without the 64-block device (the overrides size it).
fn run_sized(overrides: &[&str]) -> RunReport {
    let mut o: Vec<String> = vec!["run.check_every_requests=5000".into()];
    o.extend(overrides.iter().map(|s| (*s).to_string()));
    let config = load_config(None, &o).unwrap();
    run_config(&config, &mut |_, _| {}).unwrap()
}

/// The simulated (not wall-clock) figures of a run.
fn simulated(r: &RunReport) -> [u64; 7] {
    let m = &r.metrics;
    [
        m.host_write_pages,
        m.host_read_pages,
        m.flash_program_pages,
        m.gc_copied_pages,
        m.erases,
        m.sim_time_ns,
        m.host_write_requests,
    ]
}

#[test]
fn postmark_and_embedded_run_and_are_deterministic() {
    let cases: [&[&str]; 3] = [
        &["workload.kind=postmark", "workload.fs.transactions=2000"],
        &[
            "workload.kind=postmark",
            "workload.fs.files=4",
            "workload.fs.directories=2",
            "workload.fs.file_bytes_min=1048576",
            "workload.fs.file_bytes_max=1048576",
            "workload.fs.transactions=50",
        ],
        &["workload.kind=embedded", "workload.fs.transactions=5000"],
    ];
    for case in cases {
        let a = run(case);
        let m = &a.metrics;
        assert!(m.host_write_pages > 0, "{case:?}");
        assert!(m.write_amplification >= 1.0, "{case:?}");
        let b = run(case);
        assert_eq!(simulated(&a), simulated(&b), "{case:?}");
        assert_eq!(a.config, b.config);
        let fs = a.config.workload.param::<nandlab_core::FsConfig>("fs").unwrap();
        assert!(fs.transactions.is_some(), "the resolved config records the fs keys");
        eprintln!(
            "{case:?}: {} host writes, {} reads, WA {:.3}, erases {}",
            m.host_write_pages, m.host_read_pages, m.write_amplification, m.erases
        );
    }
}

#[test]
fn the_prefilled_device_cleans_under_the_fs_workloads() {
    // A prefilled 64-block device has a few spare blocks: enough embedded updates force the
    // cleaner to run, and the oracle placement's look-ahead covers the file-system kinds too.
    let base = ["workload.kind=embedded", "workload.fs.transactions=20000"];
    let greedy = run(&base);
    assert!(greedy.metrics.erases > 0);
    let mut oracle = base.to_vec();
    oracle.push("ftl.placement=oracle");
    let o = run(&oracle);
    assert_eq!(o.metrics.host_write_pages, greedy.metrics.host_write_pages);
    assert!(o.metrics.erases > 0);
}

#[test]
fn measurement_starts_after_the_format() {
    // Without a prefill, the only unmeasured writes are the format's: boot sector, two FATs
    // and the root directory.
    let r =
        run(&["workload.kind=postmark", "workload.prefill=false", "workload.fs.transactions=0"]);
    let m = &r.metrics;
    // 500 creates in 50 directories, then 500 deletes: at least 4 + 3 sector writes each.
    assert!(m.host_write_requests >= 500 * 7 + 50 * 4, "{}", m.host_write_requests);
    assert_eq!(m.host_read_pages, 0, "no transactions, no reads");
}

#[test]
fn media_player_on_fast_switch_merges_its_files() {
    // The FAB paper's setting scaled down: FAST with 8 log blocks on its SLC chip, an MP3 player
    // on a 64 MiB card. The songs are written sequentially from cluster-aligned starts, so
    // FAST's sequential log fills whole blocks in order and switch-merges them; the FAT and
    // directory sectors go to the random logs.
    let case = [
        "device.preset=slc2006",
        "device.logical_bytes=67108864",
        "ftl.kind=fast",
        "workload.kind=media-player",
        "workload.media=mp3",
    ];
    let a = run_sized(&case);
    let m = &a.metrics;
    let w = &a.config.workload;
    assert_eq!((w.passes, w.param::<String>("media").as_deref()), (Some(1.0), Some("mp3")));
    assert_eq!(a.config.value("ftl.log_blocks"), Some(toml::Value::Integer(8)));
    // The measured part writes passes × the logical bytes, and plays some songs back.
    assert!(m.host_write_bytes >= 67_108_864, "{}", m.host_write_bytes);
    assert!(m.host_write_pages >= 67_108_864 / 2048);
    assert!(m.host_read_pages > 0, "playback reads");
    // Mostly switch merges: the partial and full merges come from the metadata and from a
    // song's first and last, partly written, blocks.
    let other = m.partial_merges.count + m.full_merges.count;
    assert!(m.switch_merges.count > 5 * other, "{:?} vs {other}", m.switch_merges);
    assert!(m.write_amplification >= 1.0);
    let b = run_sized(&case);
    assert_eq!(simulated(&a), simulated(&b));
    eprintln!(
        "media-player mp3 on FAST: {} host writes, {} reads, WA {:.3}, erases {}, switch {:?}, \
         partial {:?}, full {:?}",
        m.host_write_pages,
        m.host_read_pages,
        m.write_amplification,
        m.erases,
        m.switch_merges.count,
        m.partial_merges.count,
        m.full_merges.count
    );
}
