//! Goal: the toy policies of `examples/toy_policies` (copied into the core by
//! `scripts/toy_policies.sh`) work end to end once added as one file plus one registry line —
//! one per family: cleaning, placement, buffer, wear leveler, workload kind: their names and
//! parameters (numbers, a list, a boolean) resolve, parameters are recorded and refused where
//! they do not apply, and their runs agree exactly with the policies they reduce to.
//! Method: run small devices through `Device` and compare exact counters.

use nandlab_core::{RunOptions, run};
use nandlab_core::{Config, Device, Metrics, Workload};

fn metrics(overrides: &[&str]) -> Metrics {
    let mut o = vec!["device.blocks=128", "device.pages_per_block=32", "workload.kind=hotcold"];
    // Later settings win (e.g. another `workload.kind` or `device.blocks`).
    o.retain(|d| !overrides.iter().any(|x| x.split('=').next() == d.split('=').next()));
    o.extend_from_slice(overrides);
    let r = Config::from_overrides(&o).unwrap().resolve().unwrap();
    let mut device = Device::new(&r, None).unwrap();
    let items = Workload::new(&r.workload).unwrap().map(Ok::<_, std::convert::Infallible>);
    let options = RunOptions { check_every_requests: 101, ..Default::default() };
    run(&mut device, items, options, &mut |_| {}).unwrap()
}

/// The counters wear leveling decides.
fn leveling(m: &Metrics) -> (u64, u64, u64, u32) {
    (m.wear_leveling_erases, m.wear_leveling_copies, m.erases, m.wear_max)
}

/// The counters cleaning decides.
fn cleaning(m: &Metrics) -> (u64, u64, u64, u64) {
    (m.flash_program_pages, m.gc_copied_pages, m.erases, m.gc_victims)
}

#[test]
fn age_weighted_reduces_to_cost_benefit_and_greedy() {
    let cb = metrics(&["ftl.cleaning=cost-benefit"]);
    let greedy = metrics(&["ftl.cleaning=greedy"]);
    assert_ne!(cleaning(&cb), cleaning(&greedy), "the workload must tell the two apart");
    assert_eq!(cleaning(&metrics(&["ftl.cleaning=age-weighted"])), cleaning(&cb));
    let zero = metrics(&["ftl.cleaning=age-weighted", "ftl.age_exponent=0"]);
    assert_eq!(cleaning(&zero), cleaning(&greedy));
    let two = metrics(&["ftl.cleaning=age-weighted", "ftl.age_exponent=2"]);
    assert_ne!(cleaning(&two), cleaning(&cb));
}

#[test]
fn age_exponent_is_recorded_and_checked() {
    let r = Config::from_overrides(&["ftl.cleaning=age-weighted"]).unwrap().resolve().unwrap();
    assert_eq!(r.config.value("ftl.age_exponent"), Some(toml::Value::Float(1.0)));
    let again = r.config.resolve().unwrap();
    assert_eq!(again.config, r.config, "a resolved config resolves to itself");
    let e = Config::from_overrides(&["ftl.age_exponent=2"]).unwrap().resolve().unwrap_err();
    assert_eq!(e.key, "ftl.age_exponent");
    assert!(e.message.contains("ftl.cleaning = \"age-weighted\""), "{e}");
    let e = Config::from_overrides(&["ftl.cleaning=age-weighted", "ftl.age_exponent=-1"])
        .unwrap()
        .resolve()
        .unwrap_err();
    assert_eq!(e.key, "ftl.age_exponent");
    let e = Config::from_overrides(&["ftl.age_exponentt=2"]).unwrap_err();
    assert_eq!(e.key, "ftl.age_exponentt");
}

#[test]
fn round_robin_with_one_log_is_placement_none() {
    let none = metrics(&[]);
    let one = metrics(&["ftl.placement=round-robin", "ftl.regions=1"]);
    assert_eq!(cleaning(&one), cleaning(&none));
    let r = Config::from_overrides(&["ftl.placement=round-robin"]).unwrap().resolve().unwrap();
    assert_eq!((r.regions, r.gc_free_blocks_min), (2, 2));
    let two = metrics(&["ftl.placement=round-robin"]);
    assert_eq!(two.host_write_pages, none.host_write_pages);
    assert_ne!(cleaning(&two), cleaning(&none), "two logs clean differently");
}

