//! Goal: `run.timing = "off"` gives exactly a timed run's counts for every configuration it
//! accepts, and refuses, naming the key, every configuration whose counts read the time.
//! Method: every registered cleaning policy × placement, buffer kind, wear leveler, hybrid
//! kind × recycling policy and plane allocation (on 2 planes), plus the time-driven options
//! (DAC's time threshold, background cleaning), each on a small hot/cold device run twice:
//! with timing on and off. A policy that reads the time without declaring it
//! (`reads_time`) fails here, because its untimed counts differ.

use nandlab_core::names;
use nandlab_core::Metrics;
use nandlab_run::{load_config, run_config};

/// Everything a run counts that does not depend on time.
fn counts(m: &Metrics) -> Vec<u64> {
    let mut v = vec![
        m.host_write_pages,
        m.host_read_pages,
        m.host_write_requests,
        m.flash_read_pages,
        m.flash_program_pages,
        m.gc_copied_pages,
        m.erases,
        m.gc_victims,
        u64::from(m.wear_max),
        u64::from(m.wear_min),
        m.mapping_read_pages,
        m.mapping_program_pages,
        m.switch_merges.count,
        m.partial_merges.count,
        m.full_merges.count,
        m.migrations.count,
        m.wear_leveling_erases,
        m.wear_leveling_copies,
    ];
    v.extend(m.wear_histogram.iter().flatten());
    v
}

/// `Ok(())` when the untimed run counts what the timed one does; `Err(key)` when the untimed
/// configuration is refused, with the key its error names.
fn compare(overrides: &[String]) -> Result<(), String> {
    let mut base = vec![
        "device.blocks=96".to_string(),
        "device.pages_per_block=32".into(),
        "device.utilization=0.75".into(),
        "workload.kind=hotcold".into(),
        "workload.passes=3".into(),
    ];
    base.extend(overrides.iter().cloned());
    let timed = load_config(None, &base).unwrap();
    let on = run_config(&timed, &mut |_, _| {}).unwrap_or_else(|e| panic!("{base:?}: {e}"));
    base.push("run.timing=off".into());
    let config = load_config(None, &base).unwrap();
    let off = match run_config(&config, &mut |_, _| {}) {
        Ok(r) => r,
        Err(e) => {
            let text = e.to_string();
            let key = text.split('`').nth(1).unwrap_or_default().to_string();
            assert!(text.contains("run.timing"), "{base:?}: the refusal names run.timing: {text}");
            return Err(key);
        }
    };
    assert_eq!(counts(&on.metrics), counts(&off.metrics), "{base:?}");
    assert!(on.metrics.write_amplification > 1.0, "{base:?}: the cleaner ran");
    assert_eq!(off.metrics.sim_time_ns, 0, "{base:?}: no simulated time");
    assert_eq!(off.metrics.write_latency_ns.max, 0, "{base:?}: no latency");
    assert!(on.metrics.write_latency_ns.max > 0, "{base:?}");
    assert_eq!(off.config.run.timing, nandlab_core::RunTiming::Off, "recorded");
    Ok(())
}

fn set(kv: &[&str]) -> Vec<String> {
    kv.iter().map(|s| (*s).to_string()).collect()
}

#[test]
fn every_cleaning_and_placement_counts_the_same_or_is_refused() {
    let mut refused = Vec::new();
    for cleaning in names::cleaning() {
        for placement in names::placements() {
            let o =
                set(&[&format!("ftl.cleaning={cleaning}"), &format!("ftl.placement={placement}")]);
            if let Err(key) = compare(&o) {
                refused.push((cleaning, placement, key));
            }
        }
    }
    // Exactly the policies that read ages in ns: CAT, cost-benefit's default form, DEB.
    for (cleaning, placement, key) in &refused {
        let expected = if ["cat", "cost-benefit"].contains(cleaning) {
            "ftl.cleaning"
        } else {
            "ftl.placement"
        };
        assert_eq!(key, expected, "{cleaning} × {placement}");
        assert!(
            ["cat", "cost-benefit"].contains(cleaning) || *placement == "deb",
            "{cleaning} × {placement} refused"
        );
    }
    let n = names::placements().len();
    assert_eq!(refused.len(), 2 * n + (names::cleaning().len() - 2), "{refused:?}");
    // Cost-benefit as SepBIT's simulator computes it counts host writes, not time.
    compare(&set(&["ftl.cleaning=cost-benefit", "ftl.cost_benefit_form=sqrt-append-age"])).unwrap();
}

#[test]
fn time_driven_options_are_refused() {
    let dac = set(&["ftl.placement=dac", "ftl.regions=3", "ftl.time_threshold_s=0.001"]);
    assert_eq!(compare(&dac), Err("ftl.placement".into()));
    compare(&set(&["ftl.placement=dac", "ftl.regions=3"])).unwrap();
    let background = set(&["ftl.gc_mode=background"]);
    assert_eq!(compare(&background), Err("ftl.gc_mode".into()));
}

#[test]
fn buffers_wear_leveling_and_hybrid_kinds_count_the_same() {
    for buffer in names::buffers() {
        compare(&set(&[&format!("buffer.kind={buffer}"), "buffer.size_bytes=65536"])).unwrap();
    }
    for wear in names::wear_levelers() {
        compare(&set(&[&format!("wear.kind={wear}")])).unwrap();
    }
    let mut hybrid = 0;
    for kind in names::ftl_kinds().into_iter().filter(|k| *k != "page") {
        for recycling in names::recycling() {
            let o = set(&[&format!("ftl.kind={kind}"), &format!("ftl.recycling={recycling}")]);
            // Some recycling policies are defined for one kind only (refused when timed too).
            if load_config(None, &o).and_then(|c| nandlab_run::prepare(&c)).is_err() {
                continue;
            }
            compare(&o).unwrap();
            hybrid += 1;
        }
    }
    assert!(hybrid >= 3, "every hybrid kind ran at least once");
}

#[test]
fn plane_allocation_by_load_is_refused_on_planes() {
    for allocation in names::allocation() {
        let o = set(&["device.planes_per_die=2", &format!("ftl.allocation={allocation}")]);
        match compare(&o) {
            Ok(()) => assert_ne!(allocation, "dynamic"),
            Err(key) => {
                assert_eq!(allocation, "dynamic");
                assert_eq!(key, "ftl.allocation");
            }
        }
    }
    // One plane: the allocator has nothing to choose.
    compare(&set(&["ftl.allocation=dynamic"])).unwrap();
}
