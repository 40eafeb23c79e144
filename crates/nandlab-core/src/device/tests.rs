//! The parallel sim-engine through the whole stack (device, page FTL, allocation, engine).
//! Goal: closed forms exact to the nanosecond on tiny devices; saturated throughput matching
//! the documented bounds (command time and planes included) within 2 % over a random matrix
//! of shapes and timings; invariants on random runs over every hardware shape, scheduler,
//! allocation and cleaning mode; background cleaning working in idle time and yielding to host
//! reads; the one model change a single die shows.
//! Method: devices built from configs (`--set` keys), driven by hand-placed requests or by
//! `sim::run` over synthetic workloads.

use crate::config::Config;
use crate::device::{Device, Dispatched, Effects, Submission};
use crate::flash::Lpn;
use crate::metrics::Metrics;
use crate::request::Request;
use crate::sim::{self, RunOptions};
use crate::workload::{Synthetic, WorkItem};
use std::convert::Infallible;

const C: u64 = 1_000;
const R: u64 = 25_000;
const X: u64 = 10_000;
const P: u64 = 200_000;
const E: u64 = 1_500_000;

fn overrides(extra: &[&str]) -> Vec<String> {
    let mut o: Vec<String> = vec![
        "device.page_size_bytes=4096".into(),
        "device.pages_per_block=16".into(),
        format!("timing.command_ns={C}"),
        format!("timing.read_page_ns={R}"),
        format!("timing.transfer_page_ns={X}"),
        format!("timing.program_page_ns={P}"),
        format!("timing.erase_block_ns={E}"),
        "timing.ram_page_ns=100".into(),
    ];
    o.extend(extra.iter().map(|s| (*s).to_string()));
    o
}

fn device(extra: &[&str]) -> Device {
    let r = Config::from_overrides(&overrides(extra)).unwrap().resolve().unwrap();
    Device::new(&r, None).unwrap()
}

fn run(extra: &[&str]) -> Metrics {
    let r = Config::from_overrides(&overrides(extra)).unwrap().resolve().unwrap();
    let mut d = Device::new(&r, None).unwrap();
    let items = Synthetic::new(&r.workload).map(Ok::<_, std::convert::Infallible>);
    let options = RunOptions { check_every_requests: 997, ..RunOptions::of(&r) };
    sim::run(&mut d, items, options, &mut |_| {}).unwrap()
}

const PAGE: u64 = 4096;

#[test]
fn an_isolated_read_and_a_write_take_their_closed_forms() {
    let mut d = device(&["device.blocks=64"]);
    let w = d
        .dispatch(Submission::new(&Request::write(0, PAGE).at(0)))
        .map(Dispatched::completion)
        .unwrap();
    assert_eq!(w.latency_ns(), C + X + P);
    let r = d
        .dispatch(Submission::new(&Request::read(0, PAGE).at(10_000_000)))
        .map(Dispatched::completion)
        .unwrap();
    assert_eq!(r.latency_ns(), C + R + X);
    assert_eq!((r.start_ns, r.complete_ns), (10_000_000, 10_000_000 + C + R + X));
}

#[test]
fn k_pages_of_one_write_go_to_k_idle_gangs_at_once() {
    // Dynamic allocation spreads the pages over the idle dies: all in parallel.
    for k in [1u64, 2, 4] {
        let gangs = format!("device.gangs={k}");
        let mut d = device(&[gangs.as_str(), "device.blocks=64"]);
        let w = d
            .dispatch(Submission::new(&Request::write(0, k * PAGE).at(0)))
            .map(Dispatched::completion)
            .unwrap();
        assert_eq!(w.latency_ns(), C + X + P, "{k} gangs");
        let m = d.metrics();
        assert_eq!(m.parallel.unit_busy_ns, vec![C + X + P; k as usize]);
    }
    // The same pages on one bus of K chips: their commands and data go in turn.
    let mut d = device(&["device.chips_per_channel=4", "device.blocks=64"]);
    let w = d
        .dispatch(Submission::new(&Request::write(0, 4 * PAGE).at(0)))
        .map(Dispatched::completion)
        .unwrap();
    assert_eq!(w.latency_ns(), 4 * (C + X) + P);
}

