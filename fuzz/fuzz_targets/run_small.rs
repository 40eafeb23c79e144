//! `nandlab run` on small fuzzed configurations: a tiny device (8 to 64 blocks of 4 to 32 pages
//! of 512 B to 4 KiB), every FTL kind, cleaning policy, placement, buffer and wear leveler, and
//! the synthetic workloads with short lengths, through `nandlab_run::prepare` and `run`. A
//! configuration error is fine; a panic, a run that does not finish within libFuzzer's
//! `-timeout` (a few seconds is far more than any of these needs), or a report with an
//! impossible number is a finding.
//!
//! The input is decoded with `arbitrary` into `Small`; most values are picked from lists of
//! valid ones, so most inputs run. `Small::overrides` is the exact `--set` list (printed on a
//! crash), so a reproducer is also a `nandlab run --set ...` command line.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use nandlab_core::Config;

#[derive(Arbitrary, Debug)]
struct Small {
    blocks: u8,
    pages_per_block: u8,
    page_size: u8,
    utilization: u8,
    ftl: u8,
    cleaning: u8,
    placement: u8,
    regions: u8,
    log_blocks: u8,
    sast_group: u8,
    recycling: u8,
    buffer: u8,
    buffer_pages: u8,
    wear: u8,
    wear_knob: u8,
    endurance: u8,
    ram_region_pages: u8,
    workload: u8,
    request_pages: u8,
    read_fraction: u8,
    arrival: u8,
    passes: u8,
    warmup: u8,
    repeat: u8,
    prefill: u8,
    hot: u8,
    fs_knob: u8,
    timing: u8,
    seed: u16,
    /// A few more `key=value` pairs from fixed lists of keys and values.
    extra: Vec<(u8, u8)>,
}

fn pick<T: Copy>(items: &[T], i: u8) -> T {
    items[usize::from(i) % items.len()]
}

