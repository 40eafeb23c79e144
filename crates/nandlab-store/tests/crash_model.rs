//! Goal: a deterministic, in-process twin of the `kill -9` harness: a "crash" drops the device
//! between two requests without a shutdown (every `pwrite` done so far is in the file, as after
//! `kill -9`), the image is reopened and every page compared with a model of what may have
//! survived: the content made durable by the last FLUSH / FUA or a later one; after a trim,
//! anything the page ever held.
//! Method: seeded random writes, FUA writes, trims and flushes through the request-level device
//! over the image, checkpoints at random points, for every placement and buffer kind.

use nandlab_core::{Config, Device, Dispatched, Io, Request, Submission};
use nandlab_store::{FileMedia, Mount};

use nandlab_testkit::Scratch;

struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 =
            self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
}

#[derive(Clone, Default, Debug)]
struct Allowed {
    durable: u64,
    pending: Vec<u64>,
    trimmed: bool,
    ever: Vec<u64>,
}

fn page_of(lpn: u64, v: u64, size: usize) -> Vec<u8> {
    if v == 0 {
        return vec![0; size];
    }
    let mut p = Vec::with_capacity(size);
    while p.len() < size {
        p.extend_from_slice(&lpn.to_le_bytes());
        p.extend_from_slice(&v.to_le_bytes());
    }
    p
}

fn run(name: &str, extra: &[&str], cycles: u64, ops: u64, seed: u64) -> Vec<String> {
    let mut o = vec![
        "device.blocks=96",
        "device.pages_per_block=32",
        "device.utilization=0.7",
        "serve.emulate_latency=false",
    ];
    o.extend_from_slice(extra);
    let r = Config::from_overrides(&o).unwrap().resolve().unwrap();
    let dir = Scratch::new("nandlab-crash-model");
    let path = dir.join(format!("{name}.img"));
    let _ = std::fs::remove_file(&path);
    let checkpoint = r.config.serve.recovery == "checkpoint";
    let how = if checkpoint { Mount::Checkpoint } else { Mount::Scan };
    let page = r.geometry.page_size_bytes as usize;
    let lpns = r.geometry.logical_pages;
    let mut model = vec![Allowed::default(); lpns as usize];
    let mut rng = Lcg(seed);
    let mut version = 0u64;
    let mut errors = Vec::new();
    let mut now = 0u64;
    for cycle in 0..cycles {
        let mut d = if cycle == 0 {
            Device::with_media(&r, Box::new(FileMedia::create(&path, &r).unwrap()), None).unwrap()
        } else {
            let (media, _) = FileMedia::open(&path, &r, how).unwrap();
            let mut d = Device::recover(&r, Box::new(media), now).unwrap();
            d.check();
            let mut buf = vec![0u8; page];
            for lpn in 0..lpns {
                let req = Request::read(lpn * page as u64, page as u64);
                d.dispatch(Submission::new(&req).io(Io::Read(&mut buf)))
                    .map(Dispatched::completion)
                    .unwrap();
                let v = u64::from_le_bytes(buf[8..16].try_into().unwrap());
                let got = if buf.iter().all(|&b| b == 0) { Some(0) } else { Some(v) }
                    .filter(|&v| buf == page_of(lpn, v, page));
                let m = &mut model[lpn as usize];
                match got {
                    Some(v)
                        if v == m.durable
                            || m.pending.contains(&v)
                            || (m.trimmed && (v == 0 || m.ever.contains(&v))) =>
                    {
                        *m = Allowed {
                            durable: v,
                            ever: std::mem::take(&mut m.ever),
                            ..Default::default()
                        };
                    }
                    got => {
                        errors.push(format!(
                            "{name} cycle {cycle}: LPN {lpn} holds {got:?}, allowed {m:?}"
                        ));
                        *m = Allowed {
                            durable: got.unwrap_or(0),
                            ever: std::mem::take(&mut m.ever),
                            ..Default::default()
                        };
                    }
                }
            }
            if checkpoint {
                d.checkpoint().unwrap();
            }
            d
        };
        let n = 1 + rng.next() % ops;
        for _ in 0..n {
            let lpn = rng.next() % lpns;
            let off = lpn * page as u64;
            let op = rng.next() % 100;
            let m = &mut model[lpn as usize];
            match op {
                0..=79 => {
                    version += 1;
                    m.pending.push(version);
                    m.ever.push(version);
                    let data = page_of(lpn, version, page);
                    d.dispatch(
                        Submission::new(&Request::write(off, page as u64)).io(Io::Write(&data)),
                    )
                    .map(Dispatched::completion)
                    .unwrap();
                    if op >= 70 {
                        d.sync().unwrap();
                        *m = Allowed {
                            durable: version,
                            ever: std::mem::take(&mut m.ever),
                            ..Default::default()
                        };
                    }
                }
                80..=84 => {
                    // Writes before the trim are undone by it: the page may hold anything it
                    // ever held until the next write is flushed.
                    m.trimmed = true;
                    m.pending.clear();
                    d.dispatch(Submission::new(&Request::trim(off, page as u64)))
                        .map(Dispatched::completion)
                        .unwrap();
                }
                85..=89 if checkpoint => d.checkpoint().unwrap(),
                _ => {
                    d.sync().unwrap();
                    for m in &mut model {
                        if let Some(&last) = m.pending.last() {
                            m.durable = last;
                            m.pending.clear();
                            m.trimmed = false;
                        }
                    }
                }
            }
        }
        d.check();
        now = d.now_ns();
    }
    let _ = std::fs::remove_file(&path);
    errors
}

fn check(name: &str, extra: &[&str]) {
    let errors = run(name, extra, 30, 400, 0xC0FFEE);
    assert!(
        errors.is_empty(),
        "{} errors, first: {:#?}",
        errors.len(),
        &errors[..errors.len().min(5)]
    );
}

#[test]
fn deb_scan() {
    check("deb-scan", &["ftl.placement=deb", "deb.ebr_size_bytes=262144"]);
}
#[test]
fn deb_checkpoint() {
    check(
        "deb-cp",
        &["ftl.placement=deb", "deb.ebr_size_bytes=262144", "serve.recovery=checkpoint"],
    );
}
#[test]
fn dac_checkpoint() {
    check("dac-cp", &["ftl.placement=dac", "serve.recovery=checkpoint"]);
}
#[test]
fn none_scan() {
    check("none-scan", &[]);
}
#[test]
fn lru_deb_scan() {
    check(
        "lru-deb",
        &[
            "ftl.placement=deb",
            "deb.ebr_size_bytes=262144",
            "buffer.kind=lru",
            "buffer.size_bytes=262144",
        ],
    );
}
#[test]
fn deb_no_ebr_checkpoint() {
    check("deb0-cp", &["ftl.placement=deb", "deb.ebr_size_bytes=0", "serve.recovery=checkpoint"]);
}

/// The harness can fail: with the battery modelled as failed, the RAM region's pages are
/// dropped at every start-up, and the model sees flushed writes lost (while the device reports
/// them as lost, not silently).
#[test]
fn a_failed_battery_loses_flushed_ram_pages_and_the_harness_sees_it() {
    let errors = run(
        "deb-dead-battery",
        &["ftl.placement=deb", "deb.ebr_size_bytes=262144", "serve.ram_region_battery=failed"],
        6,
        400,
        7,
    );
    assert!(errors.len() > 10, "{errors:?}");
}