#[test]
fn a_gang_stripes_its_effective_page_over_its_channels() {
    // 4 channels in a gang: the effective page is 16 KiB, written in one operation.
    let mut d = device(&["device.channels_per_gang=4", "device.blocks=256"]);
    assert_eq!(d.geometry().page_size_bytes, 4 * PAGE);
    let w = d
        .dispatch(Submission::new(&Request::write(0, 4 * PAGE).at(0)))
        .map(Dispatched::completion)
        .unwrap();
    assert_eq!(w.latency_ns(), C + X + P);
    // A partial effective page is a read-modify-write: the read, then the program.
    let w = d
        .dispatch(Submission::new(&Request::write(0, PAGE).at(10_000_000)))
        .map(Dispatched::completion)
        .unwrap();
    assert_eq!(w.latency_ns(), (C + R + X) + (C + X + P));
}

#[test]
fn a_two_page_write_on_two_planes_is_one_multi_plane_program() {
    let mut d = device(&["device.planes_per_die=2", "device.blocks=64"]);
    let w = d
        .dispatch(Submission::new(&Request::write(0, 2 * PAGE).at(0)))
        .map(Dispatched::completion)
        .unwrap();
    assert_eq!(w.latency_ns(), C + 2 * X + P);
    // Read back both: one array time, both pages out.
    let r = d
        .dispatch(Submission::new(&Request::read(0, 2 * PAGE).at(10_000_000)))
        .map(Dispatched::completion)
        .unwrap();
    assert_eq!(r.latency_ns(), C + R + 2 * X);
}

#[test]
fn a_read_on_another_chip_passes_a_write_queued_behind_cleaning() {
    // Two chips on one bus. A write at t=0 programs chip 0; a read of a page on chip 1 issued
    // meanwhile is served at once.
    let mut d = device(&["device.chips_per_channel=2", "device.blocks=64"]);
    d.dispatch(Submission::new(&Request::write(0, PAGE).at(0)))
        .map(Dispatched::completion)
        .unwrap(); // page 0 → chip 0
    d.dispatch(Submission::new(&Request::write(PAGE, PAGE).at(0)))
        .map(Dispatched::completion)
        .unwrap(); // page 1 → chip 1
    let t = 10_000_000;
    let w = d
        .dispatch(Submission::new(&Request::write(0, PAGE).at(t)))
        .map(Dispatched::completion)
        .unwrap(); // chip 0 again (idle: first)
    let r = d
        .dispatch(Submission::new(&Request::read(PAGE, PAGE).at(t + 1)))
        .map(Dispatched::completion)
        .unwrap();
    assert!(r.complete_ns < w.complete_ns, "{r:?} vs {w:?}");
}

#[test]
fn a_buffer_hit_does_not_wait_for_the_flash() {
    // The one model change on a single die (documented): RAM-only work no longer queues
    // behind flash work. Two-page LRU buffer: the third page's write evicts the first (a
    // program, 211 µs); a hit on the second page arriving 1 µs later completes after its RAM
    // time alone.
    let mut d = device(&["device.blocks=64", "buffer.kind=lru", "buffer.size_bytes=8192"]);
    d.dispatch(Submission::new(&Request::write(0, PAGE).at(0)))
        .map(Dispatched::completion)
        .unwrap();
    d.dispatch(Submission::new(&Request::write(PAGE, PAGE).at(1_000)))
        .map(Dispatched::completion)
        .unwrap();
    let evict = d
        .dispatch(Submission::new(&Request::write(2 * PAGE, PAGE).at(2_000)))
        .map(Dispatched::completion)
        .unwrap();
    assert_eq!(evict.effects.flash_program_pages, 1);
    let hit = d
        .dispatch(Submission::new(&Request::write(PAGE, PAGE).at(3_000)))
        .map(Dispatched::completion)
        .unwrap();
    assert_eq!(hit.effects.flash_program_pages, 0);
    assert_eq!(hit.latency_ns(), 100, "RAM time only");
    assert!(hit.complete_ns < evict.complete_ns);
}