impl Small {
    fn overrides(&self) -> Vec<String> {
        let mut o = Vec::new();
        let mut set = |k: &str, v: String| o.push(format!("{k}={v}"));
        let page = pick(&[512u64, 1024, 2048, 4096], self.page_size);
        let ppb = pick(&[4u32, 8, 16, 32], self.pages_per_block);
        set("device.blocks", (8 + u32::from(self.blocks) % 57).to_string());
        set("device.pages_per_block", ppb.to_string());
        set("device.page_size_bytes", page.to_string());
        set(
            "device.utilization",
            pick(&["0.5", "0.6", "0.7", "0.75", "0.8", "0.9"], self.utilization).into(),
        );
        set("run.seed", self.seed.to_string());
        let ftl = pick(&["page", "page", "bast", "sast", "fast"], self.ftl);
        set("ftl.kind", format!("\"{ftl}\""));
        if ftl == "page" {
            set(
                "ftl.cleaning",
                format!("\"{}\"", pick(&nandlab_core::names::cleaning(), self.cleaning)),
            );
            let placement = pick(&nandlab_core::names::placements(), self.placement);
            set("ftl.placement", format!("\"{placement}\""));
            match placement {
                "dac" | "oracle" => set("ftl.regions", (1 + self.regions % 4).to_string()),
                "deb" => {
                    let n = 1 + usize::from(self.regions % 4);
                    let iv: Vec<String> =
                        (1..=n).map(|i| format!("{}", i as f64 * 0.001)).collect();
                    set("deb.stable_time_intervals_s", format!("[{}]", iv.join(", ")));
                    set(
                        "deb.ebr_size_bytes",
                        (u64::from(self.ram_region_pages % 9) * page).to_string(),
                    );
                }
                _ => {}
            }
            if placement == "dac" && self.ram_region_pages % 3 == 0 {
                set(
                    "dac.ram_region_bytes",
                    (u64::from(1 + self.ram_region_pages % 8) * page).to_string(),
                );
            }
            if placement == "dac" && self.regions & 0x80 != 0 {
                set("ftl.time_threshold_s", "0.0005".into());
            }
        } else {
            set(
                "ftl.log_blocks",
                (if ftl == "fast" { 2 } else { 1 } + u32::from(self.log_blocks % 4)).to_string(),
            );
            if ftl == "sast" {
                set("ftl.group_data_blocks", (1 + self.sast_group % 2).to_string());
                set("ftl.group_log_blocks", "1".into());
            }
            if ftl == "bast" {
                let r = pick(&nandlab_core::names::recycling(), self.recycling);
                set("ftl.recycling", format!("\"{r}\""));
            }
        }
        let buffer = pick(&nandlab_core::names::buffers(), self.buffer);
        set("buffer.kind", format!("\"{buffer}\""));
        if buffer != "none" {
            set("buffer.size_bytes", (u64::from(1 + self.buffer_pages % 16) * page).to_string());
        }
        let wear = pick(&nandlab_core::names::wear_levelers(), self.wear);
        set("wear.kind", format!("\"{wear}\""));
        match wear {
            "lazy" => {
                set("wear.delta", pick(&["0", "1", "4", "16"], self.wear_knob).into());
                if self.wear_knob & 0x80 != 0 {
                    set("wear.adaptive", "true".into());
                    set("wear.session_wear_erases", (1 + self.wear_knob % 16).to_string());
                }
            }
            "static" => {
                set("wear.threshold", pick(&["1", "2", "16"], self.wear_knob).into());
                set("wear.set_blocks", (1 + self.wear_knob % 4).to_string());
            }
            _ => {}
        }
        set("wear.endurance_cycles", pick(&[0u32, 0, 3, 20, 1000], self.endurance).to_string());
        let kinds =
            ["sequential", "uniform", "hotcold", "phases", "postmark", "embedded", "media-player"];
        let kind = pick(&kinds, self.workload);
        set("workload.kind", format!("\"{kind}\""));
        let fs = matches!(kind, "postmark" | "embedded" | "media-player");
        if !fs {
            set(
                "workload.request_bytes",
                pick(&[page, page, 2 * page, 3 * page / 2, 512, 8 * page], self.request_pages)
                    .to_string(),
            );
            set(
                "workload.read_fraction",
                pick(&["0", "0.25", "0.5", "0.9"], self.read_fraction).into(),
            );
        }
        if kind == "hotcold" {
            set("workload.hot_access_fraction", pick(&["0.5", "0.9", "1.0"], self.hot).into());
            set("workload.hot_data_fraction", pick(&["0.05", "0.1", "0.5"], self.hot >> 4).into());
        }
        if kind == "phases" {
            set(
                "workload.phases",
                pick(
                    &[
                        "[{kind = \"uniform\", passes = 0.5}, {kind = \"hotcold\", passes = 0.5}]",
                        "[{kind = \"hotcold\", bytes = 65536, hot_access_fraction = 0.8}]",
                    ],
                    self.hot,
                )
                .into(),
            );
        }
        if !fs && self.arrival % 3 == 1 {
            set("workload.arrival", "\"poisson\"".into());
            set(
                "workload.arrival_rate_per_s",
                pick(&["10", "1000", "1e6", "1e9"], self.arrival >> 2).into(),
            );
        } else if !fs && self.arrival % 3 == 2 {
            set("workload.arrival", "\"poisson\"".into());
            set("workload.duration_s", pick(&["0.001", "1", "3600"], self.arrival >> 2).into());
        }
        if kind == "media-player" {
            set(
                "workload.media",
                format!("\"{}\"", pick(nandlab_core::names::media_files, self.fs_knob)),
            );
            set("workload.fs.file_bytes_min", "4096".into());
            set("workload.fs.file_bytes_max", pick(&["8192", "65536"], self.fs_knob >> 2).into());
            set("workload.fs.record_bytes", "4096".into());
            set("workload.fs.cluster_bytes", "512".into());
        }
        if kind == "postmark" {
            set("workload.fs.files", (1 + self.fs_knob % 32).to_string());
            set("workload.fs.directories", (self.fs_knob % 4).to_string());
            set("workload.fs.transactions", (1 + u32::from(self.fs_knob) * 2).to_string());
            set("workload.fs.cluster_bytes", "512".into());
        }
        if kind == "embedded" {
            set("workload.fs.files", (1 + self.fs_knob % 4).to_string());
            set("workload.fs.transactions", (1 + u32::from(self.fs_knob) * 4).to_string());
            set("workload.fs.cluster_bytes", "512".into());
        }
        if kind != "phases" {
            set("workload.passes", pick(&["0.1", "0.5", "1", "2"], self.passes).into());
        }
        set("workload.warmup_passes", pick(&["0", "0", "0.5", "1"], self.warmup).into());
        set("workload.repeat", (1 + self.repeat % 2).to_string());
        set("workload.prefill", (self.prefill % 2 == 0).to_string());
        if self.timing % 4 == 3 {
            set("timing.erase_block_ns", "10000000000".into());
            set("timing.program_page_ns", "1".into());
            set("timing.copy_page_ns", "0".into());
        }
        for &(k, v) in self.extra.iter().take(4) {
            let (key, values): (&str, &[&str]) = pick(
                &[
                    ("ftl.gc_free_blocks_min", &["1", "2", "3", "8"]),
                    ("ftl.random_d", &["1", "2", "8"]),
                    ("ftl.victim_scan_limit", &["1", "2", "64"]),
                    ("buffer.cflru_window", &["0.1", "0.5", "1.0"]),
                    ("device.logical_bytes", &["4096", "65536", "131072"]),
                    ("run.check_every_requests", &["0", "1", "7"]),
                    ("run.sample_every_bytes", &["512", "4096", "65536"]),
                    ("workload.prefill", &["true", "false"]),
                ],
                k,
            );
            set(key, pick(values, v).into());
        }
        o
    }
}

