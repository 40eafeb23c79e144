//! Goal: the DAC paper's direction of effects holds. On hot/cold 90/10 at 85 % utilization, DAC
//! with 4 regions cuts erases and copies versus one region for Greedy, Cost-benefit and CAT,
//! and CAT wears the flash most evenly (lowest erase-count standard deviation).
//! Method: 1024 blocks × 32 pages, 2 warm-up and 6 measured passes, seed 1 (the `nandlab
//! demo` setting at a quarter of its size).

use nandlab_core::{Config, Device, Metrics, Synthetic};

fn run(cleaning: &str, regions: u32) -> Metrics {
    let o: Vec<String> = vec![
        "device.blocks=1024".into(),
        "device.pages_per_block=32".into(),
        "device.utilization=0.85".into(),
        "workload.kind=hotcold".into(),
        "workload.warmup_passes=2".into(),
        "workload.passes=6".into(),
        format!("ftl.cleaning={cleaning}"),
        format!("ftl.placement={}", if regions == 1 { "none" } else { "dac" }),
        format!("ftl.regions={regions}"),
    ];
    let r = Config::from_overrides(&o).unwrap().resolve().unwrap();
    let mut d = Device::new(&r, None).unwrap();
    let items = Synthetic::new(&r.workload).map(Ok::<_, std::convert::Infallible>);
    nandlab_core::run(&mut d, items, nandlab_core::RunOptions::default(), &mut |_| {}).unwrap()
}

#[test]
fn dac_cuts_erases_and_copies_and_cat_wears_evenly() {
    let mut stddev_with_dac = Vec::new();
    for policy in ["greedy", "cost-benefit", "cat"] {
        let off = run(policy, 1);
        let on = run(policy, 4);
        eprintln!(
            "{policy}: erases {} -> {}, copies {} -> {}, wear stddev {:.2} -> {:.2}",
            off.erases,
            on.erases,
            off.gc_copied_pages,
            on.gc_copied_pages,
            off.wear_stddev,
            on.wear_stddev
        );
        assert!(on.erases < off.erases, "{policy}: DAC did not cut erases");
        assert!(on.gc_copied_pages < off.gc_copied_pages, "{policy}: DAC did not cut copies");
        stddev_with_dac.push((policy, on.wear_stddev));
    }
    let lowest = stddev_with_dac.iter().min_by(|a, b| a.1.total_cmp(&b.1)).unwrap();
    assert_eq!(lowest.0, "cat", "lowest wear stddev: {stddev_with_dac:?}");
}