/// A completion's effects are tracked by default, not while tracking is off (what the run
/// loop does for its requests, restoring the setting after), and the rest of the completion
/// does not change with them.
#[test]
fn effects_are_tracked_unless_turned_off() {
    let mut on = device(&["device.blocks=64"]);
    let mut off = device(&["device.blocks=64"]);
    assert!(off.track_effects(false), "on by default");
    for i in 0..200u64 {
        let req = Request::write((i * 7 % 40) * PAGE, PAGE).at(i * 1_000);
        let a = on.dispatch(Submission::new(&req)).map(Dispatched::completion).unwrap();
        let b = off.dispatch(Submission::new(&req)).map(Dispatched::completion).unwrap();
        assert_eq!(a.effects.flash_program_pages, 1 + a.effects.gc_copied_pages, "{a:?}");
        assert_eq!(b.effects, Effects::default());
        assert_eq!((a.start_ns, a.complete_ns), (b.start_ns, b.complete_ns));
    }
    let mut d = device(&["device.blocks=64"]);
    let items = (0..10u64).map(|i| {
        Ok::<_, std::convert::Infallible>(WorkItem::Request(Request::write(i * PAGE, PAGE)))
    });
    crate::sim::run(&mut d, items, crate::sim::RunOptions::default(), &mut |_| {}).unwrap();
    assert!(d.track_effects(true), "the run loop restores the setting");
}

/// Saturated closed-loop throughput (requests per second of simulated time) at a queue depth
/// of 64 per die, with no command time (the presets' model): see
/// `saturated_reads_scale_with_the_units_until_the_bus_binds`.
fn saturated(dies: u32, extra: &[&str]) -> Metrics {
    let qd = format!("workload.queue_depth={}", 64 * dies);
    let mut o = vec![qd.as_str(), "timing.command_ns=0"];
    o.extend_from_slice(extra);
    run(&o)
}

#[test]
fn saturated_reads_scale_with_the_units_until_the_bus_binds() {
    // Random 4 KiB reads of a prefilled device, 64 in flight per die. A read holds its die for
    // R + x and its bus for x: the bound is min(dies / (R + x), gangs / x) — reached, as the
    // transfers of a saturated bus follow one another and each die's next read starts as its
    // transfer ends, less the dies a random stream of finite depth leaves idle now and then.
    // (With a command time c > 0 a bus runs in rounds instead, below the resources' bound
    // min(dies / (c + R + x), gangs / (c + x)): `Bench::reads_per_s`, checked below.)
    let reads = [
        "device.blocks=512",
        "workload.read_fraction=0.999",
        "workload.passes=0.02",
        "workload.warmup_passes=0",
    ];
    for (gangs, chips) in [(1u32, 1u32), (1, 2), (1, 4), (1, 8), (2, 1), (4, 1), (4, 4), (16, 1)] {
        let g = format!("device.gangs={gangs}");
        let ch = format!("device.chips_per_channel={chips}");
        let mut o: Vec<&str> = vec![&g, &ch];
        o.extend_from_slice(&reads);
        let got = saturated(gangs * chips, &o).parallel.iops;
        let dies = f64::from(gangs * chips);
        let bound = (dies / (R + X) as f64).min(f64::from(gangs) / X as f64) * 1e9;
        let err = (got / bound - 1.0).abs();
        eprintln!(
            "reads {gangs} gangs x {chips} chips: {got:.0} IOPS, bound {bound:.0} ({:.2} %)",
            err * 100.0
        );
        assert!(err < 0.02, "{gangs}x{chips}: {got} vs {bound}");
    }
}

#[test]
fn saturated_writes_scale_with_the_units_until_the_bus_binds() {
    // Random 4 KiB writes on an erased device with room for all of them (no cleaning): a
    // program holds its die for x + P and its bus for x; dynamic allocation sends each page
    // to the die that will be free first.
    let writes = ["workload.prefill=false", "workload.warmup_passes=0", "workload.passes=0.5"];
    for (gangs, chips) in [(1u32, 1u32), (1, 4), (2, 2), (1, 16), (1, 32), (4, 4)] {
        let g = format!("device.gangs={gangs}");
        let ch = format!("device.chips_per_channel={chips}");
        let blocks = format!("device.blocks={}", 64 * gangs * chips);
        let mut o: Vec<&str> = vec![&g, &ch, &blocks];
        o.extend_from_slice(&writes);
        let m = saturated(gangs * chips, &o);
        assert_eq!(m.erases, 0, "no cleaning in this window");
        let dies = f64::from(gangs * chips);
        let bound = (dies / (X + P) as f64).min(f64::from(gangs) / X as f64) * 1e9;
        let err = (m.parallel.iops / bound - 1.0).abs();
        eprintln!(
            "writes {gangs} gangs x {chips} chips: {:.0} IOPS, bound {bound:.0} ({:.2} %)",
            m.parallel.iops,
            err * 100.0
        );
        assert!(err < 0.02, "{gangs}x{chips}: {} vs {bound}", m.parallel.iops);
    }
}

