//! Goal: `workload.repeat = K` issues the measured part K times after one prefill and warm-up,
//! every repetition the identical request sequence, timed arrivals still increasing, for every
//! generated workload kind; the device sees K times the measured writes; progress estimates
//! count the repetitions; K = 0 is a config error.
//! Method: generate small workloads with `Repeated`, cut the items at the marker and into
//! repetitions by the K = 1 measured length, and compare exactly; run two of them through
//! `nandlab_core::run` and compare host counters.

use nandlab_core::Repeated;
use nandlab_core::{Config, Device, Request, Resolved, WorkItem};

fn resolve(overrides: &[&str]) -> Resolved {
    let mut o = vec!["device.blocks=64", "device.pages_per_block=16"];
    o.extend_from_slice(overrides);
    Config::from_overrides(&o).unwrap().resolve().unwrap()
}

/// (requests before the marker, requests after it) of a whole run; exactly one marker.
fn split(overrides: &[&str]) -> (Vec<Request>, Vec<Request>) {
    let items: Vec<WorkItem> = Repeated::new(&resolve(overrides).workload).unwrap().collect();
    let markers = items.iter().filter(|i| **i == WorkItem::StartMeasurement).count();
    assert_eq!(markers, 1, "{overrides:?}: one StartMeasurement");
    let at = items.iter().position(|i| *i == WorkItem::StartMeasurement).unwrap();
    let reqs = |s: &[WorkItem]| -> Vec<Request> {
        s.iter()
            .filter_map(|i| match i {
                WorkItem::Request(r) => Some(*r),
                WorkItem::PrefillDone => None,
                WorkItem::StartMeasurement | WorkItem::Continue(_) => unreachable!(),
            })
            .collect()
    };
    (reqs(&items[..at]), reqs(&items[at + 1..]))
}

/// Checks that `with(K)` has the prefix of `with(1)` and K copies of its measured part (arrival
/// times compared after removing the expected shift, see `check_arrivals`).
fn check_repetitions(base: &[&str], k: u64) -> (Vec<Request>, Vec<Request>) {
    let (prefix1, measured1) = split(base);
    let key = format!("workload.repeat={k}");
    let mut o = base.to_vec();
    o.push(&key);
    let (prefix, measured) = split(&o);
    assert_eq!(prefix, prefix1, "{base:?}: prefill and warm-up happen once, unchanged");
    assert!(!measured1.is_empty(), "{base:?}");
    assert_eq!(measured.len(), k as usize * measured1.len(), "{base:?}: K × the measured part");
    for (r, rep) in measured.chunks(measured1.len()).enumerate() {
        let untimed = |q: &[Request]| -> Vec<Request> {
            q.iter().map(|q| Request { arrival_ns: None, ..*q }).collect()
        };
        assert_eq!(untimed(rep), untimed(&measured1), "{base:?}: repetition {r} differs");
    }
    (measured1, measured)
}

#[test]
fn uniform_three_times_is_three_identical_measured_parts_and_one_prefill() {
    let base = ["workload.kind=uniform", "workload.warmup_passes=1", "workload.passes=2"];
    let (measured1, measured3) = check_repetitions(&base, 3);
    let lp = resolve(&base).geometry.logical_pages;
    // Single-page closed-loop writes: the measured part is exactly passes × logical pages.
    assert_eq!(measured1.len() as u64, 2 * lp);
    assert_eq!(measured3.len() as u64, 6 * lp);
    assert!(measured3.iter().all(|q| q.arrival_ns.is_none()), "closed loop stays untimed");

    // The device sees it too: 3 × the measured host writes, and prefill + warm-up once.
    let run = |k: &str| {
        let mut o = base.to_vec();
        o.push(k);
        let r = resolve(&o);
        let mut d = Device::new(&r, None).unwrap();
        let items = Repeated::new(&r.workload).unwrap().map(Ok::<_, std::convert::Infallible>);
        let m = nandlab_core::run(&mut d, items, nandlab_core::RunOptions::of(&r), &mut |_| {})
            .unwrap();
        (m.host_write_pages, d.host_write_bytes() / 4096)
    };
    assert_eq!(run("workload.repeat=1"), (2 * lp, lp + lp + 2 * lp));
    assert_eq!(run("workload.repeat=3"), (6 * lp, lp + lp + 6 * lp));
}

