//! Goal: the toy policies of `examples/toy_policies` (copied into the core by
//! `scripts/toy_policies.sh`) work end to end once added as one file plus one registry line:
//! their names and parameters resolve, parameters are recorded and refused where they do not
//! apply, and their runs agree with the policies they reduce to.
//! Method: run small devices through `Device` and compare exact counters.

use nandlab_core::sim::{run, RunOptions};
use nandlab_core::{Config, Device, Metrics, Workload};

fn metrics(overrides: &[&str]) -> Metrics {
    let mut o = vec!["device.blocks=128", "device.pages_per_block=32", "workload.kind=hotcold"];
    o.extend_from_slice(overrides);
    let r = Config::from_overrides(&o).unwrap().resolve().unwrap();
    let mut device = Device::new(&r, None).unwrap();
    let items = Workload::new(&r.workload).unwrap().map(Ok::<_, std::convert::Infallible>);
    let options = RunOptions { check_every_requests: 101, ..Default::default() };
    run(&mut device, items, options, &mut |_| {}).unwrap()
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
    assert_eq!(r.config.ftl.extra.get("age_exponent"), Some(&toml::Value::Float(1.0)));
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