/// One device of the saturated-bound matrix: the hardware, its timing (ns) and its page.
#[derive(Clone, Copy, Debug)]
struct Bench {
    gangs: u32,
    chips: u32,
    dies_per_chip: u32,
    planes: u32,
    channels_per_gang: u32,
    page_bytes: u64,
    c: u64,
    r: u64,
    x: u64,
    p: u64,
}

impl Bench {
    fn dies_per_gang(&self) -> u64 {
        u64::from(self.chips * self.dies_per_chip)
    }

    fn dies(&self) -> u64 {
        u64::from(self.gangs) * self.dies_per_gang()
    }

    /// Saturated random page reads per second (README "Saturated throughput"). A read holds
    /// its die for c + t_R + x and its bus for c, then x; the engine reserves both bus slots
    /// when it times the read, so the data outs of reads timed earlier come before a die's next
    /// command. With c = 0 the command takes no bus slot and the bound is the resources':
    /// n ÷ (t_R + x) per bus of n dies, or 1 ÷ x. With c > 0 a bus settles into rounds: m
    /// commands back to back (as many as fit before the first of them has its data ready,
    /// m = min(n, ⌊t_R ÷ c⌋ + 1)), then their m data outs, each after its array time and
    /// after the previous one (spaced max(c, x)), and the next round's commands only after the
    /// last of them — the gaps between data outs are shorter than a command. A round takes
    /// c + t_R + (m − 1)·max(c, x) + x. Random reads seldom share a page offset, so they stay
    /// single-plane: planes do not enter.
    fn reads_per_s(&self) -> f64 {
        let (n, c, r, x) = (self.dies_per_gang(), self.c, self.r, self.x);
        let per_bus = match r.checked_div(c) {
            None => (n as f64 / (r + x) as f64).min(1.0 / x as f64),
            Some(r_over_c) => {
                let m = n.min(r_over_c + 1);
                m as f64 / (c + r + (m - 1) * c.max(x) + x) as f64
            }
        };
        f64::from(self.gangs) * per_bus * 1e9
    }

    /// Saturated random page writes per second on a clean device (README "Saturated
    /// throughput"): a die's queued writes on its k planes (taken in turn by `dynamic`
    /// allocation, so at one page offset) go out as one multi-plane program, k pages per
    /// c + k·x of the bus and c + k·x + t_PROG of the die; the dies or the bus bind.
    fn writes_per_s(&self) -> f64 {
        let (n, k) = (self.dies_per_gang() as f64, f64::from(self.planes));
        let (c, x, p) = (self.c as f64, self.x as f64, self.p as f64);
        let per_bus = (n * k / (c + k * x + p)).min(k / (c + k * x));
        f64::from(self.gangs) * per_bus * 1e9
    }

    /// A device of this shape with `blocks_per_plane` blocks on each plane, the pages per
    /// block given, 64 requests in flight per die.
    fn device(&self, pages_per_block: u32, blocks_per_plane: u32) -> (Device, RunOptions) {
        let planes = self.dies() as u32 * self.planes;
        let o = vec![
            format!("device.page_size_bytes={}", self.page_bytes),
            format!("device.pages_per_block={pages_per_block}"),
            format!("device.blocks={}", planes * self.channels_per_gang * blocks_per_plane),
            format!("device.gangs={}", self.gangs),
            format!("device.channels_per_gang={}", self.channels_per_gang),
            format!("device.chips_per_channel={}", self.chips),
            format!("device.dies_per_chip={}", self.dies_per_chip),
            format!("device.planes_per_die={}", self.planes),
            format!("timing.command_ns={}", self.c),
            format!("timing.read_page_ns={}", self.r),
            format!("timing.transfer_page_ns={}", self.x),
            format!("timing.program_page_ns={}", self.p),
            format!("timing.erase_block_ns={E}"),
            // Half the flash spare: room for the cleaner's reserve on small devices.
            "device.utilization=0.5".into(),
            format!("workload.queue_depth={}", 64 * self.dies()),
        ];
        let r = Config::from_overrides(&o).unwrap().resolve().unwrap();
        (Device::new(&r, None).unwrap(), RunOptions::of(&r))
    }