fuzz_target!(|small: Small| {
    let overrides = small.overrides();
    if std::env::var_os("NANDLAB_FUZZ_PRINT").is_some() {
        // `nandlab run` arguments of this input.
        let args: Vec<String> = overrides.iter().map(|o| format!("--set '{o}'")).collect();
        eprintln!("nandlab run {}", args.join(" "));
    }
    let Ok(config) = Config::from_overrides(&overrides) else { return };
    let Ok(prepared) = nandlab_run::prepare(&config) else { return };
    let r = &prepared.resolved;
    // Keep every execution small: the decoder aims at tiny devices; over-long runs are cut
    // here rather than reported (the device is at most 64 x 32 pages anyway).
    if r.geometry.physical_pages() > 64 * 32 {
        return;
    }
    let page = r.geometry.page_size_bytes;
    let Ok(report) = nandlab_run::run(&prepared, &mut |_, _| {}) else { return };
    let m = &report.metrics;
    for (name, v) in [
        ("write_amplification", m.write_amplification),
        ("cleaning_cost", m.cleaning_cost),
        ("wear_mean", m.wear_mean),
        ("wear_stddev", m.wear_stddev),
        ("memory_bytes_per_page", m.memory_bytes_per_page),
    ] {
        assert!(v.is_finite() && v >= 0.0, "{name} = {v} for {overrides:?}");
    }
    assert!(
        m.wear_min <= m.wear_max,
        "wear min {} > max {}: {overrides:?}",
        m.wear_min,
        m.wear_max
    );
    assert!(
        m.host_write_bytes <= m.host_write_pages.saturating_mul(page),
        "{} bytes written in {} pages of {page}: {overrides:?}",
        m.host_write_bytes,
        m.host_write_pages
    );
    assert!(
        m.host_read_bytes <= m.host_read_pages.saturating_mul(page),
        "{} bytes read in {} pages of {page}: {overrides:?}",
        m.host_read_bytes,
        m.host_read_pages
    );
    let _ = report.to_json();
});
