//! `nandlab demo`: the built-in default experiment, and `nandlab bench`: the speed benchmark.
//!
//! The demo is paper 000's headline result on a synthetic workload: hot/cold 90/10 locality on
//! a store 85 % full, one log versus DAC with 4 regions, for Greedy, Cost-benefit and CAT.

use nandlab_core::Config;
use nandlab_run::{load_config, run_config};

use crate::table::Table;

fn run_with(overrides: &[String]) -> Result<nandlab_core::Metrics, String> {
    let config: Config = load_config(None, overrides).map_err(|e| e.to_string())?;
    Ok(run_config(&config, &mut |_, _| {}).map_err(|e| e.to_string())?.metrics)
}

pub fn demo(quick: bool) -> Result<(), String> {
    let blocks = if quick { 256 } else { 4096 };
    let passes = if quick { 2 } else { 8 };
    println!(
        "DAC clustering demo (paper 000): hot/cold 90/10, utilization 0.85, {blocks} blocks × 32 \
         pages × 4 KiB,\n{passes} measured passes after 2 warm-up passes, seed 1.\n"
    );
    let mut t = Table::new(&[
        "cleaning",
        "regions",
        "erases",
        "copied pages",
        "WA",
        "cleaning cost",
        "wear stddev",
        "cost vs 1 region",
    ]);
    for policy in ["greedy", "cost-benefit", "cat"] {
        let mut base_cost = None;
        for (placement, regions) in [("none", 1), ("dac", 4)] {
            let o = vec![
                format!("device.blocks={blocks}"),
                "device.pages_per_block=32".into(),
                "device.utilization=0.85".into(),
                "workload.kind=hotcold".into(),
                "workload.hot_access_fraction=0.9".into(),
                "workload.hot_data_fraction=0.1".into(),
                "workload.warmup_passes=2".into(),
                format!("workload.passes={passes}"),
                format!("ftl.cleaning={policy}"),
                format!("ftl.placement={placement}"),
                format!("ftl.regions={regions}"),
            ];
            let m = run_with(&o)?;
            let base = *base_cost.get_or_insert(m.cleaning_cost);
            t.row(vec![
                policy.into(),
                regions.to_string(),
                m.erases.to_string(),
                m.gc_copied_pages.to_string(),
                format!("{:.3}", m.write_amplification),
                format!("{:.0}", m.cleaning_cost),
                format!("{:.2}", m.wear_stddev),
                format!("{:+.1} %", (m.cleaning_cost / base - 1.0) * 100.0),
            ]);
        }
    }
    print!("{}", t.render());
    println!(
        "\nCleaning cost = erases + copied pages / 32 × 0.75 (paper 000). Try your own:\n  \
         nandlab run --set workload.kind=hotcold --set ftl.placement=dac --set ftl.cleaning=cat"
    );
    Ok(())
}

pub fn bench(blocks: u32, passes: f64) -> Result<(), String> {
    println!(
        "Speed benchmark: uniform random 4 KiB writes, page-mapped, one log, utilization 0.80, \
         {blocks} blocks × 64 pages,\nprefill + 1 warm-up pass, then {passes} measured passes; \
         one core. Speed = measured host page writes / measured wall seconds.\n"
    );
    let mut t =
        Table::new(&["cleaning", "host writes/s", "WA", "measured s", "total s", "RAM B/page"]);
    for policy in ["greedy", "cost-benefit", "cat"] {
        let o = vec![
            format!("device.blocks={blocks}"),
            "device.pages_per_block=64".into(),
            "device.utilization=0.8".into(),
            "workload.kind=uniform".into(),
            "workload.warmup_passes=1".into(),
            format!("workload.passes={passes}"),
            format!("ftl.cleaning={policy}"),
        ];
        let m = run_with(&o)?;
        t.row(vec![
            policy.into(),
            format!("{:.2} M", m.host_writes_per_wall_second / 1e6),
            format!("{:.3}", m.write_amplification),
            format!("{:.2}", m.measured_wall_seconds),
            format!("{:.2}", m.wall_seconds),
            format!("{:.1}", m.memory_bytes_per_page),
        ]);
    }
    print!("{}", t.render());

    // Hybrid FTLs: every host write may trigger a merge of a whole block, so the simulator's
    // work is dominated by page copies; report both rates.
    let hybrid_passes = passes / 16.0;
    println!(
        "\nHybrid FTLs: hot/cold 90/10 4 KiB writes, 8 log blocks, {blocks} blocks × 64 pages, \
         prefill, then {hybrid_passes} measured passes.\nFlash ops/s = (programs + erases) / \
         measured wall seconds.\n"
    );
    let mut t = Table::new(&["kind", "host writes/s", "flash ops/s", "WA", "measured s"]);
    for kind in ["bast", "sast", "fast"] {
        let o = vec![
            format!("device.blocks={blocks}"),
            "device.pages_per_block=64".into(),
            "device.utilization=0.8".into(),
            "workload.kind=hotcold".into(),
            format!("workload.passes={hybrid_passes}"),
            format!("ftl.kind={kind}"),
        ];
        let m = run_with(&o)?;
        let ops = (m.flash_program_pages + m.erases) as f64 / m.measured_wall_seconds.max(1e-9);
        t.row(vec![
            kind.into(),
            format!("{:.2} M", m.host_writes_per_wall_second / 1e6),
            format!("{:.1} M", ops / 1e6),
            format!("{:.2}", m.write_amplification),
            format!("{:.2}", m.measured_wall_seconds),
        ]);
    }
    print!("{}", t.render());
    Ok(())
}