    /// Measured saturated random reads per second: `count` reads of one effective page each,
    /// of pages written first (one block's worth per plane). The reads go to the dies in turn,
    /// each to a random page of its die, so that every die's queue stays full (a stream
    /// uniform over the pages leaves a die idle whenever chance empties its queue, and ends
    /// with the fullest queues draining alone).
    fn measured_reads_per_s(&self, count: u64, rng: &mut crate::rng::Prng) -> f64 {
        // Many pages per block: a multi-plane read needs two reads at one page offset among
        // the few a die's scheduler looks at, about 2·(k − 1) ÷ pages per block of them.
        let ppb = 1024;
        let (mut d, options) = self.device(ppb, 8);
        let page = self.page_bytes * u64::from(self.channels_per_gang);
        let written = self.dies() as u32 * self.planes * ppb;
        let prefill =
            (0..written).map(|i| WorkItem::Request(Request::write(u64::from(i) * page, page)));
        let items = prefill.chain(std::iter::once(WorkItem::PrefillDone));
        sim::run(&mut d, items.map(Ok::<_, Infallible>), options, &mut |_| {}).unwrap();
        let mut by_die = vec![Vec::new(); self.dies() as usize];
        let (ftl, hw) = (d.ftl(), *d.ftl().flash().engine().hardware());
        for lpn in 0..written {
            let (ppn, _) = ftl.locate(Lpn::new(lpn)).expect("written");
            let plane = hw.plane_of_block(ftl.flash().block_of(ppn).get());
            by_die[hw.die_of_plane(plane) as usize].push(u64::from(lpn));
        }
        let reads = (0..count).map(|i| {
            let pages = &by_die[(i % self.dies()) as usize];
            let lpn = pages[rng.below(pages.len() as u64) as usize];
            WorkItem::Request(Request::read(lpn * page, page))
        });
        let items = std::iter::once(WorkItem::StartMeasurement).chain(reads);
        let m = sim::run(&mut d, items.map(Ok::<_, Infallible>), options, &mut |_| {}).unwrap();
        assert_eq!(m.host_read_requests, count);
        m.parallel.iops
    }

    /// Measured saturated random writes per second: `count` writes of one effective page each
    /// on an erased device with room for all of them (no cleaning).
    fn measured_writes_per_s(&self, count: u64, rng: &mut crate::rng::Prng) -> f64 {
        let ppb = 64;
        let planes = self.dies() * u64::from(self.planes);
        let blocks_per_plane = 8 + 2 * count.div_ceil(planes * u64::from(ppb)) as u32;
        let (mut d, options) = self.device(ppb, blocks_per_plane);
        let page = self.page_bytes * u64::from(self.channels_per_gang);
        let logical = d.geometry().logical_pages;
        let items = std::iter::once(WorkItem::StartMeasurement).chain(
            (0..count).map(|_| WorkItem::Request(Request::write(rng.below(logical) * page, page))),
        );
        let m = sim::run(&mut d, items.map(Ok::<_, Infallible>), options, &mut |_| {}).unwrap();
        assert_eq!((m.host_write_requests, m.erases), (count, 0), "no cleaning");
        m.parallel.iops
    }
}