#[test]
fn round_robin_weights_are_a_list_recorded_and_checked() {
    let r = Config::from_overrides(&["ftl.placement=round-robin"]).unwrap().resolve().unwrap();
    let weights: Vec<i64> = r.config.value("ftl.round_robin_weights").unwrap().try_into().unwrap();
    assert_eq!(weights, [1, 1]);
    let even = metrics(&["ftl.placement=round-robin", "ftl.round_robin_weights=[1, 1]"]);
    assert_eq!(cleaning(&even), cleaning(&metrics(&["ftl.placement=round-robin"])));
    let skewed = metrics(&["ftl.placement=round-robin", "ftl.round_robin_weights=[3, 1]"]);
    assert_ne!(cleaning(&skewed), cleaning(&even));
    let bad = ["ftl.placement=round-robin", "ftl.round_robin_weights=[1, 0]"];
    assert_eq!(Config::from_overrides(&bad).unwrap().resolve().unwrap_err().key, "ftl.round_robin_weights");
    let other = Config::from_overrides(&["ftl.round_robin_weights=[1, 1]"]).unwrap().resolve();
    assert!(other.unwrap_err().message.contains("ftl.placement = \"round-robin\""));
}

#[test]
fn fifo_refreshed_on_hits_is_lru() {
    let buffer = ["buffer.size_bytes=262144", "workload.read_fraction=0.3"];
    let run = |extra: &[&str]| metrics(&[&buffer[..], extra].concat());
    let lru = run(&["buffer.kind=lru"]);
    let fifo = run(&["buffer.kind=fifo"]);
    let refreshed = run(&["buffer.kind=fifo", "buffer.fifo_refresh_on_hit=true"]);
    assert_eq!(cleaning(&refreshed), cleaning(&lru));
    assert_eq!(refreshed.buffer, lru.buffer);
    assert_ne!(fifo.buffer, lru.buffer, "plain FIFO evicts differently");
    let r = Config::from_overrides(&["buffer.kind=fifo"]).unwrap().resolve().unwrap();
    assert_eq!(r.config.value("buffer.fifo_refresh_on_hit"), Some(toml::Value::Boolean(false)));
    let e = Config::from_overrides(&["buffer.kind=lru", "buffer.fifo_refresh_on_hit=true"]);
    assert_eq!(e.unwrap().resolve().unwrap_err().key, "buffer.fifo_refresh_on_hit");
}

#[test]
fn fixed_delta_is_lazy_without_tuning() {
    let wear = [
        "ftl.kind=fast",
        "workload.hot_access_fraction=0.99",
        "workload.hot_data_fraction=0.05",
        "workload.passes=30",
    ];
    let run = |extra: &[&str]| metrics(&[&wear[..], extra].concat());
    let lazy = run(&["wear.kind=lazy"]);
    assert!(lazy.wear_leveling_erases > 0, "the workload must make lazy level");
    assert_eq!(leveling(&run(&["wear.kind=fixed-delta"])), leveling(&lazy));
    let tight = run(&["wear.kind=fixed-delta", "wear.fixed_delta=1"]);
    assert_eq!(leveling(&tight), leveling(&run(&["wear.kind=lazy", "wear.delta=1"])));
    assert_ne!(leveling(&tight), leveling(&lazy), "a smaller Δ levels more");
    let e = Config::from_overrides(&["wear.kind=lazy", "wear.fixed_delta=1"]);
    assert_eq!(e.unwrap().resolve().unwrap_err().key, "wear.fixed_delta");
}

#[test]
fn hotspot_is_hotcold_at_90_percent() {
    let hotcold = ["workload.kind=hotcold", "workload.hot_data_fraction=0.05"];
    let a = metrics(&hotcold);
    let b = metrics(&["workload.kind=hotspot"]);
    assert_eq!(cleaning(&a), cleaning(&b));
    let c = metrics(&["workload.kind=hotspot", "workload.hotspot_fraction=0.2"]);
    assert_ne!(cleaning(&c), cleaning(&b));
    let r = Config::from_overrides(&["workload.kind=hotspot"]).unwrap().resolve().unwrap();
    assert_eq!(r.config.value("workload.hotspot_fraction"), Some(toml::Value::Float(0.05)));
    let e = Config::from_overrides(&["workload.kind=uniform", "workload.hotspot_fraction=0.2"]);
    assert_eq!(e.unwrap().resolve().unwrap_err().key, "workload.hotspot_fraction");
}