#[test]
fn estimates_count_every_repetition() {
    for k in [1u64, 2, 5] {
        let key = format!("workload.repeat={k}");
        let r = resolve(&["workload.kind=hotcold", &key]);
        let w = Repeated::new(&r.workload).unwrap();
        let estimated = w.estimated_requests();
        let actual = w.filter(|i| matches!(i, WorkItem::Request(_))).count() as u64;
        // Single-page writes, no reads: the synthetic estimate is exact.
        assert_eq!(estimated, actual, "repeat {k}");
        assert_eq!(nandlab_core::estimated_requests(&r.workload).unwrap(), actual);
    }
}

#[test]
fn poisson_arrivals_keep_increasing_across_repetitions() {
    let base = [
        "workload.kind=hotcold",
        "workload.warmup_passes=0.5",
        "workload.passes=1",
        "workload.arrival=poisson",
        "workload.arrival_rate_per_s=2000",
    ];
    let (measured1, measured) = check_repetitions(&base, 3);
    let arrivals: Vec<u64> = measured.iter().map(|q| q.arrival_ns.unwrap()).collect();
    assert!(arrivals.windows(2).all(|w| w[0] <= w[1]), "arrivals never go backwards");
    // Each repetition is repetition 0 shifted by r × (span + mean gap) and starts strictly
    // after the previous one ends.
    let n = measured1.len();
    let first = measured1[0].arrival_ns.unwrap();
    let last = measured1[n - 1].arrival_ns.unwrap();
    let period = (last - first) + ((last - first) / (n as u64 - 1)).max(1);
    for r in 0..3 {
        for (i, q) in measured1.iter().enumerate() {
            assert_eq!(arrivals[r * n + i], q.arrival_ns.unwrap() + r as u64 * period);
        }
    }
    for r in 1..3 {
        assert!(arrivals[r * n] > arrivals[r * n - 1], "repetition {r} starts after {}", r - 1);
    }
    // And the device accepts them (a backwards arrival is a request error).
    let mut o = base.to_vec();
    o.push("workload.repeat=3");
    let r = resolve(&o);
    let mut d = Device::new(&r, None).unwrap();
    let items = Repeated::new(&r.workload).unwrap().map(Ok::<_, std::convert::Infallible>);
    let m =
        nandlab_core::run(&mut d, items, nandlab_core::RunOptions::of(&r), &mut |_| {}).unwrap();
    assert_eq!(m.host_write_pages, 3 * n as u64);
}

#[test]
fn file_system_workloads_repeat_their_measured_part() {
    let cases: [&[&str]; 3] = [
        &["workload.kind=postmark", "workload.fs.transactions=300", "workload.fs.files=50"],
        &["workload.kind=embedded", "workload.fs.transactions=500"],
        &[
            "workload.kind=media-player",
            "device.blocks=256",
            "device.pages_per_block=64",
            "workload.passes=0.5",
        ],
    ];
    for case in cases {
        check_repetitions(case, 2);
    }
}

#[test]
fn repeat_is_recorded_and_zero_is_rejected() {
    assert_eq!(resolve(&[]).config.workload.repeat, 1);
    assert_eq!(resolve(&["workload.repeat=4"]).config.workload.repeat, 4);
    let e = Config::from_overrides(&["workload.repeat=0"]).unwrap().resolve().unwrap_err();
    assert_eq!(e.key, "workload.repeat", "{e}");
    assert!(e.to_string().contains("workload.repeat"), "{e}");
    // A negative count does not even parse as a count, and the error still names the key.
    let e = Config::from_overrides(&["workload.repeat=-1"]).and_then(|c| c.resolve().map(|_| c));
    assert_eq!(e.unwrap_err().key, "workload.repeat");
}