#[test]
fn saturated_throughput_meets_its_bound_over_a_random_matrix() {
    // Random shapes (1 to 32 dies over gangs, chips and dies per chip; 1 to 4 planes; 1 or 2
    // channels per gang), command times 0 to 5 µs, array times, page sizes and bus rates:
    // saturated random page reads and writes reach `Bench`'s bounds within 2 %, and exceed
    // them by no more than rounding (0.2 %) — reads on several planes by up to 1 %: the
    // multi-plane reads that happen to find two queued reads at one page offset.
    let mut rng = crate::rng::Prng::for_stream(5, "saturated-bounds");
    // Lowest and highest measured ÷ bound − 1, for reads and for writes.
    let mut worst = [(0.0f64, 0.0f64); 2];
    let pick = |rng: &mut crate::rng::Prng, options: &[u64]| {
        options[rng.below(options.len() as u64) as usize]
    };
    // Two corners first: 32 dies on one bus with commands longer than transfers (rounds of 5
    // reads, the gaps between data outs idle), and a 1 ns command (already in rounds).
    let corner = |chips, dies_per_chip, planes, c, r, x, p| Bench {
        gangs: 1,
        chips,
        dies_per_chip,
        planes,
        channels_per_gang: 1,
        page_bytes: 4096,
        c,
        r,
        x,
        p,
    };
    let mut benches =
        vec![corner(8, 4, 1, 5_000, 20_000, 2_560, 300_000), corner(4, 1, 2, 1, R, X, P)];
    while benches.len() < 48 {
        let b = Bench {
            gangs: pick(&mut rng, &[1, 1, 2, 4]) as u32,
            chips: pick(&mut rng, &[1, 2, 4, 8]) as u32,
            dies_per_chip: pick(&mut rng, &[1, 2, 4]) as u32,
            planes: 1 + rng.below(4) as u32,
            channels_per_gang: pick(&mut rng, &[1, 1, 2]) as u32,
            page_bytes: pick(&mut rng, &[2048, 4096, 8192, 16_384]),
            c: if rng.below(4) == 0 { 0 } else { 1 + rng.below(5_000) },
            r: pick(&mut rng, &[20_000, 30_000, 50_000, 90_000]) + rng.below(10_000),
            x: 0,
            p: 150_000 + rng.below(1_350_000),
        };
        if b.dies() <= 32 {
            // A flash page over the bus at 200 to 1600 MB/s.
            let rate = pick(&mut rng, &[200, 400, 800, 1600]);
            benches.push(Bench { x: b.page_bytes * 1_000 / rate, ..b });
        }
    }
    for b in benches {
        let reads = b.measured_reads_per_s(4_000 + 400 * b.dies(), &mut rng);
        let writes =
            b.measured_writes_per_s(2_000 + 1600 * b.dies() * u64::from(b.planes), &mut rng);
        let read_above = if b.planes == 1 { 0.002 } else { 0.01 };
        let checks = [
            ("reads", reads, b.reads_per_s(), read_above),
            ("writes", writes, b.writes_per_s(), 0.002),
        ];
        for (i, (what, got, bound, above)) in checks.into_iter().enumerate() {
            let err = got / bound - 1.0;
            eprintln!("{what} {b:?}: {got:.0} per s, bound {bound:.0} ({:+.2} %)", err * 100.0);
            assert!((-0.02..above).contains(&err), "{what} {b:?}: {got:.0} vs {bound:.0}");
            worst[i] = (worst[i].0.min(err), worst[i].1.max(err));
        }
    }
    let pct = |(lo, hi): (f64, f64)| format!("{:+.2} % to {:+.2} %", lo * 100.0, hi * 100.0);
    eprintln!("reads {}, writes {}", pct(worst[0]), pct(worst[1]));
}

#[test]
fn random_runs_keep_every_invariant() {
    // Every hardware shape, scheduler, allocation, cleaning mode and queue depth on small
    // devices with reads, writes and trims of several sizes: every request completes once
    // (latency counts = request counts), no die is busy more than the simulated time, the
    // FTL's and the engine's full checks pass every 997 requests, and simulated time moves.
    let mut rng = crate::rng::Prng::for_stream(7, "device-tests");
    for case in 0..24 {
        let pick = |rng: &mut crate::rng::Prng, n: u64| rng.below(n);
        let gangs = 1 + pick(&mut rng, 2);
        let chips = 1 + pick(&mut rng, 3);
        let planes = 1 + pick(&mut rng, 2);
        let cpg = 1 + pick(&mut rng, 2);
        let scheduler = ["fifo", "read-priority"][pick(&mut rng, 2) as usize];
        let allocation = ["dynamic", "round-robin", "static"][pick(&mut rng, 3) as usize];
        let gc = ["foreground", "background"][pick(&mut rng, 2) as usize];
        let qd = [1, 4, 32][pick(&mut rng, 3) as usize];
        let arrival = if pick(&mut rng, 3) == 0 { "poisson" } else { "closed" };
        let kind = ["uniform", "hotcold"][pick(&mut rng, 2) as usize];
        let pages = 1 + pick(&mut rng, 3);
        let rows = gangs * chips * planes;
        let o: Vec<String> = vec![
            format!("device.gangs={gangs}"),
            format!("device.chips_per_channel={chips}"),
            format!("device.planes_per_die={planes}"),
            format!("device.channels_per_gang={cpg}"),
            format!("device.blocks={}", rows * cpg * (24 + pick(&mut rng, 24))),
            "device.utilization=0.7".into(),
            format!("ftl.scheduler={scheduler}"),
            format!("ftl.allocation={allocation}"),
            format!("ftl.gc_mode={gc}"),
            format!("workload.kind={kind}"),
            "workload.read_fraction=0.3".into(),
            format!("workload.request_bytes={}", pages * 4096 * cpg - 512),
            format!("workload.arrival={arrival}"),
            format!("workload.queue_depth={}", if arrival == "closed" { qd } else { 1 }),
            format!("run.seed={case}"),
        ];
        let mut o: Vec<String> = o;
        if arrival == "poisson" {
            o.push("workload.arrival_rate_per_s=3000".into());
        }
        let refs: Vec<&str> = o.iter().map(String::as_str).collect();
        let m = run(&refs);
        let label = o.join(" ");
        assert_eq!(m.read_latency_ns.count, m.host_read_requests, "{label}");
        assert_eq!(m.write_latency_ns.count, m.host_write_requests, "{label}");
        assert_eq!(m.read_queue_ns.count, m.host_read_requests, "{label}");
        assert!(m.sim_time_ns > 0, "{label}");
        for (i, &busy) in m.parallel.unit_busy_ns.iter().enumerate() {
            assert!(busy <= m.sim_time_ns, "die {i} busy {busy} > {}: {label}", m.sim_time_ns);
        }
        for &u in &m.parallel.channel_utilization {
            assert!(u <= 1.0 + 1e-9, "bus over 100 %: {label}");
        }
        assert!(m.write_amplification >= 1.0, "{label}");
    }
}

#[test]
fn background_cleaning_works_in_idle_time_and_yields_to_reads() {
    // Bursts of writes separated by idle time (Poisson at a low rate): with background
    // cleaning the writes find free blocks (little foreground cleaning: lower write latency),
    // the cleaning itself is the same work (same erase count within noise), and reads never
    // wait for more than one background operation.
    let base = [
        "device.blocks=256",
        "device.chips_per_channel=2",
        "device.utilization=0.8",
        "workload.kind=hotcold",
        "workload.read_fraction=0.2",
        "workload.arrival=poisson",
        "workload.arrival_rate_per_s=800",
        "workload.passes=2",
    ];
    let fg = run(&base);
    let mut o = base.to_vec();
    o.push("ftl.gc_mode=background");
    let bg = run(&o);
    eprintln!(
        "write latency mean fg {:.0} bg {:.0}; p99 fg {} bg {}; erases fg {} bg {}",
        fg.write_latency_ns.mean,
        bg.write_latency_ns.mean,
        fg.write_latency_ns.p99,
        bg.write_latency_ns.p99,
        fg.erases,
        bg.erases
    );
    assert!(bg.write_latency_ns.mean < 0.5 * fg.write_latency_ns.mean);
    assert!(bg.write_latency_ns.p99 < fg.write_latency_ns.p99);
    let ratio = bg.erases as f64 / fg.erases as f64;
    assert!((0.9..1.2).contains(&ratio), "background cleaning does about the same work");
    // A read waits at most for one operation under way (an erase) plus its own time, plus a
    // write's program ahead of it on a die under FIFO.
    assert!(bg.read_latency_ns.max <= C + E + 2 * (C + X + P) + C + R + X + 1_000);
}
