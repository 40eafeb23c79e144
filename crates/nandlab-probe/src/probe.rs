//! Black-box geometry probes (the geometry paper, its Figures 4–7, docs/PAPERS.md;
//! docs/ALGORITHMS.md §9), plus the number of parallel units (ours).
//!
//! - **Effective page** (Fig. 4, searched over every multiple of the sector): for each size
//!   x = 2, 3, … sectors, 8 pairs of writes — one at k·x, one a sector further, k = 0 … 7 —
//!   the median of at least three passes each. Offset 0 is
//!   aligned to any page, so at x = P every aligned write is one page and every shifted one
//!   spans two (one program against two read-modify-writes: slower by 10 % or more even when
//!   the two run at once on a parallel device); below P the k = 0 pair fits one page, and at a
//!   divisor of P only the pairs ending a page straddle. The page is the first x where all
//!   pairs but one (spared for a stall) show the step, or a weak step: all but one 1.5 % and
//!   4 typical deviations of the sizes below slower, k = 0 among them (the two pages of a
//!   shifted write run side by side on a parallel device: a read and a transfer more, 2–3 %;
//!   said with confidence 0.7 at most). The **read variant** (Fig. 7d: a write
//!   cache that absorbs writes, seen as writes completing faster than reads) reads
//!   instead, at a power-of-two unit and 1 KiB past the next, each pass on pages no earlier
//!   read touched (a cache that allocates on a read miss would answer a repeated read); it
//!   finds only pages that divide a power of two. The writes' search runs too: where it finds
//!   a different step, that step is the page (with confidence 0.5; a cache that destages as
//!   it fills lets the writes' step through, while what it keeps fools the reads).
//! - **Block** (ours, in place of the paper's Fig. 5 knee, which can only land on the sizes it
//!   tries and, on a page FTL striping a stream over several planes, sees all their blocks as
//!   one): the device is written sequentially in pages (the effective page found above), then
//!   overwritten three times in the same order, one write at a time, each timed. The blocks
//!   the first pass filled go wholly invalid in turn, so each block a later pass fills costs
//!   one erase (a log-structured FTL cleaning a victim with nothing to copy) or one switch
//!   merge (a block-mapped FTL): a spike in one write's latency (≥ 2.5× the median and half
//!   the 99th percentile). The spikes repeat with a period (the smallest lag, no shorter than
//!   any gap between them, after which 85 % of them recur), taken to a fraction of a write over
//!   chains of spikes a period apart; the block is that period ÷ the erases in its recurring
//!   spikes (a spike twice the typical one's excess is two), said as sure as both periods fall
//!   near whole pages. Where the spikes show no period (planes cleaning out of step), the
//!   block is the passes' writes ÷ their erases, said with confidence 0.3 at most. One
//!   spike per period, all alike, may still carry several blocks (SAST merges a group's two
//!   log blocks together): last of all the probes, a halving test overwrites only the first
//!   half of every block found, then only a half straddling two halves; when the first costs
//!   per write what the passes did and the second several times that (the halves it leaves are
//!   copied), the half is the block. When the passes find no period, or one their erases do
//!   not divide into whole pages (confidence 0), and a FLUSH after them takes longer than a
//!   write (a buffer held writes back), a write buffer in front may have put its own rhythm on
//!   the spikes (it destages in groups it chooses): the device is laid out again and passed
//!   over three times more with a FLUSH after every write (timed with it), which hands the FTL
//!   one page at a time, in order; that answer is kept when its confidence is higher (the
//!   halving test then flushes too). Not always: a page FTL striping over many planes spikes
//!   irregularly when fed one page at a time, where a buffer's grouped destaging evens it out.
//! - **Zone** (Fig. 6): reads of A and B = A + d alternate for d = 64 KiB, 128 KiB, … (each
//!   read a page of its own near A or B, so no cache answers it); once B
//!   falls in another zone of the mapping table than A, a device that keeps one zone resident
//!   reloads a table on every read and B's latency steps up. B's latency at d is the median
//!   of every B read there (rounds × repeats; B's pages start on a page boundary, and a read
//!   under a quarter of the median of all, from a cache, is left out; pages the block probe
//!   wrote are read as they are, since pages written here would stay in a FAB buffer); the
//!   curve is flat, then steps up and stays up,
//!   so the zone is the split of the curve into a short part and a long part with the largest
//!   gap (the long part's lowest ÷ the short part's highest), when that gap is ≥ 1.2 and at
//!   least twice the short part's own spread. That split brackets the zone between two powers
//!   of two; a bisection in effective pages then finds the smallest d whose every B read (one
//!   read of a fresh page of A before each) is above the geometric mean of a B read in A's
//!   zone and one beyond the step: the zone, any whole number of pages. The bisection reads
//!   every page once (a read cache would answer a second read without touching the table:
//!   a cached B reads low in any zone, a cached A leaves B's table resident), drops reads
//!   far faster than a flash read, and takes a page tested before from its first read. Reads
//!   are one effective page each (a 4 KiB read of a larger page would share it with the next
//!   read).
//! - **Parallel units** (ours): the dies, counted by collisions. Two reads issued together
//!   take about one read when they go to two dies (plus a transfer when they share a bus) and
//!   about two when they go to one (a die reads one page at a time), whatever the planes, the
//!   bus or the client's round trip (it adds to both alike). Fresh random 4 KiB pages (each
//!   read once: a cache would answer a second read) are read each with a member of every class
//!   found so far until a pair takes over 1.5x one read (the page joins that class) or none
//!   does (a new class); it stops once 6 (K + 1) + 10 pages in a row fell in the K known
//!   classes (a die not seen yet is then missed with probability under e^-6). Throughput
//!   ratios were not used: random reads collide on dies, the bus binds reads from 4 dies on
//!   (writes from about 20 dies × planes), and a buffer answering reads counts as units. A
//!   read cache (two re-reads of a page answer fast) is detected, and then every pair waits
//!   until both its pages were read long enough ago to have been pushed out, by filler reads
//!   that cycle through a spacer (16 MiB written at the end of the area's zone, which also
//!   holds what a write buffer keeps of the last writes; written as soon as a fresh page
//!   answers from RAM, the area's last 4 pages, the last written, among them). When the area
//!   is one zone and a buffer holds pages just written (a fresh page answers from RAM, or
//!   reads in the next zone, after one that loads its table, take over 4x the area's: every
//!   page answered from RAM, the zone being smaller than the buffer), 16 MiB written after
//!   the zone push them out first, and the single reads are taken again. Where the area has
//!   room or the page is no whole number of 4 KiB (a read would span two pages), one read per
//!   effective page (a cache keeps whole logical pages), and behind a read
//!   cache however few pages the area holds (16 at least). The reads stay within one mapping
//!   zone when the zone probe found one (its first half when said with little confidence). Behind a cache that the
//!   spacer's filler reads never make let a page go (FAB evicts the fullest block first, so
//!   a page read alone stays while the spacer's blocks fill), the filler reads go to random
//!   pages of the area itself (half its pages, by a hash, no longer fresh) and on to the end
//!   of its zone or the device, so they fill the blocks the area's pages lie in; the window is
//!   then twice the most of 8 pages' (a page read just after its block went stays longest),
//!   and up to 256 fresh pages are classified together, each paired in turn when it and a
//!   member of a class it has still to try were read a window ago, so the other pages' pairs
//!   are most of the reads in between. When no window shows even so and the area is one zone
//!   (smaller than the cache), the filler reads go to random pages after the zone, and a read
//!   of a fresh page of the area after them loads its table before the pair (the pair would
//!   time the load besides). When no window shows at all, or the classes do not
//!   settle, a **stride test** takes over: pairs of pages k apart, each page
//!   read once, for k = 1, 2, …; an FTL that stripes pages written in order over its units puts
//!   pages N apart on one die, so the first k where 3 of 4 pairs take two reads, and again at
//!   2k, is N (pages 1 apart colliding: no striping, the test says nothing). Confidence: the
//!   gap between the slowest two-die pair and the fastest one-die pair; 0.2 at most when the
//!   count did not settle within 512 classes or half the area; for the stride, 0.9 when every
//!   pair at k and 2k collided and none closer came near, less otherwise, and with the caveats
//!   of the classes (below). A read
//!   cache's window is the longest of 8 pages' (each must show one: a cache evicting the
//!   fullest block keeps some pages while letting others go). When the area is one
//!   zone of four or more, no buffer intervenes and the pairs found no more classes than
//!   twice the area's blocks, +1 (a block-mapped FTL keeps a logical block on one die and its
//!   log block on another, so a zone of one block shows one die or two), the whole device is written and its pages are classed by **table
//!   loads** instead: a read of a page (its zone made resident first) issued with a read in
//!   zone B delays B's table load when that table lies on the page's die, so the zones whose
//!   loads a page delays (up to 64) are its die's signature; a page joins the class whose
//!   usual delays overlap its own in half of the smaller set (a stray delay from a load queued
//!   behind another is tolerated), with the same stopping rule. Pairs across zones are not
//!   timed directly: both tables load first, and two tables on one die look like a collision.
//!   Used when it finds more classes; confidence 0.5 at most (dies holding no table share one
//!   signature). A **table stride** follows when the block is known and fits a zone (the
//!   first two pages of 3 of 4 blocks colliding, each block's zone loaded first): every
//!   logical block is rewritten twice in order (spread evenly over the dies, so every die has
//!   room, and log blocks left by earlier probes merged), then the first one again and again,
//!   its zone made resident before each rewrite (a load under way makes a die look busy to an
//!   allocator picking idle dies); after each, which zones' first pages read with a page of it
//!   take a read more is its label. An FTL allocating blocks over its dies in turn brings it
//!   back to one die every N rewrites: the smallest period seen twice over and 8 more, every
//!   label a period later the same, two labels at least and only one (the dies holding no
//!   table) more than once in it, is N, used when above the classes found and when its
//!   labels are at least as many (a period that skips dies misses some); confidence 0.5 at
//!   most, and the caveats of the classes. **Block moves**: when the pairs found fewer
//!   classes than the area (the zone, or the device) has blocks, and the first two pages of
//!   a block collide in 3 of 4 blocks (a block-mapped FTL keeps a logical block on one die; a
//!   page FTL stripes them), the classes may be just the dies the FTL happened to put the
//!   blocks on. (Where neighbouring pages do not collide and the area holds at most 512
//!   effective pages, a small zone of a page FTL, the same is done with pages for blocks: a
//!   page rewritten goes to a page newly allocated.) Every logical block of the area (512 at
//!   most) is then rewritten whole, in
//!   order, in whole pages, and flushed (the FTL gives it a block newly allocated, on
//!   whichever die its allocator picks: a die holding no data has all its blocks free), and a
//!   page of it (of each half when the halving test is still to come: SAST's doubled block is
//!   two) is classified against one page per class, its anchor; then the blocks that joined a
//!   class are rewritten and classified again in turn, until 6 (K + 1) + 10 in a row joined
//!   one (or 512 moves more). Anchors' blocks stay put. A block is classified once its first
//!   pages read from flash (a write buffer holds the last blocks written, until later ones
//!   push them out). At the end the anchors are classified among themselves (a merge of a
//!   group's log blocks may move one onto another's die) and their classes are the count,
//!   used when it beats the pairs'; when every block but one became an anchor, confidence
//!   × 0.3 (more dies may hold none of them). Behind a read cache (blocks only) no page is
//!   read twice while the cache may hold it: filler reads cycling through 16 MiB after the
//!   zone (or in the device's last quarter, the blocks moved lying before it), each a miss,
//!   push a block just rewritten out until its highest page not yet read reads from flash
//!   (a page cache lets the oldest go first, a block cache the whole block); each pair then
//!   reads a page of each block not read since, and more filler reads follow when a block's
//!   pages run out; a block that collided with no anchor is tried once more with other
//!   pages (a block's pages may lie in two log blocks until a merge). Then (blocks only, and
//!   only when no block's
//!   halves fell on two dies: a rewrite would allocate two blocks) a **block stride** follows:
//!   an FTL that allocates blocks over its dies in turn puts one block rewritten again and
//!   again (an anchor's, when no other is left) back on one die every N rewrites, N the dies,
//!   however few blocks hold data (behind a write buffer that held the blocks just written,
//!   two blocks take turns, each read after the other's rewrite). Up to 192 rewrites, each
//!   classified against the anchors; the smallest period above the dies found, seen twice
//!   over and 8 rewrites more, in which every label repeats a period later and every anchor
//!   left comes once (two at least; a rewrite that allocated two blocks would skip half the
//!   dies), is N, confidence 0.6 at most (allocation in turn is the FTL's choice). A device
//!   that keeps its data on fewer dies than it has (a block-mapped FTL with fewer blocks than
//!   dies) and allocates otherwise shows fewer.
//!
//! Every step's time is the median of `repeats` measurements on wall-clock targets (one on the
//! simulator, whose times are exact). Each result carries a confidence in [0, 1]: the step's
//! size against the noise below it (`confidence`), and the raw curves.

use serde::Serialize;

use crate::target::Target;

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;

/// What to probe and how hard.
#[derive(Clone, Debug)]
pub struct ProbeOptions {
    /// Measurements per point on a wall-clock target (median taken).
    pub repeats: usize,
    /// Largest effective page searched (bytes).
    pub max_page_bytes: u64,
    /// Rounds of A, B reads per distance in the zone probe.
    pub zone_rounds: usize,
    /// Which probes run.
    pub page: bool,
    pub block: bool,
    pub zone: bool,
    pub parallel: bool,
}

impl Default for ProbeOptions {
    fn default() -> Self {
        Self {
            repeats: 7,
            max_page_bytes: MIB,
            zone_rounds: 8,
            page: true,
            block: true,
            zone: true,
            parallel: true,
        }
    }
}

/// A measured curve: `y[i]` at `x[i]` (units in the names).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Curve {
    pub name: String,
    pub x_label: String,
    pub y_label: String,
    pub x: Vec<f64>,
    pub y: Vec<f64>,
}

/// One detected size with its confidence.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Detected {
    /// `None`: no step found in the range probed.
    pub value: Option<u64>,
    pub confidence: f64,
    /// How it was found (which curve, what ratio).
    pub how: String,
}

/// Everything the probes found.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ProbeReport {
    pub target: String,
    pub simulated: bool,
    pub capacity_bytes: u64,
    pub effective_page_bytes: Option<u64>,
    pub block_bytes: Option<u64>,
    pub zone_bytes: Option<u64>,
    pub parallel_units: Option<u64>,
    pub page: Detected,
    pub block: Detected,
    pub zone: Detected,
    pub parallel: Detected,
    pub curves: Vec<Curve>,
    /// A simulated target's configured geometry, to compare with what was detected.
    pub configured: Option<crate::target::Geometry>,
    pub config: Option<serde_json::Value>,
    pub version: String,
}

fn median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v[v.len() / 2]
}

/// The median of measurements (upper one of an even count, as `median`).
fn median_f64(v: impl Iterator<Item = f64>) -> f64 {
    let mut v: Vec<f64> = v.collect();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

impl Curve {
    fn new(name: &str, x_label: &str, y_label: &str, x: &[f64], y: &[f64]) -> Self {
        Self {
            name: name.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            x: x.to_vec(),
            y: y.to_vec(),
        }
    }
}

/// Step size against the noise below it, in [0, 1].
fn confidence(step: f64, noise: f64) -> f64 {
    let step = (step - 1.0).max(0.0);
    if step == 0.0 {
        return 0.0;
    }
    step / (step + 2.0 * noise.abs())
}

/// Runs the probes `options` selects against `target`. Writes go anywhere on it: its content
/// is destroyed (the caller asks for consent on real devices).
pub fn probe(
    target: &mut dyn Target,
    options: &ProbeOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<ProbeReport, String> {
    let capacity = target.capacity_bytes();
    let repeats = if target.simulated() { 1 } else { options.repeats.max(1) };
    let mut report = ProbeReport {
        target: target.describe(),
        simulated: target.simulated(),
        capacity_bytes: capacity,
        config: target.config(),
        configured: target.truth(),
        version: nandlab_version::VERSION_STRING.to_string(),
        ..ProbeReport::default()
    };
    // The page first: the block probe writes in pages.
    if options.page {
        progress("effective page");
        page(target, options, repeats, &mut report)?;
    }
    let mut halving = None;
    if options.block {
        progress("block");
        halving = Some(block(target, &mut report)?);
    }
    let halves = halving.as_ref().is_some_and(|h| h.pages > 0);
    if options.zone {
        progress("zone");
        zone(target, options, repeats, &mut report)?;
    }
    if options.parallel {
        progress("parallel units");
        parallel(target, repeats, &mut report, halves)?;
    }
    // The block's halving test and die check last: they overwrite the device in patterns of
    // their own, and what the zone and parallel probes see depends on where the sequential
    // passes left the blocks.
    if let Some(mut h) = halving {
        h.zone_bytes = report.zone_bytes;
        if halves {
            progress("block halves");
            halve(target, &mut report, &h)?;
        }
        die_check(target, &mut report, &h, repeats)?;
    }
    Ok(report)
}

/// Times `f` `repeats` times, median.
fn timed(repeats: usize, mut f: impl FnMut() -> Result<u64, String>) -> Result<u64, String> {
    let mut v = Vec::with_capacity(repeats);
    for _ in 0..repeats {
        v.push(f()?);
    }
    Ok(median(v))
}

/// Where the effective-page probe's requests of 1 … `max_kib` KiB go, relative to their area:
/// per size, an aligned request at the start of a unit of `m` bytes (the largest page searched,
/// rounded up to a power of two, so every page of a size ≤ m that a request touches lies in the
/// units it touches) and a request 1 KiB past the start of the next unit (two units for the
/// largest, which crosses into a second). No two requests share a page of any size ≤ m.
struct PageUnits {
    /// `(aligned, shifted)` offsets per size.
    at: Vec<(u64, u64)>,
    /// The area's length.
    bytes: u64,
}

impl PageUnits {
    fn new(max_kib: u64) -> Self {
        let m = (max_kib * KIB).next_power_of_two();
        let mut next = 0;
        let at = (1..=max_kib)
            .map(|x| {
                let (aligned, shifted) = (next, next + m);
                next = shifted + (x * KIB + KIB).div_ceil(m) * m;
                (aligned, shifted + KIB)
            })
            .collect();
        Self { at, bytes: next }
    }
}

/// The read variant (the paper's Fig. 7d, for a write cache that absorbs the writes): sizes of
/// 1 … `max_kib` KiB at a unit of a power of two and 1 KiB past the next, each pass on pages
/// no earlier read touched (a cache that keeps what it read would answer a second read).
/// Found only for pages that divide a power of two; the writes' search holds for any page.
fn page_reads(
    t: &mut dyn Target,
    max_kib: u64,
    repeats: usize,
    r: &mut ProbeReport,
) -> Result<Detected, String> {
    let cap = t.capacity_bytes();
    let units = PageUnits::new(max_kib);
    let room = (cap - cap / 4).saturating_sub(units.bytes);
    let passes = (room / units.bytes).min(repeats as u64).max(1);
    write_through(t, 0, (units.bytes * (passes + 1)).min(cap))?;
    push_out(t)?;
    let mut reads = vec![[Vec::new(), Vec::new()]; max_kib as usize];
    for pass in 0..passes {
        let base = units.bytes + pass * units.bytes;
        for (x, &(aligned, shifted)) in (1..=max_kib).zip(&units.at) {
            let len = x * KIB;
            let r = &mut reads[(x - 1) as usize];
            r[0].push(t.read(base + aligned, len)?);
            r[1].push(t.read(base + shifted, len)?);
        }
    }
    let mut curves = [Vec::new(), Vec::new()];
    for [a, u] in reads {
        curves[0].push(median(a) as f64);
        curves[1].push(median(u) as f64);
    }
    let xs: Vec<f64> = (1..=max_kib).map(|x| x as f64).collect();
    for (c, name) in curves.iter().zip(["read at 0 KiB", "read at 1 KiB"]) {
        let name = format!("effective page: {name}");
        r.curves.push(Curve::new(&name, "request KiB", "response ns", &xs, c));
    }
    let mut d = page_step(&curves[0], &curves[1], &format!("reads ({passes} passes)"));
    d.how += " (writes complete faster than reads: a write cache absorbs them)";
    Ok(d)
}

/// The effective page from an aligned (`a`) and a shifted (`u`, 1 KiB in) response curve over
/// request sizes 1, 2, ... KiB: the first size where the shifted request is clearly slower.
fn page_step(a: &[f64], u: &[f64], what: &str) -> Detected {
    let ratio: Vec<f64> = a.iter().zip(u).map(|(a, u)| u / a.max(1.0)).collect();
    // At x = P the shifted request crosses into a second page and stays in two pages up
    // to 2P - 1, so its curve stays up one KiB later (a lone slow measurement does not).
    // Both must hold, from 2 KiB on.
    let step = |i: usize| i + 1 >= a.len() || u[i + 1] >= u[i] - 0.5 * (u[i] - a[i]);
    // The noise below x: the median deviation of the ratio from 1 (robust to a stall).
    let noise = |i: usize| median_f64(ratio[..i].iter().map(|q| (q - 1.0).abs()));
    // A step stands at least 15 % and four times the noise above 1.
    let found =
        (1..ratio.len()).find(|&i| ratio[i] >= 1.15 && ratio[i] - 1.0 >= 4.0 * noise(i) && step(i));
    match found {
        Some(i) => {
            let noise = noise(i);
            Detected {
                value: Some((i as u64 + 1) * KIB),
                confidence: confidence(ratio[i], noise),
                how: format!(
                    "{what}: shifted / aligned {:.2} at {} KiB, {:.2} typically below",
                    ratio[i],
                    i + 1,
                    1.0 + noise
                ),
            }
        }
        None => Detected {
            value: None,
            confidence: 0.0,
            how: format!("{what}: no step up to {} KiB", a.len()),
        },
    }
}

/// The step of the page probe's request sizes and its shift: the host's sector.
const SECTOR: u64 = 512;
/// Request pairs per size in the page probe (see `page`).
const PAGE_PAIRS: u64 = 8;

fn page(
    t: &mut dyn Target,
    o: &ProbeOptions,
    repeats: usize,
    r: &mut ProbeReport,
) -> Result<(), String> {
    let cap = t.capacity_bytes();
    // Sizes x = 2, 3, … sectors. For each, PAGE_PAIRS pairs: an aligned request at k·x and a
    // shifted one at k·x + one sector, k = 0 … PAGE_PAIRS − 1 (offset 0 is aligned to every
    // page, whatever its size). At x = P every aligned request is one whole page and every
    // shifted one spans two, so every pair shows the step. At any other x below 2P some pair
    // does not: k = 0's shifted request fits one page while x ≤ P − 1 sector, and at a divisor
    // of P (P/2, P/3, …) only the pairs whose k·x ends a page straddle. So a step is "all
    // pairs but one slower shifted" — the one spared for a stall (a merge, a cleaning) that
    // hits an aligned request.
    let max_x = o.max_page_bytes.min(cap / (2 * PAGE_PAIRS + 2));
    if max_x < 2 * SECTOR {
        return Err(format!(
            "the effective-page probe needs at least {} bytes of target",
            36 * SECTOR
        ));
    }
    // The pages the pairs touch hold data: a partial write then reads what it merges with, as
    // on a used drive. No more than that is written: the probes after this one find the
    // device as little changed as it can be.
    let area = ((PAGE_PAIRS + 1) * max_x + SECTOR).min(cap);
    write_through(t, 0, area)?;
    t.flush()?;
    // A write cache that completes writes before they reach the flash (faster than a read:
    // a NAND program is always slower than a read) hides the writes' step: then reads decide
    // (the paper's Fig. 7d). Judged on reads of pages of their own (a cache that keeps what it
    // read would answer a second read of one as fast as a write it absorbed), writes beside.
    let (n, step) = (repeats.max(5) as u64, 128 * KIB);
    let probe_at = area.saturating_sub(2 * n * step) / 2 / step * step;
    let (mut i, mut j) = (0, 0);
    let w = timed(n as usize, || {
        i += 1;
        t.write(probe_at + (i - 1) * 2 * step, 4 * KIB)
    })?;
    let rd = timed(n as usize, || {
        j += 1;
        t.read(probe_at + (j - 1) * 2 * step + step, 4 * KIB)
    })?;
    if w < rd {
        r.page = page_behind_cache(t, o, max_x, repeats, r)?;
        r.effective_page_bytes = r.page.value;
        return Ok(());
    }
    // At least three passes, even on the simulator: a cleaning stall on one write is not
    // the device's page (the median of three drops it).
    let (xs, curves, found) = page_search(t, max_x, repeats.max(3))?;
    let names = ["write at k x", "write at k x + 1 sector"];
    for (c, name) in curves.iter().zip(names) {
        let name = format!("effective page: {name} (median of {PAGE_PAIRS} pairs)");
        r.curves.push(Curve::new(&name, "request KiB", "response ns", &xs, c));
    }
    r.page = match found {
        Some((x, ratios)) => page_found(x, &ratios, &curves),
        None => Detected {
            value: None,
            confidence: 0.0,
            how: format!("writes: no step up to {max_x} bytes"),
        },
    };
    r.effective_page_bytes = r.page.value;
    Ok(())
}

/// The writes' answer where the search found a step at `x` with these pairs' ratios (`curves`:
/// the aligned and shifted medians of every size searched, the step's last).
fn page_found(x: u64, ratios: &[f64], curves: &[Vec<f64>; 2]) -> Detected {
    // The noise: how far below the step the sizes before it sat (their shifted ÷
    // aligned medians); the step: the weakest of its pairs but the spared one.
    let mut sorted = ratios.to_vec();
    sorted.sort_by(f64::total_cmp);
    let step = sorted[1];
    let below: Vec<f64> =
        curves[0].iter().zip(&curves[1]).map(|(a, u)| (u / a.max(1.0) - 1.0).abs()).collect();
    let noise =
        if below.len() > 1 { median_f64(below[..below.len() - 1].iter().copied()) } else { 0.0 };
    let stepped = ratios.iter().filter(|&&q| q >= PAGE_STEP).count() as u64;
    // A pair short of all of them: a size just off the page may step by chance on
    // all pairs but one (the matrices' one sure-and-wrong page of this kind, 191 KiB
    // for 192, came so), so not sure.
    // A weak step (under PAGE_STEP on most pairs) is never said with certainty: on a
    // wall-clock target a few per cent is within what a client's noise can fake.
    let short = if stepped + 1 < PAGE_PAIRS {
        0.7
    } else if stepped < PAGE_PAIRS {
        0.85
    } else {
        1.0
    };
    Detected {
        value: Some(x),
        confidence: confidence(step, noise).min(short),
        how: format!(
            "writes: at {x} bytes {stepped} of {PAGE_PAIRS} shifted requests are >= \
             {PAGE_STEP}x their aligned pair (weakest {step:.2}x{}); {:.2} typically \
             below",
            if stepped + 1 < PAGE_PAIRS { ": a weak step, below quiet sizes" } else { "" },
            1.0 + noise
        ),
    }
}

/// The page behind a cache that absorbs writes: the paper's read variant, with the writes'
/// search as a second opinion (a cache that destages as it fills may let the step through).
/// Where the two disagree, neither is sure, and the writes' step is taken when there is one:
/// the read variant tries only powers of two and is fooled by what the cache keeps (on the
/// device matrix it read 6, 8 and 21 KiB for pages of 128, 4 and 4 KiB, each time where the
/// writes found the page); without a write step the reads' answer stands, at 0.3 of its
/// confidence.
fn page_behind_cache(
    t: &mut dyn Target,
    o: &ProbeOptions,
    max_x: u64,
    repeats: usize,
    r: &mut ProbeReport,
) -> Result<Detected, String> {
    let mut page = page_reads(t, (o.max_page_bytes / KIB).clamp(2, 64), repeats, r)?;
    let (_, _, by_writes) = page_search(t, max_x, repeats.max(3))?;
    let by_writes = by_writes.map(|(x, _)| x);
    if page.value.is_some() && by_writes != page.value {
        let reads = page.value.unwrap_or(0);
        match by_writes {
            Some(x) => {
                page.value = Some(x);
                page.confidence = 0.5;
                page.how = format!(
                    "writes: a step at {x} bytes (taken, with little confidence, over the read \
                     variant's {reads} bytes: {})",
                    page.how
                );
            }
            None => {
                page.confidence *= 0.3;
                page.how += "; the writes' search found no step";
            }
        }
    }
    Ok(page)
}

/// The page search of [`page`]: sizes x = 2, 3, … sectors up to `max_x`, the pairs' medians per
/// size (aligned, shifted) and the first size where all pairs but one show the step, with its
/// pairs' ratios.
#[allow(clippy::type_complexity)]
fn page_search(
    t: &mut dyn Target,
    max_x: u64,
    repeats: usize,
) -> Result<(Vec<f64>, [Vec<f64>; 2], Option<(u64, Vec<f64>)>), String> {
    let mut xs = Vec::new();
    let mut curves = [Vec::new(), Vec::new()];
    let mut found = None;
    // Per size searched: the median of its pairs' deviations from 1.
    let mut deviation: Vec<f64> = Vec::new();
    let mut x = 2 * SECTOR;
    while x <= max_x {
        let mut pairs = vec![(Vec::new(), Vec::new()); PAGE_PAIRS as usize];
        for _ in 0..repeats {
            // Writes alone, no FLUSH: on a wall-clock target a cache flush (the image's, the
            // drive's) adds more noise than step.
            for (k, p) in (0..PAGE_PAIRS).zip(&mut pairs) {
                p.0.push(t.write(k * x, x)?);
                p.1.push(t.write(k * x + SECTOR, x)?);
            }
        }
        let pairs: Vec<(f64, f64)> =
            pairs.into_iter().map(|(a, u)| (median(a) as f64, median(u) as f64)).collect();
        xs.push(x as f64 / KIB as f64);
        curves[0].push(median_f64(pairs.iter().map(|p| p.0)));
        curves[1].push(median_f64(pairs.iter().map(|p| p.1)));
        let ratios: Vec<f64> = pairs.iter().map(|(a, u)| u / a.max(1.0)).collect();
        let stepped = ratios.iter().filter(|&&q| q >= PAGE_STEP).count();
        // A weak step: where a shifted request's second page is read and programmed on units
        // of its own, beside the first, it adds only a read and a transfer to the program
        // (2-3 % at 192 KiB pages on 6 lock-stepped channels). Taken where the sizes below
        // were that quiet: all pairs but one above 1 + WEAK_STEP and 4 times the typical
        // deviation of the sizes below, k = 0 among them (below P it is the pair that fits
        // one page: a hybrid FTL's merges lift the others by some 8 % from about 7/8 P on).
        // Missed at P, the step would show first at 2P (pairs of two pages against three),
        // twice the page.
        let quiet = if deviation.is_empty() { 0.0 } else { median_f64(deviation.iter().copied()) };
        let weak_floor = 1.0 + WEAK_STEP.max(4.0 * quiet);
        let weak = ratios.iter().filter(|&&q| q >= weak_floor).count();
        // (And only once enough sizes were quiet to say what quiet is: through a served drive
        // a client's noise faked one at 1.5 KiB, over the one size below it.)
        let weak_step = deviation.len() >= WEAK_AFTER
            && ratios[0] >= weak_floor
            && weak as u64 + 1 >= PAGE_PAIRS;
        if stepped as u64 + 1 >= PAGE_PAIRS || weak_step {
            found = Some((x, ratios));
            break;
        }
        deviation.push(median_f64(ratios.iter().map(|q| (q - 1.0).abs())));
        x += SECTOR;
    }
    Ok((xs, curves, found))
}

/// How much slower a shifted request must be than its aligned pair to show the step (on a
/// parallel device the two pages of a shifted request are read and programmed at once, and the
/// difference is one page read on top of a program: 15–20 % with SLC times, which a client's
/// noise through a served drive pulled below 15 % for some pairs).
const PAGE_STEP: f64 = 1.1;
/// The least step taken as a weak one (see `page_search`), where the sizes below were quiet.
const WEAK_STEP: f64 = 0.015;
/// The quiet sizes a weak step needs below it (a sector apart from 1 KiB: up to 4.5 KiB).
const WEAK_AFTER: usize = 8;

fn zone(
    t: &mut dyn Target,
    o: &ProbeOptions,
    repeats: usize,
    r: &mut ProbeReport,
) -> Result<(), String> {
    let cap = t.capacity_bytes();
    // Reads of one effective page (when the page probe found it): every read goes to a page
    // of its own (A + k pages, B + k pages), since a cache that kept what it read would answer
    // a second read of a page — and a 4 KiB read of a larger page would share it with the next.
    let len = r.effective_page_bytes.unwrap_or(4 * KIB).max(4 * KIB);
    let rounds = o.zone_rounds.max(1);
    // A's pages stay within 256 KiB (or one page), so that the shortest distance, and with it
    // the smallest zone found, stays small whatever the page.
    let reads = ((rounds * repeats) as u64).min((256 * KIB / len).max(1));
    // Room below the shortest distance for A's pages and, in the bisection, a reference
    // read's (see `ZoneBisect`).
    let first = (2 * reads * len).next_power_of_two().max(64 * KIB);
    let distances: Vec<u64> = std::iter::successors(Some(first), |d| Some(d * 2))
        .take_while(|d| d + reads * len <= cap)
        .collect();
    if distances.is_empty() {
        return Err(format!(
            "the zone probe needs more than {} bytes of target, it has {cap}",
            2 * first
        ));
    }
    // B's pages at d start on a page boundary: a read straddling two pages reads both, and
    // takes one read or two as they share a die or not.
    let base = |d: u64| d.div_ceil(len) * len;
    // A's and every B's pages must hold data (a read of unwritten space may cost nothing).
    // The block probe wrote every page; pages this probe wrote would stay in a FAB buffer
    // (it keeps a block with few buffered pages longest) and answer the reads, so it writes
    // them only when the block probe did not run.
    if !o.block {
        t.write(0, reads * len)?;
        for &d in &distances {
            t.write(base(d), reads * len)?;
        }
    }
    // What a write buffer holds is pushed out of it (it would answer the reads itself), and
    // its dirty pages written back (a read evicting one would write, and load a zone).
    push_out(t)?;
    // Round k reads A + k pages, then B + k pages, for every distance in turn: a slow spell
    // of the target slows a few reads of several distances, not every read of one (which
    // would look like a step, or hide one).
    let mut b = vec![Vec::with_capacity(rounds * repeats); distances.len()];
    for k in 0..reads {
        for (&d, b) in distances.iter().zip(&mut b) {
            t.read(k * len, len)?;
            b.push(t.read(base(d) + k * len, len)?);
        }
    }
    let (xs, ys, seen) = zone_curve(&distances, b, len);
    r.curves.push(Curve::new(
        "zone: read B at distance d from A",
        "distance bytes",
        "read B response ns",
        &xs,
        &ys,
    ));
    r.zone = match zone_step(&ys) {
        Some(step) => {
            let mut z = zone_bisect(t, &xs, step, (reads, len, first), seen)?;
            // The bisection steps in effective pages: a page in doubt puts the zone's last
            // page in doubt too (a wrong page of 21 KiB cannot land on a 3 MiB zone).
            if r.page.value.is_some() && r.page.confidence < 0.5 {
                z.confidence = z.confidence.min(0.5 + r.page.confidence);
                z.how += &format!(
                    "; the page it steps in was found with confidence {:.2}",
                    r.page.confidence
                );
            }
            z
        }
        None => Detected {
            value: None,
            confidence: 0.0,
            how: format!(
                "no step up to {} bytes: the whole table is resident (or zones are larger)",
                xs.last().copied().unwrap_or(0.0)
            ),
        },
    };
    r.zone_bytes = r.zone.value;
    Ok(())
}

/// The doubling curve: per distance, the median of its B reads from flash; and every such
/// read by its page (in `len`s; B's pages at d start at the first page boundary from d on). A
/// read under a quarter of the median of every B read came from a cache (the pages the block
/// probe wrote last may still be in a buffer) and says nothing of B's zone; a distance with no
/// other read is left out.
fn zone_curve(distances: &[u64], b: Vec<Vec<u64>>, len: u64) -> (Vec<f64>, Vec<f64>, Seen) {
    let ram = median(b.iter().flatten().copied().collect()) / 4;
    let mut xs = Vec::with_capacity(distances.len());
    let mut ys = Vec::with_capacity(distances.len());
    let mut seen = Seen::new();
    for (&d, b) in distances.iter().zip(b) {
        let pages = (d.div_ceil(len)..).zip(b).filter(|&(_, ns)| ns >= ram);
        let b: Vec<u64> = pages.map(|(p, ns)| *seen.entry(p).or_insert(ns as f64) as u64).collect();
        if !b.is_empty() {
            xs.push(d as f64);
            // The median: a cleaning stall or a hiccup of the client moves a mean, not a
            // median of `reads`.
            ys.push(median(b) as f64);
        }
    }
    (xs, ys, seen)
}

/// B reads from flash by page (see `ZoneBisect::seen`).
type Seen = std::collections::BTreeMap<u64, f64>;

/// The zone between the doubling curve's last flat distance and its first high one (see
/// `zone`): `shape` is (reads per test, read length, shortest distance).
fn zone_bisect(
    t: &mut dyn Target,
    xs: &[f64],
    step: Step,
    shape: (u64, u64, u64),
    seen: Seen,
) -> Result<Detected, String> {
    let Step { at: i, gap, spread } = step;
    let (reads, len, first) = shape;
    // The doubling distances bracket the zone: B at d is in another zone than A's
    // (and its table must be loaded) exactly when d ≥ the zone. Between the last flat
    // distance and the first high one, a bisection finds the smallest high d, in
    // effective pages (any number of them, not only powers of two).
    // The threshold between a B read that pays a table load and one that does not, in the
    // bisection's own pattern (one read of a fresh page of A, then one of B): the geometric
    // mean of B reads in A's zone and beyond the step, on pages not read before.
    // A's fresh pages lie below the last flat distance (in A's zone), the low reference's B
    // pages from first / 2 on: both in A's zone, neither read before.
    // The doubling reads' pages (A's, and B's from every distance's first page on) are not
    // read again.
    let mut used = std::collections::BTreeSet::new();
    used.extend(0..reads);
    for &x in xs {
        let x = (x as u64).div_ceil(len);
        used.extend(x..x + reads);
    }
    let mut bisect = ZoneBisect {
        reads,
        len,
        threshold: None,
        floor: f64::INFINITY,
        factor: 1.0 + (gap - 1.0) / 2.0,
        next_a: 0,
        limit: xs[i - 1] as u64 / len,
        used,
        seen,
        ram: None,
    };
    // The low reference first, every read taken: B in A's zone is read from flash whether A
    // was or not, and a read faster than half the median of these came from a cache.
    let low = bisect.b_reads(t, first / 2 / len, false, false)?;
    bisect.ram = Some(median_f64(low.iter().copied()) / 2.0);
    let low_ref = low.into_iter().filter(|&b| !bisect.cached(b)).fold(f64::MIN_POSITIVE, f64::max);
    let high_ref = bisect
        .b_reads(t, (xs[i] as u64).div_ceil(len) + 2 * reads, false, false)?
        .into_iter()
        .fold(f64::INFINITY, f64::min);
    bisect.threshold = Some((low_ref * high_ref).sqrt());
    let bracket = (xs[i - 1] as u64 / len, (xs[i] as u64).div_ceil(len));
    // Each boundary found is checked again, on pages not read before: B high from it up, low
    // from the page before down; one that does not hold (a threshold that is not what the
    // reads pay, a noisy client) is said with little confidence.
    let mut found = bisect.run(t, bracket)?;
    let mut holds = bisect.verify(t, found)?;
    // No high point below the doubling distance, and not holding: the threshold may be wrong
    // (on a hybrid FTL a read of a page with a log block pays more, so the reference in A's
    // zone reads as high as a load). A second bisection takes the fastest B read seen as the
    // floor and a load as at least half the step above it; its answer is taken if it holds.
    if found.1 == bracket.1 && !holds {
        let threshold = bisect.threshold.take();
        let second = bisect.run(t, bracket)?;
        if bisect.verify(t, second)? {
            (found, holds) = (second, true);
        } else {
            bisect.threshold = threshold;
        }
    }
    // Found below the bracket's end and not holding, on a wall-clock target: one B read
    // delayed by the client's noise can send the bisection below the zone, and does not come
    // again: once more, on pages not read before. (The simulator has no such noise.)
    if !holds && found.1 < bracket.1 && !t.simulated() {
        let again = bisect.run(t, bracket)?;
        if bisect.verify(t, again)? {
            (found, holds) = (again, true);
        }
    }
    let (_, hi) = found;
    let trust = if holds { 1.0 } else { 0.3 };
    let rule = match bisect.threshold {
        Some(th) => format!("above {th:.0} ns"),
        None => format!("{:.2}x the fastest ({:.0} ns) or more", bisect.factor, bisect.floor),
    };
    Ok(Detected {
        value: Some(hi * len),
        confidence: trust * confidence(gap, spread),
        how: format!(
            "B's latency from d = {} bytes on is at least {gap:.2}x that at every \
             shorter power-of-two distance ({:.2} spread among them); bisected to the \
             first d, in {len}-byte steps, whose every B read is {rule}{}",
            xs[i],
            1.0 + spread,
            if holds { "" } else { " (the boundary did not hold when tested again)" }
        ),
    })
}

/// The zone probe's bisection: is B at distance d in another zone than A's?
struct ZoneBisect {
    reads: u64,
    len: u64,
    /// The threshold of a high B read; `None`: `factor` × `floor`.
    threshold: Option<f64>,
    /// The fastest B read so far.
    floor: f64,
    /// A B read in another zone is at least this times the floor.
    factor: f64,
    /// The next page (in `len`s) to try for A.
    next_a: u64,
    /// A's pages stay below this page (the last flat distance, inside A's zone).
    limit: u64,
    /// Pages (in `len`s) the probe has read or written: a read or write buffer may still hold
    /// them, and a page it answers touches no table (a cached A leaves B's table resident, a
    /// cached B reads fast in any zone). Every timed read goes to a page not in here.
    used: std::collections::BTreeSet<u64>,
    /// B pages read from flash right after an A read from flash, and their latency: a test
    /// at a page read before takes it from here (a second read would come from a cache).
    seen: Seen,
    /// Reads faster than this came from a cache (see `cached`).
    ram: Option<f64>,
}

impl ZoneBisect {
    /// The first page after `page` (before it when `down`) not read before, marked read.
    fn fresh(&mut self, mut page: u64, down: bool) -> u64 {
        loop {
            page = if down { page.saturating_sub(1) } else { page + 1 };
            if page == 0 || self.used.insert(page) {
                return page;
            }
        }
    }

    /// Whether a read was answered from RAM (a cache): far faster than a flash read of A's
    /// zone (`None` before that is known).
    fn cached(&self, ns: f64) -> bool {
        self.ram.is_some_and(|ram| ns < ram)
    }

    /// Reads a fresh page of A's zone, until one is read from flash (its table then resident,
    /// B's not; a cached A touches no table) or every page of A's zone was tried; whether
    /// one was.
    fn read_a(&mut self, t: &mut dyn Target) -> Result<bool, String> {
        for _ in 0..self.limit {
            let mut a = self.fresh(self.next_a, false);
            if a >= self.limit {
                // Every page of A's zone read once: again from the first, the oldest being the
                // likeliest to have left a cache.
                self.used.remove(&a);
                self.used.retain(|&p| p >= self.limit);
                a = 0;
                self.used.insert(a);
            }
            self.next_a = a;
            if !self.cached(t.read(a * self.len, self.len)? as f64) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// A, then B at `page`: B's latency if both came from flash.
    fn read_b(&mut self, t: &mut dyn Target, page: u64) -> Result<Option<f64>, String> {
        let a = self.read_a(t)?;
        self.used.insert(page);
        let ns = t.read(page * self.len, self.len)? as f64;
        let fine = a && !self.cached(ns);
        if fine {
            self.seen.insert(page, ns);
        }
        Ok(fine.then_some(ns))
    }

    /// B's latencies at `page` itself when `own` (as read before, if it was) and at fresh
    /// pages beyond it (below it when `down`), `reads` of them from flash (a cached read says
    /// nothing of its zone), or as many as twice that many tries gave.
    fn b_reads(
        &mut self,
        t: &mut dyn Target,
        mut page: u64,
        down: bool,
        own: bool,
    ) -> Result<Vec<f64>, String> {
        let mut b = Vec::with_capacity(self.reads as usize);
        if own {
            let ns = match self.seen.get(&page) {
                Some(&ns) => Some(ns),
                None => self.read_b(t, page)?,
            };
            b.extend(ns);
        }
        for _ in 0..2 * self.reads {
            if b.len() as u64 >= self.reads {
                break;
            }
            page = self.fresh(page, down);
            b.extend(self.read_b(t, page)?);
        }
        Ok(b)
    }

    /// Whether every B read is above the threshold (`high`) or below it.
    fn all(&mut self, b: &[f64], high: bool) -> bool {
        self.floor = b.iter().copied().fold(self.floor, f64::min);
        let threshold = self.threshold.unwrap_or(self.factor * self.floor);
        !b.is_empty() && b.iter().all(|&b| (b >= threshold) == high)
    }

    /// Whether B at `page` is in another zone than A: every B read from it on above the
    /// threshold (a slow spell only raises reads, so one B read below it means B shares A's
    /// zone — at the page itself, the read nearest the boundary).
    fn high(&mut self, t: &mut dyn Target, page: u64) -> Result<bool, String> {
        let b = self.b_reads(t, page, false, true)?;
        Ok(self.all(&b, true))
    }

    /// Whether a boundary `(lo, hi)` (in pages) holds when tested again, on pages not read
    /// before: every B read above the threshold from hi on, every one below it from lo down.
    fn verify(&mut self, t: &mut dyn Target, (lo, hi): (u64, u64)) -> Result<bool, String> {
        let above = self.b_reads(t, hi, false, false)?;
        let below = self.b_reads(t, lo, true, false)?;
        Ok(self.all(&above, true) && self.all(&below, false))
    }

    /// Bisects `(lo, hi)` (in pages: lo low, hi taken as high) to adjacent values.
    fn run(
        &mut self,
        t: &mut dyn Target,
        (mut lo, mut hi): (u64, u64),
    ) -> Result<(u64, u64), String> {
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if self.high(t, mid)? {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        Ok((lo, hi))
    }
}

/// A step in a curve that is flat, then up and staying up.
#[derive(Debug, PartialEq)]
struct Step {
    /// The first point of the high part.
    at: usize,
    /// The high part's lowest ÷ the low part's highest.
    gap: f64,
    /// The low part's highest ÷ its lowest, − 1.
    spread: f64,
}

/// The split of `ys` into a low part `ys[..at]` and a high part `ys[at..]` with the largest gap,
/// if that gap is ≥ 1.2 and at least twice the low part's spread (the noise a step must
/// exceed); `at` ≥ 1, as the shortest distance is the reference.
fn zone_step(ys: &[f64]) -> Option<Step> {
    let split = |at: usize| {
        let (low, high) = ys.split_at(at);
        let low_max = low.iter().copied().fold(f64::MIN_POSITIVE, f64::max);
        let low_min = low.iter().copied().fold(f64::INFINITY, f64::min).max(f64::MIN_POSITIVE);
        let high_min = high.iter().copied().fold(f64::INFINITY, f64::min);
        Step { at, gap: high_min / low_max, spread: low_max / low_min - 1.0 }
    };
    (1..ys.len())
        .map(split)
        .filter(|s| s.gap >= 1.2 && s.gap - 1.0 >= 2.0 * s.spread)
        .max_by(|a, b| a.gap.total_cmp(&b.gap))
}

/// Pushes what a write buffer holds out of it: 16 MiB of 4 KiB writes scattered over the last
/// quarter of the device, one per 64 KiB (a flash-aware buffer evicts large groups of adjacent
/// pages first, so sequential writes would not push small groups out), then a FLUSH.
fn push_out(t: &mut dyn Target) -> Result<(), String> {
    let cap = t.capacity_bytes();
    let len = 4 * KIB;
    let area = cap / 4 / (64 * KIB) * (64 * KIB);
    let (base, slots) = (cap - area, area / (64 * KIB));
    if slots == 0 {
        return Ok(());
    }
    for i in 0..(16 * MIB / len).min(area / len) {
        t.write(base + (i % slots) * 64 * KIB + (i / slots % 16) * len, len)?;
    }
    t.flush()?;
    Ok(())
}

/// Writes `[offset, offset + len)` sequentially in 1 MiB requests.
fn write_through(t: &mut dyn Target, offset: u64, len: u64) -> Result<(), String> {
    let end = offset + len;
    let mut o = offset;
    while o < end {
        let n = MIB.min(end - o);
        t.write(o, n)?;
        o += n;
    }
    Ok(())
}

/// SplitMix64 for the probes' random offsets and the device matrix's draws (deterministic).
pub(crate) fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The parallel-units probe (the module doc's bullet): pairs of reads issued together, one of
/// a page never read before and one of a representative of each unit found so far; a pair on
/// one die takes about two reads, a pair on two dies about one (plus a bus transfer when they
/// share a bus). The units are the classes of pages that collide. `halves`: the block probe's
/// halving test is still to come (the block found may be two).
fn parallel(
    t: &mut dyn Target,
    repeats: usize,
    r: &mut ProbeReport,
    halves: bool,
) -> Result<(), String> {
    let cap = t.capacity_bytes();
    let len = 4 * KIB;
    // Within one mapping zone when the zone probe found one: a read in another zone would time
    // a table load beside the dies.
    // A zone said with little confidence may be a multiple of the true one (its boundary did
    // not hold when tested again): the area keeps to its first half.
    let zone = r.zone_bytes.map(|z| if r.zone.confidence < 0.5 { z / 2 } else { z });
    let room = cap.min(zone.unwrap_or(u64::MAX));
    // At least 64 blocks when the block probe found the block: a block-mapped FTL keeps each
    // logical block on one die, so an area of few blocks shows few dies.
    let want = (32 * MIB).max(r.block_bytes.map_or(0, |b| 64 * b));
    let area_bytes = room.min(want);
    // One read per effective page where the area has room for it: a read cache keeps whole
    // logical pages, so a second 4 KiB read in a page read before would be a hit, not a fresh
    // page. (In a small zone the 4 KiB reads are kept: two in one page share its die anyway;
    // not when a page is no whole number of them: a 4 KiB read would span two pages.)
    let page = r.effective_page_bytes.unwrap_or(len).max(len);
    let whole = area_bytes / page >= FRESH_PAGES_MIN || !page.is_multiple_of(len);
    let unit = if whole { page } else { len };
    let area = area_bytes / unit;
    if area < 64 || t.max_queue_depth() < 2 {
        r.parallel.how = "the target cannot keep two reads in flight (or has under 256 KiB)".into();
        return Ok(());
    }
    // The probe's own area, written in order and flushed (a read of space never written may
    // cost nothing, and what earlier probes left in a write buffer goes to flash first).
    write_through(t, 0, area * unit)?;
    t.flush()?;
    let mut fresh = FreshPages::new(area, unit, len);
    let (singles, one, flash) = singles_out_of_buffer(t, &mut fresh, repeats, (room, cap))?;
    if zone_in_ram(r, one, flash, room) {
        return Ok(());
    }
    // A fresh page answered from RAM: a write buffer still holds part of the area. The last
    // pages written are the likeliest: random pages may all miss a small buffer's share.
    let buffered = singles.iter().any(|&s| s < 0.5 * one) || tail_in_ram(t, &mut fresh, one)?;
    let (window, spaced) = cache_window(t, &mut fresh, one, (room, cap), buffered)?;
    if let Some(w) = window.filter(|&w| w > 0) {
        per_page(t, &mut fresh, w, page)?;
    }
    let Some(window) = window else {
        return no_window(t, r, &mut fresh, (one, repeats));
    };
    // Behind a cache whose filler reads fill the area's own blocks (FAB), windows run to
    // thousands of reads: the pages are classified together.
    let mut classes = if !fresh.within {
        collide(t, &mut fresh, one, repeats, window)?
    } else {
        collide_interleaved(t, &mut fresh, one, repeats, window)?
    };
    // Few classes on a block-mapped FTL may be the dies its blocks happen to lie on: a page
    // of every block, and blocks moved to others (`block_moves`).
    let mut moved = None;
    if let Some((c, m)) =
        moves_over(t, r, (&fresh, &classes), (room, page, halves), (one, repeats))?
    {
        (classes, moved) = (c, Some(m));
    }
    // No more classes than the area's blocks and a log block each (BAST gives every logical
    // block one), +1, in one zone of four or more, no buffer: maybe a block-mapped FTL's
    // blocks, not its dies; table loads tell dies apart.
    let blocks = r.block_bytes.map_or(u64::MAX, |b| (fresh.area * unit / b).max(1));
    let wide = cap.min(want) / unit * unit;
    let mut by_tables = None;
    if let Some(z) = zone.filter(|&z| window == 0 && !spaced && 4 * z <= wide) {
        if classes.units as u64 <= 2 * blocks + 1 {
            if let Some((c, across, l)) = by_table_loads(t, r, classes.units, (wide, z, unit), one)?
            {
                (classes, fresh, moved, by_tables) = (c, across, None, Some(l));
            }
        }
    }
    let zone_bound = by_tables.is_none() && zone.is_some_and(|z| z < cap.min(want));
    let area_read = moved.as_ref().map_or(fresh.area * unit, |m| m.blocks * m.block);
    // Classes that settled stand (their read cache's window was seen on several pages).
    if classes.exhausted {
        if let Some(s) = stride(t, &mut fresh, one, repeats)? {
            stride_over_classes(r, &s, &classes, (area_read, zone_bound));
            return Ok(());
        }
    }
    parallel_report(r, &classes, one, fresh.outside.is_some());
    if let Some(l) = by_tables {
        table_report(r, &classes, &l);
    }
    moved_caveats(r, classes.units, moved.as_ref(), (area_read, zone_bound));
    Ok(())
}

/// A read cache that let no page go: the period with which pages written in order come back
/// to one unit (`stride`), pages each read once.
fn no_window(
    t: &mut dyn Target,
    r: &mut ProbeReport,
    fresh: &mut FreshPages,
    (one, repeats): (f64, usize),
) -> Result<(), String> {
    if let Some(s) = stride(t, fresh, one, repeats)? {
        stride_report(r, &s, "a read cache answered a page read again after 2^14 others");
        return Ok(());
    }
    r.parallel = Detected {
        value: None,
        confidence: 0.0,
        how: "a read cache answered a page read again after 2^14 other reads, and pages \
              written in order showed no period"
            .into(),
    };
    Ok(())
}

/// The moves (`block_moves`) over the first `room` bytes when they may find more than the
/// classes the pairs `found` (no read cache, a page being read many times, nor filler reads
/// in the way): of logical blocks when the block is known and the first two pages of a
/// block share a die (`blocks_on_one_die`), read in halves when the halving test is still to
/// come (`halves`: SAST's merges of two blocks at once read as one block); else of effective
/// pages of `page` bytes when the area holds few (a page FTL gives a page rewritten a page
/// newly allocated too). Only with fewer classes than blocks (or halves, or pages). Their
/// classes when they found more.
fn moves_over(
    t: &mut dyn Target,
    r: &ProbeReport,
    (fresh, found): (&FreshPages, &Classes),
    (room, page, halves): (u64, u64, bool),
    (one, repeats): (f64, usize),
) -> Result<Option<(Classes, Moved)>, String> {
    let units = found.units as u64;
    let cached = found.window > 0 || fresh.within || fresh.outside.is_some();
    // Behind a read cache, blocks only (a page moved is read once at most), filler reads
    // after the zone or in the device's last quarter (up to the spacer's size), and the
    // blocks before them.
    let (mut ev, room) = if !cached {
        (Evictor::none(), room)
    } else if r.block_bytes.is_none() {
        return Ok(None);
    } else if room < t.capacity_bytes() {
        let len = SPACER_BYTES.min(t.capacity_bytes() - room);
        (Evictor::behind_cache(t, (room, len), page, true)?, room)
    } else {
        let len = SPACER_BYTES.min(room / 4);
        (Evictor::behind_cache(t, (room - len, len), page, false)?, room - len)
    };
    // Pairs of neighbouring pages at the starts of blocks (of pages when the block is not
    // known, or not two pages): on one die on a block-mapped FTL.
    let block = r.block_bytes.filter(|&b| b >= 2 * page && room >= b);
    let span = block.unwrap_or(page);
    let blocks = (room / span).min(MOVE_BLOCKS_MAX);
    let one_die = blocks_on_one_die(t, (span, blocks, page), (one, repeats), &mut ev)?;
    let (unit, parts) = match block {
        Some(b) if one_die => (b, if halves && (b / page).is_multiple_of(2) { 2 } else { 1 }),
        _ if !one_die && !cached && room / page <= MOVE_BLOCKS_MAX => (page, 1),
        _ => return Ok(None),
    };
    // Pages: no more classes to find than pages. Blocks: three at least, two to keep as
    // anchors and one to rewrite (the stride needs every block but one an anchor).
    if (unit == page && units >= room / unit) || room / unit < 3 {
        return Ok(None);
    }
    let (c, m) = block_moves(t, (unit, room, page, parts), (one, repeats), &mut ev)?;
    // Behind a read cache, pair classes that settled stand against moves that did not (a
    // block's pages split over two log blocks may found a class of their own).
    let stands = cached && !found.exhausted && c.exhausted;
    Ok((c.units > found.units && !stands).then_some((c, m)))
}

/// Behind a read cache, which keeps whole logical pages (a 4 KiB read in a page read before
/// would be a hit), one read per effective page of `page` bytes however few the area holds
/// (16 at least; where the area had room it was so already). With the filler reads within
/// the area, which read 4 KiB units of pages that are fresh now, a `window` of them first.
fn per_page(
    t: &mut dyn Target,
    fresh: &mut FreshPages,
    window: u64,
    page: u64,
) -> Result<(), String> {
    if fresh.unit >= page || fresh.area * fresh.unit / page < 16 {
        return Ok(());
    }
    fresh.regrain(page);
    if fresh.within {
        filler(t, fresh, window)?;
        fresh.used.clear();
    }
    Ok(())
}

/// The stride's answer (`stride_report`) in place of the pair classes `c`, which did not
/// settle, with the caveats of an area of `area_bytes` (one mapping zone: `zone_bound`) as
/// for the classes.
fn stride_over_classes(
    r: &mut ProbeReport,
    s: &Stride,
    c: &Classes,
    (area_bytes, zone_bound): (u64, bool),
) {
    let cache = if c.window > 0 {
        format!("; a read cache keeps pages for under {} reads", c.window)
    } else {
        String::new()
    };
    stride_report(r, s, &format!("the pair classes did not settle, at {}{cache}", c.units));
    parallel_caveats(r, s.k as usize, area_bytes, zone_bound);
}

/// Single reads of fresh pages of the area, and their median (one read). When the area is one
/// zone (`room` < `cap`) and a buffer holds some of the pages just written (or every one: a
/// zone smaller than the buffer, `held_in_ram`), more than a spacer within the zone would
/// push out, writes after the zone push them out (each a table load of another zone: not
/// timed) and the reads are taken again. Also the slowest read in another zone when
/// `held_in_ram` found the area's reads far faster (a flash read to compare them with).
fn singles_out_of_buffer(
    t: &mut dyn Target,
    fresh: &mut FreshPages,
    repeats: usize,
    (room, cap): (u64, u64),
) -> Result<(Vec<f64>, f64, Option<f64>), String> {
    let singles = single_reads(t, fresh, repeats)?;
    let one = median_f64(singles.iter().copied());
    if room >= cap {
        return Ok((singles, one, None));
    }
    let some_in_ram = singles.iter().any(|&s| s < 0.5 * one);
    let flash = if some_in_ram { None } else { held_in_ram(t, (room, cap, room), one, repeats)? };
    if some_in_ram || flash.is_some() {
        write_through(t, room, SPACER_BYTES.min(cap - room))?;
        t.flush()?;
        let singles = single_reads(t, fresh, repeats)?;
        let one = median_f64(singles.iter().copied());
        return Ok((singles, one, flash));
    }
    Ok((singles, one, None))
}

/// Whether the area's reads (`one`) still answer from RAM after the writes that push a
/// buffer out (`flash`: a read in another zone, `singles_out_of_buffer`): the cache holds
/// more than the zone (`room` bytes), so no page of it is read from flash twice and pairs
/// time no dies. Then the report says so.
fn zone_in_ram(r: &mut ProbeReport, one: f64, flash: Option<f64>, room: u64) -> bool {
    let Some(f) = flash.filter(|&f| f > 4.0 * one) else { return false };
    r.parallel = Detected {
        value: None,
        confidence: 0.0,
        how: format!(
            "reads in the area's mapping zone answered from RAM ({one:.0} ns against {f:.0} ns \
             in another zone), also after {} MiB written elsewhere: a cache holds more than \
             the zone's {room} bytes, and pairs within it time no dies",
            SPACER_BYTES / MIB
        ),
    };
    true
}

/// Whether any of the last 4 pages of the area (the last written) answers from RAM, faster
/// than half of `one` read. They are used up.
fn tail_in_ram(t: &mut dyn Target, fresh: &mut FreshPages, one: f64) -> Result<bool, String> {
    let mut fast = false;
    for p in fresh.area.saturating_sub(4)..fresh.area {
        if fresh.used.insert(p) {
            fast |= (t.read(p * fresh.unit, fresh.len)? as f64) < 0.5 * one;
        }
    }
    Ok(fast)
}

/// Single reads of fresh pages of the area (the median is one read).
fn single_reads(
    t: &mut dyn Target,
    fresh: &mut FreshPages,
    repeats: usize,
) -> Result<Vec<f64>, String> {
    let len = fresh.len;
    let mut singles = Vec::new();
    for _ in 0..(8 * repeats).max(32) {
        let o = fresh.next();
        singles.push(timed(repeats, || t.read(o, len))? as f64);
    }
    Ok(singles)
}

/// Whether the area's reads (`one`) answered from RAM: reads of 4 pages of a zone halfway
/// between `from` and `to` (where the zone probe, which reads near the start, left nothing in
/// a cache), after one that loads its table, take over 4 times as long at the slowest (flash
/// reads, unless a cache holds every one of them): then the slowest. Without a cache in the
/// way they take about one read.
fn held_in_ram(
    t: &mut dyn Target,
    (from, to, zone): (u64, u64, u64),
    one: f64,
    repeats: usize,
) -> Result<Option<f64>, String> {
    let len = 4 * KIB;
    let start = from + (to - from) / zone / 2 * zone;
    let pages = zone.min(to - start) / len;
    let mut slowest = 0.0f64;
    for i in 0..5 {
        let o = start + mix(i ^ 0xfa2) % pages.max(1) * len;
        let ns = timed(repeats, || t.read(o, len))? as f64;
        if i > 0 {
            slowest = slowest.max(ns);
        }
    }
    Ok((slowest > 4.0 * one).then_some(slowest))
}

/// The reads after which a read cache lets a page go (`read_window`), and whether a spacer
/// was written because a fresh page answered from RAM (`buffered`; one is written too when
/// a read cache shows). When no window shows with the spacer's filler reads, the filler reads
/// go within the area up to the end of `room` (`within_window`).
fn cache_window(
    t: &mut dyn Target,
    fresh: &mut FreshPages,
    one: f64,
    (room, cap): (u64, u64),
    buffered: bool,
) -> Result<(Option<u64>, bool), String> {
    let spaced = buffered && space_out(t, fresh, room)?;
    let mut window = read_window(t, fresh, one)?;
    if window != Some(0) && !spaced && space_out(t, fresh, room)? {
        window = read_window(t, fresh, one)?;
    }
    // A cache evicting the fullest block first lets a page go when the spacer's filler reads
    // happen to leave its block the fullest, and keeps others: each of several pages must
    // show a window, and the longest is taken.
    if let Some(w) = window.filter(|&w| w > 0) {
        let mut most = Some(w);
        for _ in 1..WINDOW_PAGES {
            most = match read_window(t, fresh, one)? {
                Some(v) => most.map(|m| m.max(v)),
                None => None,
            };
        }
        window = most;
    }
    if window.is_none() {
        fresh.within_area(room / fresh.unit);
        window = within_window(t, fresh, one)?;
    }
    if window.is_none() && room < cap {
        // The zone is smaller than the cache: filler reads after it, and a read of a fresh
        // page of the area after them loads its table again before the pair.
        fresh.within = false;
        fresh.outside = Some((room, cap));
        window = within_window(t, fresh, one)?;
    }
    Ok((window, spaced))
}

/// What the table loads found (`by_table_loads`): the zones tried, the classes pairs within
/// one zone found, and the table stride's period and rewrites when it gave the count.
struct TableLoads {
    zones: u64,
    within: usize,
    stride: Option<(usize, usize, usize)>,
}

/// The pair classes' report when the table loads told the classes apart (`table_classes`,
/// `table_stride`).
fn table_report(r: &mut ProbeReport, c: &Classes, l: &TableLoads) {
    // Dies that hold no zone's table share one signature, and where the tables lie is the
    // device's own choice: fewer dies may be told apart than there are.
    r.parallel.confidence = r.parallel.confidence.min(0.5);
    r.parallel.how = format!(
        "{} classes of pages over {} fresh pages in {} mapping zones, told apart by which \
         zones' table loads a read of the page delays (a load waits for a read on its die; \
         within one zone, pairs showed only {} units){}",
        c.units,
        c.pages,
        l.zones,
        l.within,
        if c.exhausted { "; stopped before the count settled" } else { "" },
    );
    if let Some((period, rewrites, tables)) = l.stride {
        // Allocation in turn is the FTL's choice.
        r.parallel.how = format!(
            "a logical block rewritten {rewrites} times came back to the same zones' table \
             loads every {period} rewrites (blocks allocated over the dies in turn): {period} \
             dies; pages classed by table loads found {tables} classes, pairs within one zone \
             {} units",
            l.within
        );
    }
}

/// The table loads (`table_classes`) over the first `wide` bytes (written first; zones of
/// `zone` bytes, reads one per `unit` bytes), and the table stride (`table_stride`) when the
/// block is known: its period is the count when above the classes the table loads or the
/// pairs (`within`) found and when its labels tell at least as many dies apart (it must visit
/// every die those found; an allocator that skips some dies shows a shorter period). Their
/// classes when they found more than `within`.
fn by_table_loads(
    t: &mut dyn Target,
    r: &ProbeReport,
    within: usize,
    (wide, zone, unit): (u64, u64, u64),
    one: f64,
) -> Result<Option<(Classes, FreshPages, TableLoads)>, String> {
    write_through(t, 0, wide)?;
    t.flush()?;
    let mut across = FreshPages::new(wide / unit, unit, 4 * KIB);
    let mut c = table_classes(t, &mut across, one, zone)?;
    let page = r.effective_page_bytes.unwrap_or(unit);
    let mut stride = None;
    if let Some(b) = r.block_bytes.filter(|&b| b >= 2 * page && b <= zone) {
        if let Some((p, n, labels)) = table_stride(t, (b, page, zone, wide), one)? {
            let known = c.units.max(within);
            if p > known && labels >= known {
                (c.units, c.exhausted, stride) = (p, false, Some((p, n, c.units)));
            }
        }
    }
    Ok((c.units > within).then_some((c, across, TableLoads { zones: wide / zone, within, stride })))
}

/// The block moves' report (`moved_report`), if any, and the caveats (`parallel_caveats`),
/// which a block stride's period overrules (it counts dies beyond the blocks holding data).
fn moved_caveats(r: &mut ProbeReport, units: usize, m: Option<&Moved>, area: (u64, bool)) {
    if let Some(m) = m {
        moved_report(r, m);
        if m.stride.is_some() {
            return;
        }
    }
    parallel_caveats(r, units, area.0, area.1);
}

/// What may make the count the area's blocks rather than the dies: `units` classes over
/// `area_bytes`, the area one mapping zone (`zone_bound`).
fn parallel_caveats(r: &mut ProbeReport, units: usize, area_bytes: u64, zone_bound: bool) {
    // As many units as the area has blocks: the count may be the blocks', not the dies' (the
    // area is one small zone, or the device is small beside its blocks).
    if let Some(blocks) = r.block_bytes.map(|b| (area_bytes / b).max(1)) {
        if units as u64 >= blocks {
            r.parallel.confidence *= 0.3;
            r.parallel.how += &format!(
                "; the area read holds only {blocks} blocks, and a block-mapped FTL keeps each \
                 on one die: more dies may hold no data here"
            );
        }
    }
    // The area is one mapping zone and the block is not known (or said with confidence under
    // 0.9): a hybrid FTL's zone is whole blocks, as few as one, and each block lies on one die.
    if zone_bound && (r.block_bytes.is_none() || r.block.confidence < 0.9) {
        r.parallel.confidence *= 0.5;
        r.parallel.how += "; the area is one mapping zone, which may be a single block of a \
             block-mapped FTL (the block probe found none it is sure of)";
    }
}

/// Behind a buffer: writes a spacer of `SPACER_BYTES` (at most a quarter of `room`) at the
/// end of `room`, so a write buffer holds its pages, not the area's, and the filler reads
/// that push pages out of a read cache cycle through it. At the end of the area's mapping
/// zone (of the device without one): a hybrid FTL merging the area's logical blocks would
/// time merges into the reads, and filler reads in another zone would make the next pair
/// load a table. The area shrinks to end before it. False when there is no room for it.
fn space_out(t: &mut dyn Target, fresh: &mut FreshPages, room: u64) -> Result<bool, String> {
    let spacer = SPACER_BYTES.min(room / 4) / fresh.unit * fresh.unit;
    let at = room - spacer;
    if spacer == 0 || at / fresh.unit < 64 {
        return Ok(false);
    }
    write_through(t, at, spacer)?;
    t.flush()?;
    fresh.area = fresh.area.min(at / fresh.unit);
    fresh.spacer = (at, spacer / fresh.unit);
    Ok(true)
}

/// Fewest effective pages the parallel probe's area must hold to be read one read per page.
const FRESH_PAGES_MIN: u64 = 1024;

/// The parallel probe's spacer behind a buffer (`space_out`): twice the largest buffer of the
/// device matrix (8 MiB).
const SPACER_BYTES: u64 = 16 * MIB;

/// Random 4 KiB pages of the probed area, each handed out once (a buffer that keeps what it
/// read would answer a second read of one).
/// Pages are `unit` bytes apart (the effective page); each read is the first `len` bytes.
/// Filler reads cycle through the spacer written after the area (start, pages): twice any
/// cache of the matrix, so each is a miss that pushes an older page out, and none uses up
/// the area's fresh pages.
struct FreshPages {
    area: u64,
    unit: u64,
    len: u64,
    i: u64,
    used: std::collections::HashSet<u64>,
    spacer: (u64, u64),
    filled: u64,
    /// Filler reads go to random pages of the area itself, half its pages (by a hash), which
    /// are no longer handed out as fresh (`within_area`).
    within: bool,
    filler_end: u64,
    /// Filler reads go to random pages of this byte range after the area's zone.
    outside: Option<(u64, u64)>,
}

impl FreshPages {
    fn new(area: u64, unit: u64, len: u64) -> Self {
        let used = std::collections::HashSet::new();
        Self {
            area,
            unit,
            len,
            i: 0,
            used,
            spacer: (0, 0),
            filled: 0,
            within: false,
            filler_end: 0,
            outside: None,
        }
    }
    /// Filler reads from now on go to random pages of the area, each page a filler page or
    /// a fresh one by a hash of its number: a cache that evicts the fullest block first (FAB)
    /// lets a page go only when the filler fills the page's own block, which a spacer of
    /// other blocks never does.
    /// The filler reads range over the first `end` pages (the area and the room after it up
    /// to the end of the mapping zone or device, so the block the area ends in fills too).
    fn within_area(&mut self, end: u64) {
        self.within = true;
        self.filler_end = end.max(self.area);
    }
    fn is_filler(&self, p: u64) -> bool {
        self.within && mix(p ^ 0xf111).is_multiple_of(2)
    }
    /// Pages of `page` bytes from now on (a multiple of the unit): a page is used when any of
    /// its old units was.
    fn regrain(&mut self, page: u64) {
        let k = page / self.unit;
        self.used = self.used.iter().map(|&p| p / k).collect();
        self.area /= k;
        self.filler_end /= k;
        self.spacer = (self.spacer.0, self.spacer.1 / k);
        self.unit = page;
    }
    /// Pages that can still be handed out as fresh, roughly.
    fn fresh_left(&self) -> u64 {
        let pages = if self.within { self.area / 2 } else { self.area };
        pages.saturating_sub(self.used.len() as u64)
    }
    fn filler(&mut self) -> u64 {
        if let Some((from, to)) = self.outside {
            self.filled += 1;
            return from + mix(self.filled ^ 0x0c7_5eed) % ((to - from) / self.unit) * self.unit;
        }
        if self.within {
            loop {
                self.filled += 1;
                let p = mix(self.filled ^ 0xf111_5eed) % self.filler_end;
                if p >= self.area || self.is_filler(p) {
                    return p * self.unit;
                }
            }
        }
        let (start, pages) = self.spacer;
        if pages == 0 {
            return self.next();
        }
        self.filled += 1;
        start + self.filled % pages * self.unit
    }
    fn next(&mut self) -> u64 {
        loop {
            self.i += 1;
            let p = mix(self.i ^ 0x5eed) % self.area;
            if self.is_filler(p) && self.fresh_left() > 0 {
                continue;
            }
            if self.fresh_left() == 0 || self.used.insert(p) {
                return p * self.unit;
            }
        }
    }
    /// Two pages `k` apart, neither read before (`None` after some tries: few are left).
    fn pair(&mut self, k: u64) -> Option<(u64, u64)> {
        for _ in 0..64 {
            self.i += 1;
            let a = mix(self.i ^ 0x5a1d) % self.area.checked_sub(k)?;
            let b = a + k;
            if self.is_filler(a) || self.is_filler(b) {
                continue;
            }
            if !self.used.contains(&a) && !self.used.contains(&b) {
                self.used.insert(a);
                self.used.insert(b);
                return Some((a * self.unit, b * self.unit));
            }
        }
        None
    }
}

/// What the stride test found: pages `k` apart collide (`hits` of `tries` pairs at k, at 2k,
/// and at most `background` at any shorter distance).
struct Stride {
    k: u64,
    hits: (usize, usize),
    tries: usize,
    background: usize,
}

/// The stride test: an FTL that stripes pages written in order over its units (a page FTL's
/// dynamic allocation of an idle device's sequential writes) puts pages `N` apart on one unit
/// and pages fewer apart on others. For k = 1, 2, ... pairs of pages `k` apart, each page read
/// only once (a read cache cannot answer), are timed together; the first `k` at which at least
/// 3 of 4 pairs (6 of 8 on a wall clock) take two reads, and again at `2k`, is `N`. Pages 1
/// apart colliding mean the FTL does not stripe (a block-mapped one keeps a logical block on
/// one die): `None`, as when no `k` up to `MAX_UNITS` collides or fresh pages run out.
fn stride(
    t: &mut dyn Target,
    fresh: &mut FreshPages,
    one: f64,
    repeats: usize,
) -> Result<Option<Stride>, String> {
    let tries = if repeats > 1 { 8 } else { 4 };
    let need = tries * 3 / 4;
    let len = fresh.len;
    let mut hits = |k: u64| -> Result<Option<usize>, String> {
        let mut n = 0;
        for _ in 0..tries {
            let Some((a, b)) = fresh.pair(k) else { return Ok(None) };
            if t.read_queue(&[(a, len), (b, len)], 2)? as f64 > 1.5 * one {
                n += 1;
            }
        }
        Ok(Some(n))
    };
    let mut background = 0;
    for k in 1..=MAX_UNITS as u64 {
        let Some(h) = hits(k)? else { return Ok(None) };
        if h < need {
            background = background.max(h);
            continue;
        }
        if k == 1 {
            return Ok(None);
        }
        let Some(h2) = hits(2 * k)? else { return Ok(None) };
        if h2 >= need {
            return Ok(Some(Stride { k, hits: (h, h2), tries, background }));
        }
        background = background.max(h);
    }
    Ok(None)
}

fn stride_report(r: &mut ProbeReport, s: &Stride, why: &str) {
    // Clean when no shorter distance came near the threshold.
    let clean = s.background * 2 < s.tries;
    let full = s.hits.0 == s.tries && s.hits.1 == s.tries;
    let confidence = match (clean, full) {
        (true, true) => 0.9,
        (true, false) => 0.7,
        _ => 0.4,
    };
    r.parallel = Detected {
        value: Some(s.k),
        confidence,
        how: format!(
            "pages written in order come back to one unit every {k} pages: pairs {k} and {} \
             apart took two reads in {} and {} of {}, pairs fewer apart in at most {} (each \
             page read once: {why})",
            2 * s.k,
            s.hits.0,
            s.hits.1,
            s.tries,
            s.background,
            k = s.k,
        ),
    };
    r.parallel_units = r.parallel.value;
}

/// What the block moves did (`block_moves`): the block, the logical blocks of the area they
/// read one page each of, the blocks rewritten, and whether every block but one became a
/// class's anchor (more dies may hold no block of the area).
struct Moved {
    block: u64,
    blocks: u64,
    moves: usize,
    anchors_out: bool,
    /// The blocks were effective pages (a page FTL's).
    pages: bool,
    /// The block stride's period and rewrites (`block_stride`).
    stride: Option<(usize, usize)>,
}

/// Most rewrites of one block the block stride takes.
const BLOCK_STRIDE_MAX: usize = 192;

/// The block stride: an FTL that allocates the blocks it writes over its dies in turn puts a
/// logical block rewritten again and again (of `block` bytes, effective pages of `page`) back
/// on one die every N rewrites, N the dies, however few blocks hold data. After each rewrite
/// a page of it is classified against the `anchors` (one page per die found, `found` of
/// them); the labels' period (`period`) is N. Behind a write buffer that holds the block just
/// written, two `movers` take turns, each read after the other's rewrite (the labels stay in
/// the order of the allocations). `None` when no period shows within `BLOCK_STRIDE_MAX`
/// rewrites, or the buffer still holds the block read.
fn block_stride(
    t: &mut dyn Target,
    (movers, block, page): (&[u64], u64, u64),
    (anchors, found): (&mut Vec<(u64, u64)>, usize),
    (one, repeats): (f64, usize),
    (c, ev): (&mut Classes, &mut Evictor),
) -> Result<Option<(usize, usize)>, String> {
    let mut labels = Vec::new();
    let (mut turn, mut last) = (0, None);
    while labels.len() < BLOCK_STRIDE_MAX && !movers.is_empty() {
        let b = movers[turn % movers.len()];
        turn += 1;
        rewrite_block(t, b, (block, page), ev)?;
        // Two blocks in turn: the one written before, which the last pushed out of a buffer.
        let Some(b) = (if movers.len() == 1 { Some(b) } else { last.replace(b) }) else {
            continue;
        };
        let Some(pages) = flash_pages(t, (b, block, page, 1), one, ev)? else {
            return Ok(None);
        };
        let joined = anchor_of(t, pages[0], anchors, (one, repeats), (c, ev))?;
        labels.push(joined.map(|_| anchors[0].1));
        if let Some(p) = period(&labels, found, anchors.len()) {
            return Ok(Some((p, labels.len())));
        }
    }
    Ok(None)
}

/// The smallest period of `labels` above `found` (the dies the anchors showed) and seen twice
/// over and 8 more: every label equal to the one a period later, and in a period each of the
/// `anchors` once (every die's turn comes once; a rewrite that allocated two blocks would skip
/// half the dies), two at least.
fn period(labels: &[Option<u64>], found: usize, anchors: usize) -> Option<usize> {
    let n = labels.len();
    (found.max(1) + 1..=n.saturating_sub(8) / 2).find(|&p| {
        let mut seen: Vec<u64> = labels[..p].iter().flatten().copied().collect();
        seen.sort_unstable();
        let k = seen.len();
        seen.dedup();
        seen.len() == k && k == anchors && k >= 2 && (0..n - p).all(|i| labels[i] == labels[i + p])
    })
}

/// Most logical blocks the block moves read one page each of.
const MOVE_BLOCKS_MAX: u64 = 512;

/// Most blocks the block moves rewrite after one pass over the area's.
const MOVES_MAX: usize = 512;

/// Most blocks the block moves rewrite in a row with none of them read from flash yet (a
/// write buffer larger than the blocks that can move).
const MOVES_IDLE_MAX: usize = 64;

/// Pair reads of `a` and `b` (4 KiB each) together: whether they took two reads (one die).
fn collide_pair(
    t: &mut dyn Target,
    (a, b): (u64, u64),
    (one, repeats): (f64, usize),
    c: &mut Classes,
) -> Result<bool, String> {
    let len = 4 * KIB;
    let pair = timed(repeats, || t.read_queue(&[(a, len), (b, len)], 2))? as f64;
    if pair > 1.5 * one {
        c.same.push(pair);
        return Ok(true);
    }
    c.apart.push(pair);
    Ok(false)
}

/// Whether neighbouring effective pages (of `page` bytes) share a die: the first two pages of
/// 4 units spread over the `blocks` units of `block` bytes from offset 0 (blocks, or pages)
/// read together, at least 3 of 4 pairs taking two reads. A page FTL stripes pages written in
/// order over its dies (two pages of one die only on a device of one); a block-mapped FTL
/// keeps a block in one physical block.
fn blocks_on_one_die(
    t: &mut dyn Target,
    (block, blocks, page): (u64, u64, u64),
    (one, repeats): (f64, usize),
    ev: &mut Evictor,
) -> Result<bool, String> {
    let mut scratch = Classes::new(0);
    let mut hits = 0;
    ev.blocks(block, 1);
    for i in 0..4 {
        let mut b = i * blocks.saturating_sub(1) / 4 * block;
        let mut pair = (b, b + page);
        if ev.region.is_some() {
            // Behind a read cache the block's pages may have been read: rewritten, pushed
            // out, and two neighbouring pages not read since.
            rewrite_block(t, b / block, (block, page), ev)?;
            if !ev.pushed_out(t, b / block, one)? {
                continue;
            }
            b = ev.fresh(t, b)?;
            pair = (b, ev.fresh(t, b)?);
        }
        hits += usize::from(collide_pair(t, pair, (one, repeats), &mut scratch)?);
    }
    Ok(hits >= 3)
}

/// The anchor of `anchors` (a page per class, the last joined first) that page `p` collides
/// with, moved to the front; `None` when it collides with none.
fn anchor_of(
    t: &mut dyn Target,
    p: u64,
    anchors: &mut [(u64, u64)],
    (one, repeats): (f64, usize),
    (c, ev): (&mut Classes, &mut Evictor),
) -> Result<Option<usize>, String> {
    for k in 0..anchors.len() {
        // Behind a read cache, pages of the two blocks not read since they were pushed out.
        let (a, b) = (ev.fresh(t, p)?, ev.fresh(t, anchors[k].0)?);
        if collide_pair(t, (a, b), (one, repeats), c)? {
            anchors[..=k].rotate_right(1);
            return Ok(Some(0));
        }
    }
    Ok(None)
}

/// `anchor_of`, and behind a read cache once more with other pages when the page collided
/// with none: pages of a part need not all lie on one die (a hybrid FTL's log blocks hold
/// what was rewritten until a merge), and one stray page would found a class of its own.
fn anchor_checked(
    t: &mut dyn Target,
    p: u64,
    anchors: &mut [(u64, u64)],
    (one, repeats): (f64, usize),
    (c, ev): (&mut Classes, &mut Evictor),
) -> Result<Option<usize>, String> {
    let found = anchor_of(t, p, anchors, (one, repeats), (c, ev))?;
    if found.is_some() || ev.region.is_none() {
        return Ok(found);
    }
    anchor_of(t, p, anchors, (one, repeats), (c, ev))
}

/// A page of each of the `parts` equal parts (whole effective pages of `page` bytes) of
/// logical block `b` (of `block` bytes) read from flash: per part the first of its first 4
/// effective pages whose single read takes at least half of `one` (a write buffer may still
/// hold the block just written); `None` when each of some part's answered from RAM.
fn flash_pages(
    t: &mut dyn Target,
    (b, block, page, parts): (u64, u64, u64, u64),
    one: f64,
    ev: &mut Evictor,
) -> Result<Option<Vec<u64>>, String> {
    let part = block / parts / page * page;
    if ev.region.is_some() {
        // Behind a read cache: the parts once pushed out (`Evictor::fresh` hands out pages).
        let pushed = ev.pushed_out(t, b, one)?;
        return Ok(pushed.then(|| (0..parts).map(|k| b * block + k * part).collect()));
    }
    let mut found = Vec::new();
    for k in 0..parts {
        let mut from_flash = None;
        for j in 0..4.min(part / page) {
            let p = b * block + k * part + j * page;
            if t.read(p, 4 * KIB)? as f64 >= 0.5 * one {
                from_flash = Some(p);
                break;
            }
        }
        let Some(p) = from_flash else { return Ok(None) };
        found.push(p);
    }
    Ok(Some(found))
}

/// Rewrites logical block `b` of `block` bytes whole, in order, in requests of whole effective
/// pages of `page` bytes (a page written twice would break the order a switch merge needs),
/// then a FLUSH: a block-mapped FTL puts it in a block newly allocated.
fn rewrite_block(
    t: &mut dyn Target,
    b: u64,
    (block, page): (u64, u64),
    ev: &mut Evictor,
) -> Result<(), String> {
    let chunk = (MIB / page).max(1) * page;
    let mut o = 0;
    while o < block {
        let n = chunk.min(block - o);
        t.write(b * block + o, n)?;
        o += n;
    }
    t.flush()?;
    ev.rewritten(b);
    Ok(())
}

/// Behind a read cache the block moves read no page twice while a cache may hold it: a page
/// of a moved block is read only once the block's rewrite was pushed out of the cache, by
/// filler reads cycling through a region twice the largest buffer (each one a miss), and each
/// pair reads a page of each block it has not read since (a cache would answer a second read
/// of one, and the pair would time one die). Without a read cache (`region` none) a block's
/// page is its page, read as often as needed.
struct Evictor {
    /// Filler reads' region: its first byte and its pages (of `page` bytes).
    region: Option<(u64, u64)>,
    /// Filler reads issued so far (the next page of the region to read).
    filled: u64,
    /// Filler reads that last pushed a rewritten block out (the next push starts there).
    chunk: u64,
    /// The region lies in other mapping zones: after filler reads, a read of the area loads
    /// its table before a pair would time the load.
    zoned: bool,
    page: u64,
    block: u64,
    parts: u64,
    /// Per part of a block (its first byte): the next page to hand out and the end of those
    /// that may be handed out (the pages above were read to test the push).
    cursors: std::collections::HashMap<u64, (u64, u64)>,
}

impl Evictor {
    /// No read cache: pages are handed out as they are.
    fn none() -> Self {
        Evictor {
            region: None,
            filled: 0,
            chunk: 64,
            zoned: false,
            page: 1,
            block: 1,
            parts: 1,
            cursors: std::collections::HashMap::new(),
        }
    }

    /// Behind a read cache: filler reads over `len` bytes from `start` (written first, so
    /// they read flash), in pages of `page` bytes; `zoned`: in other mapping zones.
    fn behind_cache(
        t: &mut dyn Target,
        (start, len): (u64, u64),
        page: u64,
        zoned: bool,
    ) -> Result<Self, String> {
        write_through(t, start, len / page * page)?;
        t.flush()?;
        Ok(Evictor { region: Some((start, len / page)), zoned, page, ..Evictor::none() })
    }

    /// Blocks of `block` bytes from now on, each read in `parts` parts.
    fn blocks(&mut self, block: u64, parts: u64) {
        (self.block, self.parts) = (block, parts.max(1));
        self.cursors.clear();
    }

    fn part_bytes(&self) -> u64 {
        self.block / self.parts / self.page * self.page
    }

    /// The first byte of the part of a block that byte `p` lies in.
    fn part_of(&self, p: u64) -> u64 {
        let b = p / self.block * self.block;
        b + ((p - b) / self.part_bytes()).min(self.parts - 1) * self.part_bytes()
    }

    /// `n` filler reads, 64 in flight.
    fn fill(&mut self, t: &mut dyn Target, n: u64) -> Result<(), String> {
        let Some((start, pages)) = self.region.filter(|r| r.1 > 0) else { return Ok(()) };
        let reqs: Vec<(u64, u64)> =
            (0..n).map(|i| (start + (self.filled + i) % pages * self.page, 4 * KIB)).collect();
        self.filled += n;
        t.read_queue(&reqs, t.max_queue_depth().min(64))?;
        Ok(())
    }

    /// Logical block `b` (its index) was rewritten: every page of it may be handed out again
    /// once the rewrite is pushed out (`pushed_out`).
    fn rewritten(&mut self, b: u64) {
        let (part, pages) = (self.part_bytes(), self.part_bytes() / self.page);
        for k in 0..self.parts {
            self.cursors.insert(b * self.block + k * part, (0, pages));
        }
    }

    /// Filler reads until block `b`'s parts read from flash, the last written first (a page
    /// cache lets the oldest go first, a block cache the whole block): each test reads the
    /// highest page not yet read, which is no longer handed out. False when none did after
    /// filler reads four times the region, or pages ran short.
    fn pushed_out(&mut self, t: &mut dyn Target, b: u64, one: f64) -> Result<bool, String> {
        let Some((_, pages)) = self.region else { return Ok(true) };
        for k in (0..self.parts).rev() {
            let s = b * self.block + k * self.part_bytes();
            let mut n = self.chunk.max(64);
            loop {
                let (c, end) = self.cursors.get(&s).copied().unwrap_or((0, 0));
                if end <= c + 2 || n > 4 * pages {
                    return Ok(false);
                }
                self.fill(t, n)?;
                self.cursors.insert(s, (c, end - 1));
                if t.read(s + (end - 1) * self.page, 4 * KIB)? as f64 >= 0.5 * one {
                    self.chunk = n;
                    break;
                }
                n *= 2;
            }
        }
        Ok(true)
    }

    /// A page of the part of a block that byte `p` lies in that was not read since the block
    /// was pushed out; when the part's pages ran out, filler reads push them out again (and,
    /// zoned, a read of the part loads its table).
    fn fresh(&mut self, t: &mut dyn Target, p: u64) -> Result<u64, String> {
        if self.region.is_none() {
            return Ok(p);
        }
        let s = self.part_of(p);
        let full = self.part_bytes() / self.page;
        let (mut c, end) = self.cursors.get(&s).copied().unwrap_or((0, full));
        if c >= end {
            self.fill(t, 2 * self.chunk)?;
            c = 0;
            if self.zoned {
                t.read(s, 4 * KIB)?;
                c = 1;
            }
        }
        self.cursors.insert(s, (c + 1, end));
        Ok(s + c.min(end.saturating_sub(1)) * self.page)
    }
}

/// Block moves (the module doc's bullet): when the pages of a logical block share a die
/// (`blocks_on_one_die`), every logical block of the first `room` bytes (blocks of `block`
/// bytes, effective pages of `page`) is rewritten whole, in order, in turn (a block-mapped FTL
/// gives each a block newly allocated, on whichever die its allocator picks: a die that holds
/// no data has all its blocks free), and a page of it is classified against one page per class
/// found (its anchor); then the blocks whose page joined a class are rewritten and classified
/// again in turn, until 6 (K + 1) + 10 pages in a row joined one of the K classes. Anchors'
/// blocks are not rewritten. A block is classified once its page reads from flash (a write
/// buffer holds the last blocks written: they wait while later ones push them out). At the
/// end the anchors are classified among themselves (a merge of a group's log blocks may have
/// moved one onto another's die), and their classes are the count.
fn block_moves(
    t: &mut dyn Target,
    (block, room, page, parts): (u64, u64, u64, u64),
    (one, repeats): (f64, usize),
    ev: &mut Evictor,
) -> Result<(Classes, Moved), String> {
    ev.blocks(block, parts);
    let blocks = (room / block).min(MOVE_BLOCKS_MAX);
    let mut c = Classes::new(0);
    // (page, logical block) per class, the last joined first; blocks that joined a class, in
    // the order to move them; blocks rewritten and not yet classified, oldest first.
    let mut anchors: Vec<(u64, u64)> = Vec::new();
    let mut movers = std::collections::VecDeque::new();
    let mut waiting = std::collections::VecDeque::new();
    let (mut moves, mut since_new, mut idle, mut split, mut held) = (0, 0, 0, false, false);
    loop {
        let first_pass = moves < blocks as usize;
        if !first_pass && since_new >= 6 * (anchors.len() + 1) + 10 {
            break;
        }
        let Some(b) = (if first_pass { Some(moves as u64) } else { movers.pop_front() })
            .or_else(|| waiting.pop_front())
        else {
            break;
        };
        if moves >= blocks as usize + MOVES_MAX || idle >= MOVES_IDLE_MAX {
            c.exhausted = true;
            break;
        }
        rewrite_block(t, b, (block, page), ev)?;
        (moves, idle) = (moves + 1, idle + 1);
        waiting.push_back(b);
        while let Some(&w) = waiting.front() {
            let Some(pages) = flash_pages(t, (w, block, page, parts), one, ev)? else {
                held = true;
                break;
            };
            idle = 0;
            waiting.pop_front();
            let mut new = false;
            let mut dies = Vec::new();
            for p in pages {
                c.pages += 1;
                if anchor_checked(t, p, &mut anchors, (one, repeats), (&mut c, ev))?.is_none() {
                    anchors.insert(0, (p, w));
                    new = true;
                }
                dies.push(anchors[0].0);
            }
            // Halves on two dies: the block found is two.
            split |= dies.iter().any(|&d| d != dies[0]);
            if new {
                since_new = 0;
            } else {
                movers.push_back(w);
                since_new += 1;
            }
        }
    }
    // The anchors among themselves: one class per die they lie on now.
    let mut reps: Vec<(u64, u64)> = Vec::new();
    for &(p, _) in &anchors {
        if anchor_checked(t, p, &mut reps, (one, repeats), (&mut c, ev))?.is_none() {
            reps.insert(0, (p, 0));
        }
    }
    c.units = reps.len();
    let anchors_out = movers.len() + waiting.len() <= 1;
    let pages = block == page;
    // Every block but one an anchor: more dies than blocks, maybe. One block rewritten again
    // and again (an anchor's, when no other is left) may show the order of the allocations;
    // not when the halves of a block lay on two dies (a rewrite allocates two blocks).
    let mut stride = None;
    if anchors_out && !pages && !split {
        // Two blocks in turn when a write buffer held blocks just written (`block_stride`).
        let want = if held { 2 } else { 1 };
        let mut turns: Vec<u64> = movers.iter().chain(&waiting).copied().take(want).collect();
        while turns.len() < want {
            let Some(a) = anchors.pop() else { break };
            turns.push(a.1);
        }
        let unit = (&turns[..], block, page);
        stride = block_stride(t, unit, (&mut anchors, c.units), (one, repeats), (&mut c, ev))?;
    }
    if let Some((period, _)) = stride {
        // The period is the count, whether or not the moves settled.
        (c.units, c.exhausted) = (period, false);
    }
    Ok((c, Moved { block, blocks, moves, anchors_out, pages, stride }))
}

/// The block moves' part of the report (`block_moves`): what they read and rewrote; when every
/// block of the area but one is an anchor, more dies than blocks may hold none of them.
fn moved_report(r: &mut ProbeReport, m: &Moved) {
    let what = if m.pages { "effective pages" } else { "logical blocks" };
    r.parallel.how += &format!(
        "; {}: the area's {} {what} rewritten one at a time to move them to ones newly \
         allocated, {} rewrites in all, a page of each classified against a page of each class",
        if m.pages {
            "the area holds few pages"
        } else {
            "the pages of a logical block shared a die (a block-mapped FTL)"
        },
        m.blocks,
        m.moves
    );
    if let Some((period, rewrites)) = m.stride {
        // Allocation in turn is the FTL's choice, and a rewrite may allocate twice.
        r.parallel.confidence = r.parallel.confidence.min(0.6);
        r.parallel.how += &format!(
            "; every block but one became a class's own, and one block rewritten {rewrites} \
             times came back to one die every {period} rewrites (blocks allocated over the dies \
             in turn): {period} dies"
        );
    } else if m.anchors_out {
        r.parallel.confidence *= 0.3;
        r.parallel.how += &format!(
            "; every one but one became a class's own: more dies than the area's {} {what} \
             may hold none of its data",
            m.blocks
        );
    }
}

/// The classes pair reads found: how many, the pair times on one unit and on two, the fresh
/// pages classified, whether the count had not settled, and the reads after which a read
/// cache has let a page go (0: no read cache).
struct Classes {
    units: usize,
    same: Vec<f64>,
    apart: Vec<f64>,
    pages: usize,
    exhausted: bool,
    window: u64,
}

/// Most reads the parallel probe's classification may issue, filler reads included.
const MAX_READS: u64 = 1 << 21;

impl Classes {
    /// None found yet; `window`: a read cache's (0: none).
    fn new(window: u64) -> Self {
        Classes {
            units: 0,
            same: Vec::new(),
            apart: Vec::new(),
            pages: 0,
            exhausted: false,
            window,
        }
    }
}

/// Most units the probe separates (a device with more reads as this many, low confidence).
const MAX_UNITS: usize = 512;

/// Reads after which a read cache no longer holds a page read before them: 0 without a read
/// cache (a second read of a page as slow as the first), `None` when none let it go within
/// 2^14 reads (a page-cache buffer holds at most 8 MiB on the matrix). The fresh reads in between go 64 at a time.
fn read_window(
    t: &mut dyn Target,
    fresh: &mut FreshPages,
    one: f64,
) -> Result<Option<u64>, String> {
    let len = fresh.len;
    let x = fresh.next();
    t.read(x, len)?;
    // Two fast re-reads in a row: on a wall clock one fast read may be a quiet moment.
    for _ in 0..2 {
        if t.read(x, len)? as f64 > 0.7 * one {
            return Ok(Some(0));
        }
    }
    let mut n = 64;
    while n <= 1 << 14 {
        t.read(x, len)?;
        filler(t, fresh, n)?;
        if t.read(x, len)? as f64 > 0.7 * one {
            // Twice the first that let it go: a cache evicting by groups may keep some longer.
            return Ok(Some(2 * n));
        }
        n *= 2;
    }
    Ok(None)
}

/// `read_window` with the filler reads within the area (`FreshPages::within_area`): the most
/// of several pages' windows. A cache evicting the fullest block lets a page go when its
/// block is the fullest, which one page may reach soon after it was read and another only
/// after twice the cache's pages were read.
fn within_window(
    t: &mut dyn Target,
    fresh: &mut FreshPages,
    one: f64,
) -> Result<Option<u64>, String> {
    let mut most = 0;
    for _ in 0..WINDOW_PAGES {
        match read_window(t, fresh, one)? {
            Some(w) => most = most.max(w),
            None => return Ok(None),
        }
    }
    // The area's pages read before (the first filler reads, without a spacer, were fresh
    // pages) are let go after the window: they are fresh again.
    // Twice the most: a page read just after its block was evicted stays the longest, and
    // a few pages need not have met that case.
    filler(t, fresh, 2 * most)?;
    fresh.used.clear();
    Ok(Some(2 * most))
}

/// Pages whose windows `within_window` takes the most of.
const WINDOW_PAGES: usize = 8;

/// `n` reads of fresh pages, 64 in flight: they push what a read cache holds out of it.
fn filler(t: &mut dyn Target, fresh: &mut FreshPages, n: u64) -> Result<(), String> {
    let reqs: Vec<(u64, u64)> = (0..n).map(|_| (fresh.filler(), fresh.len)).collect();
    t.read_queue(&reqs, t.max_queue_depth().min(64))?;
    Ok(())
}

/// A page `collide_interleaved` is classifying: when it was last read, the classes it has
/// still to be paired with, whether it is on its second pass, and how many classes there were
/// when its first pass began.
struct Pending {
    p: u64,
    read: u64,
    todo: Vec<usize>,
    second: bool,
    seen: usize,
}

/// Most pages `collide_interleaved` classifies at once.
const INTERLEAVED_MAX: u64 = 256;

/// `collide` behind a read cache that keeps pages for `window` reads: one pair at a time,
/// every pair of a page would wait `window` reads after the last, in filler reads that
/// classify nothing (behind a large cache or a FAB buffer, tens of thousands of reads a pair).
/// Here up to `INTERLEAVED_MAX` fresh pages are classified together, each paired in turn with
/// a member of a class it was not yet paired with whose last read (and its own) lies `window`
/// reads back, so the other pages' pairs are the reads in between; filler reads only make
/// up what is missing. A page that joined no class is paired once more with another member
/// of each class that has one, and with the classes founded meanwhile (another page of the
/// same new unit may have founded it), before it founds one.
fn collide_interleaved(
    t: &mut dyn Target,
    fresh: &mut FreshPages,
    one: f64,
    repeats: usize,
    window: u64,
) -> Result<Classes, String> {
    let mut c = Classes::new(window);
    // Three quarters of the pages that are not filler pages (half the area's).
    let fresh_half = if fresh.within { fresh.area * 3 / 8 } else { fresh.area / 2 };
    let batch = (window / 2).clamp(1, INTERLEAVED_MAX).min(fresh_half / 4).max(1) as usize;
    let mut k = Known::default();
    let mut pending: Vec<Pending> = Vec::new();
    let mut since_new = 0usize;
    loop {
        let settled = k.settled(since_new);
        if k.out_of_budget(&c, fresh_half) {
            c.exhausted = !settled || !pending.is_empty();
            break;
        }
        while !settled && pending.len() < batch {
            let (todo, seen) = (k.order.clone(), k.members.len());
            let q = Pending { p: fresh.next(), read: 0, todo, second: false, seen };
            c.pages += 1;
            if seen == 0 {
                // The first page founds the first class.
                since_new = k.settle(q, None, since_new);
                continue;
            }
            pending.push(q);
        }
        if pending.is_empty() {
            break;
        }
        let mut progress = false;
        let mut j = 0;
        while j < pending.len() {
            match k.try_rested(t, fresh, &mut c, &mut pending[j], (one, repeats))? {
                None => j += 1,
                Some(joined) => {
                    progress = true;
                    if pending[j].todo.is_empty() || joined.is_some() {
                        let done = pending.swap_remove(j);
                        since_new = k.settle(done, joined, since_new);
                    } else {
                        j += 1;
                    }
                }
            }
        }
        if !progress {
            let due = pending.iter().filter_map(|q| k.due(q, window)).min().unwrap_or(k.reads + 1);
            let n = due.saturating_sub(k.reads).max(1);
            filler(t, fresh, n)?;
            k.reads += n;
        }
    }
    c.units = k.members.len();
    Ok(c)
}

/// Classifies fresh pages by pair reads with a member of each known class (a member no read
/// cache holds any more: read at least `window` reads ago).
fn collide(
    t: &mut dyn Target,
    fresh: &mut FreshPages,
    one: f64,
    repeats: usize,
    window: u64,
) -> Result<Classes, String> {
    let mut c = Classes::new(window);
    // Half the pages that can be fresh (half the area's are filler pages when the filler
    // reads within it).
    let fresh_half = if fresh.within { fresh.area / 4 } else { fresh.area.div_ceil(2) };
    let mut k = Known::default();
    let mut since_new = 0usize;
    while !k.settled(since_new) {
        if k.out_of_budget(&c, fresh_half) {
            c.exhausted = true;
            break;
        }
        let p = fresh.next();
        c.pages += 1;
        // When p was last read (a read cache keeps it for `window` reads after each).
        let mut p_read: Option<u64> = None;
        let mut hit = k.try_classes(t, fresh, &mut c, (p, &mut p_read), (one, repeats), 1)?;
        // A page that joined no class is tried once more with another member of each class
        // that has one before it founds a class: one pair that came out fast by accident
        // would otherwise count a unit that is not there (a served drive's probe once read 5
        // units for 4; the matrix gains device 24).
        if hit.is_none() {
            hit = k.try_classes(t, fresh, &mut c, (p, &mut p_read), (one, repeats), 2)?;
        }
        match hit {
            Some(i) => {
                k.members[i].push_back((p, k.reads));
                since_new += 1;
            }
            None => {
                k.reads += 1;
                k.members.push([(p, k.reads)].into());
                k.order.insert(0, k.members.len() - 1);
                since_new = 0;
            }
        }
    }
    c.units = k.members.len();
    Ok(c)
}

/// The classes `collide` has found: per class its members with the read count at their last
/// read, oldest first; the classes in the order to try (the last hit first: neighbours in the
/// sequence often share one); the reads so far.
#[derive(Default)]
struct Known {
    members: Vec<std::collections::VecDeque<(u64, u64)>>,
    order: Vec<usize>,
    reads: u64,
}

impl Known {
    /// Whether the count of units has settled: a unit not seen yet is hit by a fresh page with
    /// probability ≥ 1 ÷ (K + 1) when K are known, so after 6 (K + 1) + 10 pages in a row that
    /// all fell in known units, one is missed with probability under e^-6.
    fn settled(&self, since_new: usize) -> bool {
        since_new >= 6 * (self.members.len() + 1) + 10
    }

    /// Whether classification must stop: units, fresh pages (`fresh_half`) or reads used up.
    /// The read budget bounds a read cache that never lets pages go (filler reads between all
    /// pairs would otherwise grow without end).
    fn out_of_budget(&self, c: &Classes, fresh_half: u64) -> bool {
        self.members.len() >= MAX_UNITS || c.pages as u64 >= fresh_half || self.reads > MAX_READS
    }

    /// The read count at which page `q` can next be paired (itself and a member of a class
    /// it has still to try both read `window` reads before), `None` when it has none to try.
    fn due(&self, q: &Pending, window: u64) -> Option<u64> {
        let member = q.todo.iter().map(|&i| self.members[i].front().map_or(0, |m| m.1)).min()?;
        let read = if q.read == 0 { 0 } else { q.read + window };
        Some(read.max(member + window))
    }

    /// Pairs pending page `q` with the first class of its list (in the order to try) whose
    /// oldest member and `q` itself were last read `c.window` reads ago or more: `None` when
    /// none is ready, `Some(Some(class))` when the pair took two reads, `Some(None)` when it
    /// did not (the class is off the list; an empty list means the page is done with this
    /// pass, and the next pass, if any, is set up).
    fn try_rested(
        &mut self,
        t: &mut dyn Target,
        fresh: &FreshPages,
        c: &mut Classes,
        q: &mut Pending,
        (one, repeats): (f64, usize),
    ) -> Result<Option<Option<usize>>, String> {
        if q.read > 0 && q.read + c.window > self.reads {
            return Ok(None);
        }
        let rested = |m: &std::collections::VecDeque<(u64, u64)>| {
            m.front().is_some_and(|f| f.1 + c.window <= self.reads)
        };
        let Some(at) =
            self.order.iter().position(|i| q.todo.contains(i) && rested(&self.members[*i]))
        else {
            return Ok(None);
        };
        let i = self.order[at];
        let (m, _) = self.members[i].pop_front().expect("a class has members");
        let len = fresh.len;
        let pair = timed(repeats, || t.read_queue(&[(q.p, len), (m, len)], 2))? as f64;
        self.reads += 2;
        q.read = self.reads;
        self.members[i].push_back((m, self.reads));
        q.todo.retain(|&x| x != i);
        if pair > 1.5 * one {
            c.same.push(pair);
            self.order[..=at].rotate_right(1);
            return Ok(Some(Some(i)));
        }
        c.apart.push(pair);
        if q.todo.is_empty() {
            // Classes founded since the page began, then (once) every class of two members
            // or more again, with another member.
            q.todo = (q.seen..self.members.len()).collect();
            q.seen = self.members.len();
            if q.todo.is_empty() && !q.second {
                q.second = true;
                q.todo = (0..self.members.len()).filter(|&x| self.members[x].len() >= 2).collect();
            }
        }
        Ok(Some(None))
    }

    /// A page done: joins class `joined`, or founds one; returns the pages in a row that
    /// joined a known class.
    fn settle(&mut self, q: Pending, joined: Option<usize>, since_new: usize) -> usize {
        if let Some(i) = joined {
            self.members[i].push_back((q.p, q.read));
            return since_new + 1;
        }
        self.members.push([(q.p, q.read.max(self.reads))].into());
        self.order.insert(0, self.members.len() - 1);
        0
    }

    /// Pairs page `p` with the oldest member of each class of at least `min_members`, in
    /// order, until a pair takes two reads (the class, moved to the front) or none does.
    /// Before each pair both pages were last read `c.window` reads ago or more (filler reads
    /// make up the difference), so no read cache answers either.
    fn try_classes(
        &mut self,
        t: &mut dyn Target,
        fresh: &mut FreshPages,
        c: &mut Classes,
        (p, p_read): (u64, &mut Option<u64>),
        (one, repeats): (f64, usize),
        min_members: usize,
    ) -> Result<Option<usize>, String> {
        let len = fresh.len;
        for k in 0..self.order.len() {
            let i = self.order[k];
            if self.members[i].len() < min_members {
                continue;
            }
            let (q, stamp) = self.members[i].pop_front().expect("a class has members");
            let due = p_read.map_or(stamp, |pr| pr.max(stamp)) + c.window;
            if due > self.reads {
                let n = due - self.reads;
                filler(t, fresh, n)?;
                self.reads += n;
                if fresh.outside.is_some() {
                    let w = fresh.next();
                    t.read(w, len)?;
                    self.reads += 1;
                }
            }
            let pair = timed(repeats, || t.read_queue(&[(p, len), (q, len)], 2))? as f64;
            self.reads += 2;
            *p_read = Some(self.reads);
            self.members[i].push_back((q, self.reads));
            if pair > 1.5 * one {
                c.same.push(pair);
                self.order[..=k].rotate_right(1);
                return Ok(Some(i));
            }
            c.apart.push(pair);
        }
        Ok(None)
    }
}

/// Classes of pages by their die over several mapping zones of a device that keeps one zone's
/// table resident (no read cache, no write buffer in the way). A read of a page `a` (its zone
/// made resident by reading it once before) issued together with a read in another zone `B`
/// delays B's table load when the table lies on a's die: the pair takes a read more than a
/// single read with a load (`one_x`). Pairs across zones cannot be timed as within one (both
/// tables load first, and two tables on one die, or a table on a busy die, look like a
/// collision), but which zones' loads a page delays depends on its die alone: its signature
/// (`same_die` compares them, tolerating a stray delay). Up to 64 zones are tried per page.
fn table_classes(
    t: &mut dyn Target,
    fresh: &mut FreshPages,
    one: f64,
    zone: u64,
) -> Result<Classes, String> {
    let len = fresh.len;
    let zones = (fresh.area * fresh.unit / zone).min(64);
    let mut singles = Vec::new();
    for _ in 0..16 {
        let o = fresh.next();
        t.read((o / zone + 1) % zones * zone, len)?;
        singles.push(t.read(o, len)? as f64);
    }
    let one_x = median_f64(singles.into_iter());
    let mut c = Classes::new(0);
    // Per class and zone: the members tested against the zone, and those a load delayed.
    let mut sigs: Vec<Vec<(u32, u32)>> = Vec::new();
    let mut since_new = 0usize;
    while since_new < 6 * (sigs.len() + 1) + 10 {
        if sigs.len() >= MAX_UNITS || c.pages as u64 * 2 >= fresh.area {
            c.exhausted = true;
            break;
        }
        let a = fresh.next();
        c.pages += 1;
        let mut sig = vec![None; zones as usize];
        for b in (0..zones).filter(|&b| b != a / zone) {
            t.read(a, len)?;
            let ns = t.read_queue(&[(a, len), (b * zone, len)], 2)? as f64 - one_x + one;
            sig[b as usize] = Some(ns > 1.5 * one);
            if ns > 1.5 * one {
                c.same.push(ns);
            } else {
                c.apart.push(ns);
            }
        }
        let i = sigs.iter().position(|s| same_die(s, &sig));
        match i {
            Some(i) => {
                for (x, y) in sigs[i].iter_mut().zip(&sig) {
                    if let Some(d) = y {
                        *x = (x.0 + 1, x.1 + u32::from(*d));
                    }
                }
                since_new += 1;
            }
            None => {
                sigs.push(sig.iter().map(|y| y.map_or((0, 0), |d| (1, u32::from(d)))).collect());
                since_new = 0;
            }
        }
    }
    c.units = sigs.len();
    Ok(c)
}

/// The table stride: the first logical block (of `block` bytes, in zone 0 of zones of
/// `zone` bytes over the first `wide` bytes) rewritten again and again goes to a block newly
/// allocated each time, on a block-mapped FTL that allocates over its dies in turn back on one
/// die every N rewrites, N the dies. Its die shows in the zones whose first page, read with
/// a page of it, takes a read more (the zone's table or its data lies on that die; the block's
/// zone made resident first). The labels' period is N.
fn table_stride(
    t: &mut dyn Target,
    (block, page, zone, wide): (u64, u64, u64, u64),
    one: f64,
) -> Result<Option<(usize, usize, usize)>, String> {
    let len = 4 * KIB;
    let zones = (wide / zone).min(64);
    if zones < 3 {
        return Ok(None);
    }
    // A read in zone 0 after one in another zone: a single read with a table load.
    let mut singles = Vec::new();
    for i in 0..8u64 {
        t.read((1 + i % (zones - 1)) * zone, len)?;
        singles.push(t.read(i % (block / page) * page, len)? as f64);
    }
    let one_x = median_f64(singles.into_iter());
    // The pages of a block on one die (a block-mapped FTL), each block's zone loaded first.
    let mut hits = 0;
    for i in 1..5u64 {
        let b = (i * (zones - 1) / 4) * zone;
        t.read(b + 2 * page, len)?;
        let pair = t.read_queue(&[(b, len), (b + page, len)], 2)? as f64;
        hits += usize::from(pair > 1.5 * one);
    }
    if hits < 3 {
        return Ok(None);
    }
    // Every logical block rewritten twice, in order: blocks allocated in turn spread evenly
    // over the dies, so none is left without room (a die whose planes are all taken is
    // skipped, and the period would miss it); the second pass merges log blocks the first
    // left behind (a log block holding earlier probes' writes fills partway through one).
    let mut ev = Evictor::none();
    let all = (t.capacity_bytes() / block).min(MOVE_BLOCKS_MAX);
    for b in 0..2 * all {
        rewrite_block(t, b % all, (block, page), &mut ev)?;
    }
    let mut sigs: Vec<Vec<bool>> = Vec::new();
    let mut labels = Vec::new();
    while labels.len() < BLOCK_STRIDE_MAX {
        // The block's zone resident first: a table load still under way when the rewrite
        // allocates would make its die look busy, and an allocator picking idle dies skip it.
        t.read(page, len)?;
        rewrite_block(t, 0, (block, page), &mut ev)?;
        let mut sig = Vec::new();
        for b in 1..zones {
            t.read(page, len)?;
            let ns = t.read_queue(&[(page, len), (b * zone, len)], 2)? as f64 - one_x + one;
            sig.push(ns > 1.5 * one);
        }
        let label = if sig.iter().any(|&d| d) {
            let i = sigs.iter().position(|s| *s == sig).unwrap_or_else(|| {
                sigs.push(sig);
                sigs.len() - 1
            });
            Some(i as u64)
        } else {
            None
        };
        labels.push(label);
        if let Some((p, k)) = sig_period(&labels) {
            return Ok(Some((p, labels.len(), k)));
        }
    }
    Ok(None)
}

/// The smallest period of `labels` seen twice over and 8 more, every label equal to the one a
/// period later, with two different labels in it at least and none but one more than once
/// (a die's turn comes once a period; dies that hold no table share one label); and the
/// labels in it.
fn sig_period(labels: &[Option<u64>]) -> Option<(usize, usize)> {
    let n = labels.len();
    (2..=n.saturating_sub(8) / 2).find_map(|p| {
        let mut seen: Vec<Option<u64>> = labels[..p].to_vec();
        seen.sort_unstable();
        let all = seen.len();
        seen.dedup();
        let repeated =
            seen.iter().filter(|&&l| labels[..p].iter().filter(|&&m| m == l).count() > 1);
        let once = all - seen.len() <= 1 || repeated.count() <= 1;
        let k = seen.iter().flatten().count();
        let periodic = (0..n - p).all(|i| labels[i] == labels[i + p]);
        (k >= 2 && once && periodic).then_some((p, seen.len()))
    })
}

/// Whether a page's delays (`sig`) are a class's (`class`: per zone its members tested and
/// delayed): over the zones both were tested against, the zones that delay most of the
/// class's members and those that delayed the page overlap in at least half of the smaller
/// set (a delay now and then from elsewhere, a read queued behind another, adds a zone or two
/// that the die's own tables do not explain). A page delaying none is of the class delaying
/// none: a die holding no table.
fn same_die(class: &[(u32, u32)], sig: &[Option<bool>]) -> bool {
    let (mut core, mut own, mut both) = (0, 0, 0);
    for (&(tested, delayed), y) in class.iter().zip(sig) {
        let Some(d) = *y else { continue };
        if tested == 0 {
            continue;
        }
        let c = 2 * delayed > tested;
        core += usize::from(c);
        own += usize::from(d);
        both += usize::from(c && d);
    }
    if core == 0 || own == 0 {
        return core == own;
    }
    2 * both >= core.min(own)
}

/// The pair classes' report; `outside`: the filler reads went after the area's zone.
fn parallel_report(r: &mut ProbeReport, c: &Classes, one: f64, outside: bool) {
    let units = c.units as u64;
    let lo_same = c.same.iter().copied().fold(f64::INFINITY, f64::min);
    let hi_apart = c.apart.iter().copied().fold(0.0, f64::max);
    // The gap between the two kinds of pair against the threshold between them.
    let gap = if c.same.is_empty() || c.apart.is_empty() { 1.0 } else { lo_same / hi_apart };
    let mut conf = if c.same.is_empty() { 0.3 } else { confidence(gap.max(1.0), 0.05) };
    if c.exhausted {
        conf = conf.min(0.2);
    }
    // One-die pairs of unequal times: something beside the two reads (a table load, a queued
    // cleaning step) was timed, and pages may have been put in the wrong class.
    let hi_same = c.same.iter().copied().fold(0.0, f64::max);
    if hi_same > 1.1 * lo_same {
        conf *= 0.4;
    }
    let xs: Vec<f64> = (0..c.same.len() + c.apart.len()).map(|i| i as f64).collect();
    let ys: Vec<f64> = c.same.iter().chain(&c.apart).map(|ns| ns / one).collect();
    r.curves.push(Curve::new(
        "parallel units: pairs of reads (same unit first)",
        "pair",
        "pair time / one read",
        &xs,
        &ys,
    ));
    r.parallel = Detected {
        value: Some(units),
        confidence: conf,
        how: format!(
            "{units} classes of colliding pages over {} fresh pages: a pair on one unit took \
             {:.2}-{:.2} x one read ({one:.0} ns), pairs on two units at most {:.2} x{}{}",
            c.pages,
            lo_same / one,
            hi_same / one,
            hi_apart / one,
            if c.exhausted { "; stopped before the count settled" } else { "" },
            if c.window > 0 {
                format!("; a read cache keeps pages for under {} reads", c.window)
            } else {
                String::new()
            }
        ),
    };
    if outside {
        r.parallel.how += "; the filler reads went after the zone (smaller than the cache), and \
             a fresh page read after them loaded its table before each pair";
    }
    r.parallel_units = r.parallel.value;
}

/// A spike of the block probe: a write at least this many times the median write.
const SPIKE: f64 = 2.5;

/// Runs the block probe's sequential passes into `r.block`; returns the halving test to run on
/// its answer (`halve`) when the answer is one spike per period.
fn block(t: &mut dyn Target, r: &mut ProbeReport) -> Result<Halving, String> {
    let cap = t.capacity_bytes();
    // Writes of one page (the effective page when the page probe found it).
    let w = r.effective_page_bytes.unwrap_or(4 * KIB);
    let n = cap / w;
    if n < 64 {
        return Err(format!("the block probe needs at least 64 pages of target, it has {n}"));
    }
    // Pass 1 lays the device out as pass 2 will overwrite it: sequential writes of one page,
    // one at a time. Pass 2 overwrites it in the same order, so the blocks pass 1 filled
    // become wholly invalid in turn and each block pass 2 fills costs one erase (a log-
    // structured FTL cleaning a victim with nothing to copy) or one switch merge (a block-
    // mapped FTL completing a block): a spike in the latency of the write that needs the
    // block. A write buffer in front mostly destages in the same rhythm (when not, below). So
    // the block is the bytes written per spike.
    rewrite(t, w, n)?;
    let (mut found, mut halving) = block_passes(t, r, w, n, false)?;
    let mut per_erase = halving.per_erase;
    // A buffer that destages in groups of its own (a victim block of its own choosing) may
    // also put its rhythm on the spikes, which then repeat at no period or at one whose
    // erases do not divide it into whole pages (confidence 0). Passes that flush every write
    // hand the FTL one page at a time, in order, and show the FTL's own rhythm. Only then:
    // a page FTL striping over many planes spikes irregularly when it gets one page at a
    // time, and a buffer's grouped destaging often regularises it. And only behind a buffer:
    // a FLUSH now that takes less than a write found nothing held back to destage, and the
    // flushed passes would only repeat these (moving the data the later probes read).
    // Several spikes per period are ambiguous behind a buffer: they may be its destages as
    // well as the erases (BPLRU destaging a block in a few groups spikes several times per
    // block, just as a stream striped over several planes erases several blocks per period).
    let nothing = r.block.value.is_none() || r.block.confidence < 0.01;
    let several = found.as_ref().is_some_and(|p| p.per_period > 1);
    if (nothing || several) && holds_back(t, halving.typical)? {
        if !nothing {
            // A period that holds only loosely behind a buffer may be its destages' rhythm
            // alone: the flushed passes' answer is preferred to it.
            let loose = found.as_ref().is_some_and(|p| p.loose);
            r.block.confidence = r.block.confidence.min(if loose { 0.25 } else { 0.5 });
            r.block.how += " (a FLUSH found a write buffer holding data: the spikes of a \
                            period may be its destages, not erases)";
        }
        let before = r.block.clone();
        // Laid out again the flushed way first: the switch from buffered writes leaves work
        // behind (a merge of what the buffer had destaged in its own order) that would weigh
        // as many erases in the first write.
        for i in 0..n {
            page_write(t, i * w, w, true)?;
        }
        let (f, h) = block_passes(t, r, w, n, true)?;
        let buffered = found.as_ref().filter(|_| !nothing).map(|p| p.period);
        match weigh_flushed(r, before, buffered, w) {
            Flushed::Taken => {
                per_erase = h.per_erase;
                (found, halving) = (f, h);
            }
            // A block from the buffered passes: not one to halve.
            Flushed::Buffered => found = None,
            Flushed::Dropped => {}
        }
    }
    if r.block.value.is_none() {
        by_count(r, per_erase, w);
    }
    r.block_bytes = r.block.value;
    // One spike per period, always there: all spikes alike, so their sizes cannot tell whether
    // each carries one block's erase or several (SAST merges a group's log blocks at once, one
    // spike per two blocks written); the halving test can.
    // The block to halve as found (the chains' period), not the lag's whole writes per spike.
    let pages = found
        .filter(|p| p.score >= 0.95 && p.period.is_multiple_of(p.per_period))
        .and(r.block.value)
        .map_or(0, |v| v / w);
    Ok(Halving { pages, ..halving })
}

/// An answer this unsure (a hybrid FTL's merges out of step, a buffer's destages in the
/// spikes) checked against where pages stop sharing a die (`die_step`), which a block-mapped
/// FTL shows whatever its merges' rhythm; last of all probes, as it lays the device out again.
fn die_check(
    t: &mut dyn Target,
    r: &mut ProbeReport,
    h: &Halving,
    repeats: usize,
) -> Result<(), String> {
    if r.block.confidence >= 0.7 {
        return Ok(());
    }
    let Some(pages) = die_step(t, h, h.n, repeats)? else { return Ok(()) };
    // Runs of pages on one die shorter than any NAND block (16 pages) are a page FTL's
    // stripes (a multi-plane program writes a run per die). And a block-mapped FTL's erases
    // repeat every so many whole blocks: a block that does not divide a longer period of
    // spikes is not its block. (A shorter period is a buffer's destages.)
    if pages < MIN_BLOCK_PAGES {
        return Ok(());
    }
    if let Some(period) = h.period {
        let m = (period / pages as f64).round();
        if m >= 1.0 && (period - m * pages as f64).abs() > (0.005 * period).max(1.0) {
            return Ok(());
        }
    }
    let agrees = r.block.value == Some(pages * h.w);
    r.block.how += &format!(
        "; page s read together with page 0 shares its die up to s = {} and not from {pages} \
         on, and so again from a block further on (a block-mapped FTL keeps a block on one die){}",
        pages - 1,
        if agrees { ": the same block" } else { ": one block per that many writes" }
    );
    r.block.value = Some(pages * h.w);
    r.block.confidence = if agrees { 0.8 } else { 0.7 };
    r.block_bytes = r.block.value;
    Ok(())
}

/// Whether a write buffer holds data back: a FLUSH now takes at least a `typical` write, and
/// twice what a second FLUSH right after it takes (a served drive's FLUSH has a cost of its
/// own, persisting what it acknowledged, with or without a buffer in front).
fn holds_back(t: &mut dyn Target, typical: f64) -> Result<bool, String> {
    let first = t.flush()? as f64;
    if first < typical {
        return Ok(false);
    }
    let again = t.flush()? as f64;
    Ok(first >= 2.0 * again)
}

/// Which passes' answer `weigh_flushed` kept.
enum Flushed {
    /// The flushed passes'.
    Taken,
    /// The buffered passes' period, told apart by the flushed passes.
    Buffered,
    /// The buffered passes' answer as it was.
    Dropped,
}

/// The flushed passes' answer (in `r.block`) against the buffered passes' (`before`, whose
/// period was `buffered` writes when it was an answer at all): the more confident one, and
/// where both are answers that disagree, at most confidence 0.5. A buffer that destages a
/// block at a time (BPLRU, FAB) spikes once per block written through it, while the FTL's own
/// rhythm may span several blocks (SAST merges a group's log blocks together): a flushed block
/// that is a whole multiple of the buffered period is read as that many blocks.
fn weigh_flushed(r: &mut ProbeReport, before: Detected, buffered: Option<u64>, w: u64) -> Flushed {
    if r.block.confidence < before.confidence {
        r.block = before;
        return Flushed::Dropped;
    }
    r.block.how = format!("{}; every write flushed: {}", before.how, r.block.how);
    let (Some(period), Some(pages)) = (buffered, r.block.value.map(|v| v / w)) else {
        return Flushed::Taken;
    };
    if pages == period {
        return Flushed::Taken;
    }
    r.block.confidence = r.block.confidence.min(0.5);
    if pages > period && pages.is_multiple_of(period) {
        r.block.value = Some(period * w);
        r.block.how += &format!(
            "; that is {} of the buffered passes' periods: one block per {period} writes",
            pages / period
        );
        return Flushed::Buffered;
    }
    r.block.how += "; the buffered passes' period disagrees";
    Flushed::Taken
}

/// Three measured sequential passes of `n` writes of `w` bytes over the laid-out device, each
/// write flushed when `flush`; their answer into `r.block`, their period, and the halving
/// test's reference (its `pages` left 0).
fn block_passes(
    t: &mut dyn Target,
    r: &mut ProbeReport,
    w: u64,
    n: u64,
    flush: bool,
) -> Result<(Option<SpikePeriod>, Halving), String> {
    // Three passes measured: a stream striped over many planes repeats its pattern only once
    // every plane has filled a block, and the period needs two repeats in view.
    let mut lat = Vec::with_capacity(3 * n as usize);
    for _ in 0..3 {
        for i in 0..n {
            lat.push(page_write(t, i * w, w, flush)?);
        }
    }
    let n = 3 * n;
    // A spike: at least 2.5x the median write, and at least half the 99th percentile — where
    // more than 1 % of the writes spike (blocks of under 100 pages), the percentile lies among
    // the erases, and a wall-clock target's hiccups well below an erase do not count.
    let mut sorted = lat.clone();
    sorted.sort_unstable();
    let typical = sorted[sorted.len() / 2] as f64;
    let p99 = sorted[sorted.len() * 99 / 100] as f64;
    let threshold = (SPIKE * typical).max(0.5 * p99).max(1.0);
    let spikes: Vec<u64> = (0..n).filter(|&i| lat[i as usize] as f64 >= threshold).collect();
    let cap_writes = n / 3;
    let xs: Vec<f64> = (0..n).map(|i| (i % cap_writes * w) as f64).collect();
    let ys: Vec<f64> = lat.iter().map(|&l| l as f64).collect();
    r.curves.push(Curve::new(
        if flush {
            "block: sequential page writes over the written device, each flushed"
        } else {
            "block: sequential page writes over the written device"
        },
        "offset bytes",
        "response ns",
        &xs,
        &ys,
    ));
    // A spike's weight: the erases (or merges) in it, in units of the typical spike's excess
    // over the median write — a write may wait for two victims, which is one spike but two
    // blocks.
    let excess = |i: u64| (lat[i as usize] as f64 - typical).max(0.0);
    let unit = median_f64(spikes.iter().map(|&i| excess(i))).max(1.0);
    let weight = |i: u64| ((excess(i) / unit).round() as u64).max(1);
    let found = spike_period(&spikes, &weight);
    let erases: u64 = spikes.iter().map(|&i| weight(i)).sum();
    let per_erase = (erases > 0).then(|| n as f64 / erases as f64);
    r.block = match &found {
        None => Detected {
            value: None,
            confidence: 0.0,
            how: format!(
                "{} spikes (writes >= {SPIKE}x the median and half the 99th percentile) in {n} page writes of {w} bytes: no \
                 period",
                spikes.len()
            ),
        },
        Some(p) => period_answer(p, spikes.len(), n, w),
    };
    let seq = lat.iter().map(|&l| l as f64 - typical).sum::<f64>() / n as f64;
    let period = found.as_ref().map(|p| p.exact_period);
    let zone_bytes = None;
    let h = Halving { w, n: n / 3, pages: 0, typical, seq, flush, per_erase, period, zone_bytes };
    Ok((found, h))
}

/// `block_passes`' answer from the period `p` of `count` spikes in `n` writes of `w` bytes
/// (three passes over the device).
fn period_answer(p: &SpikePeriod, count: usize, n: u64, w: u64) -> Detected {
    let cap_writes = n / 3;
    // The block from the chains' period; as sure as the lag's period and the chains'
    // both fall near whole pages (the chains' alone is precise but not always right:
    // with many planes cleaning takes blocks a little out of step, and a spike
    // miscounted in a period gives a whole number of other pages just as well).
    let pages = p.exact_period / p.per_period as f64;
    let rounded = pages.round().max(1.0);
    let near = |q: f64| (p.score * (1.0 - 2.0 * (q - q.round()).abs())).clamp(0.0, 1.0);
    // A period that holds only loosely is less sure (at most 0.8), and its lag, found
    // to 2 %, says nothing the chains do not.
    let mut confidence = if p.loose {
        near(pages).min(0.8)
    } else {
        near(pages).min(near(p.period as f64 / p.per_period as f64))
    };
    // A period as long as a pass (or several) is the passes' own repeat: its length is
    // the device's writes, so whole pages per spike say nothing (SAST's merges out of
    // step with its groups repeat only so, unevenly weighed): at most 0.5.
    let pass = cap_writes as f64;
    let passes = (p.exact_period / pass).round();
    let whole_passes = passes >= 1.0 && (p.exact_period - passes * pass).abs() <= 2.0;
    if whole_passes {
        confidence = confidence.min(0.5);
    }
    Detected {
        value: Some(rounded as u64 * w),
        confidence,
        how: format!(
            "{} spikes in {n} sequential writes of {w} bytes repeat every {} writes{} \
             ({:.0} % of them), {} per period: one per {pages:.2} pages{}",
            count,
            p.period,
            if p.loose { " give or take 2 %" } else { "" },
            100.0 * p.score,
            p.per_period,
            if whole_passes { " (the period is the passes' own)" } else { "" }
        ),
    }
}

/// The block probe's passes, for the tests run after the other probes (`halve`, `die_check`).
struct Halving {
    /// The write size (the effective page), and the writes of it that cover the device.
    w: u64,
    n: u64,
    /// The block found, in writes, to halve (0: none to halve).
    pages: u64,
    /// The sequential passes' median write and mean excess over it per write.
    typical: f64,
    seq: f64,
    /// Whether those passes flushed every write (the tests then do too, to compare alike).
    flush: bool,
    /// The passes' writes per erase (their spikes weighed by the erases in each), if any.
    per_erase: Option<f64>,
    /// Their spikes' period, in writes, if any.
    period: Option<f64>,
    /// The mapping zone the zone probe found since (`None` until then, or none found).
    zone_bytes: Option<u64>,
}

impl Halving {
    /// A read of one page: 4 KiB, or the whole page where it is smaller (a read of 4 KiB from
    /// the last page would pass the end of the device).
    fn read_len(&self) -> u64 {
        self.w.min(4 * KIB)
    }
}

/// The block where the spikes show no period: the passes' writes ÷ their erases. Each block a
/// pass fills costs one erase however the FTL interleaves its planes' cleaning (which can
/// jitter the spikes out of any period), so the count holds where the rhythm does not; but a
/// spike lost or one more shifts it, and a buffer's destages count as erases: said with little
/// confidence, never more than 0.3.
fn by_count(r: &mut ProbeReport, per_erase: Option<f64>, w: u64) {
    let Some(pages) = per_erase.filter(|&p| p >= 1.0) else { return };
    let rounded = pages.round();
    let near = 1.0 - 2.0 * (pages - rounded).abs();
    r.block.value = Some(rounded as u64 * w);
    r.block.confidence = (0.3 * near).clamp(0.0, 0.3);
    r.block.how += &format!("; by count: one erase per {pages:.2} writes");
}

/// Halves the block found while a half is a whole block: overwriting only the first half of
/// every candidate block costs per write no more than the sequential passes did (a whole block
/// is merged, or cleaned, with nothing to copy), and overwriting a half that straddles two
/// halves costs several times that (each half of a block it leaves is copied by a merge). On a
/// page-mapped FTL both cost alike, whatever the block: it does not map by logical blocks.
fn halve(t: &mut dyn Target, r: &mut ProbeReport, h: &Halving) -> Result<(), String> {
    let mut pages = h.pages;
    let mut confidence = r.block.confidence;
    // At least 4 candidate blocks: a straddling half needs a next block, and merges a few.
    while pages.is_multiple_of(2) && pages >= 8 && h.n / pages >= 4 {
        let half = pages / 2;
        if !settled(t, r, h)? {
            // Untested: one spike per period may still be several blocks' merges.
            confidence *= 0.5;
            break;
        }
        let aligned = stretch(t, h, pages, 0, half)? / h.seq.max(1.0);
        r.block.how += &format!(
            "; first halves of {pages}-write blocks overwritten: {aligned:.2}x the passes' \
             excess per write"
        );
        if aligned > 1.5 {
            break;
        }
        if !settled(t, r, h)? {
            confidence *= 0.5;
            break;
        }
        let straddling = stretch(t, h, pages, half / 2, half)? / h.seq.max(1.0);
        let contrast = straddling / aligned.max(1.0);
        r.block.how += &format!(", straddling halves {straddling:.2}x");
        if contrast < 3.0 {
            // The first halves cost no more per write than the passes did, as whole blocks
            // would (a block half overwritten costs copies: a page FTL's cleaning, a hybrid
            // FTL's partial merges), yet the straddling halves cost little more: unsure which
            // the half is (SAST out of step with its groups reads so at twice its block).
            // Where pages stop sharing a die may tell: `die_check`, right after.
            confidence *= 0.5;
            break;
        }
        confidence *= (contrast / 6.0).min(1.0);
        pages = half;
    }
    if pages != h.pages {
        r.block.how += &format!(": one block per {pages} writes");
    }
    r.block.value = Some(pages * h.w);
    r.block.confidence = confidence;
    r.block_bytes = r.block.value;
    Ok(())
}

/// The block found from where pages stop sharing a die: after a sequential pass (each block
/// merged into one physical block, on one die), page 0 + s read together with page 0 takes
/// two reads while s is in 0's block, and one from the next block on, which another die holds
/// (on a device of several). Searched by doubling s up to `limit`, then bisected; found again
/// from two or four blocks further on (block starts only if the block is right), or no answer. `None`
/// too when page 1 does not share 0's die (a page FTL stripes pages over dies), when no s
/// below `limit` leaves it (one die), or when a page read twice comes from RAM the second time
/// (a read cache would answer one read of each pair).
fn die_step(
    t: &mut dyn Target,
    h: &Halving,
    limit: u64,
    repeats: usize,
) -> Result<Option<u64>, String> {
    if limit < 4 || h.n < 8 {
        return Ok(None);
    }
    for i in 0..h.n {
        page_write(t, i * h.w, h.w, h.flush)?;
    }
    // One read: the median of second reads of pages spread over the device (a first read may
    // load its mapping zone's table). A second read under 0.3 of a first came from RAM: a read
    // cache, which reads of other pages then push out before each pair (a filler at the top of
    // the device, away from the pages paired) — if they do.
    let (mut firsts, mut seconds) = (Vec::new(), Vec::new());
    for k in 0..8 {
        let o = (k * h.n / 8 + 1) * h.w;
        firsts.push(t.read(o, h.read_len())?);
        seconds.push(timed(repeats, || t.read(o, h.read_len()))?);
    }
    let (first, mut one) = (median(firsts) as f64, median(seconds) as f64);
    let mut filler = None;
    if one < 0.3 * first {
        let pages = (DIE_STEP_FILLER_BYTES / h.w).max(1);
        if pages > h.n / 4 {
            return Ok(None);
        }
        // Reads push out an LRU cache; a buffer that keeps what it holds until writes need the
        // room (FAB) only writes do.
        for writes in [false, true] {
            push_out_pages(t, h, pages, writes)?;
            let evicted = t.read(h.w, h.read_len())? as f64;
            if evicted >= 5.0 * one {
                (one, filler) = (evicted, Some((pages, writes)));
                break;
            }
        }
        if filler.is_none() {
            return Ok(None);
        }
    }
    let Some(block) = first_apart(t, h, (0, limit, filler), (one, repeats))? else {
        return Ok(None);
    };
    // Found again from a block start further on (a SAST group's last blocks may still lie in
    // its log blocks, whose pages another order may have placed: then from the one after).
    for k in [2, 4] {
        if (k + 2) * block + filler.map_or(0, |f| f.0) > h.n {
            break;
        }
        if first_apart(t, h, (k * block, limit, filler), (one, repeats))? == Some(block) {
            return Ok(Some(block));
        }
    }
    Ok(None)
}

/// The fewest pages a NAND block has (small-block SLC had 32; the random matrix draws 16 up).
const MIN_BLOCK_PAGES: u64 = 16;

/// Reads `die_step`'s filler to push out a read cache: at least twice the largest buffer
/// the random matrix draws.
const DIE_STEP_FILLER_BYTES: u64 = 16 * MIB;

/// Reads (or writes, and then a FLUSH) the last `pages` effective pages of the device, in
/// order.
fn push_out_pages(t: &mut dyn Target, h: &Halving, pages: u64, writes: bool) -> Result<(), String> {
    for i in h.n - pages..h.n {
        if writes {
            t.write(i * h.w, h.w)?;
        } else {
            t.read(i * h.w, h.read_len())?;
        }
    }
    if writes {
        t.flush()?;
    }
    Ok(())
}

/// `die_step`'s search from page `base`: the least s (< `limit`) whose page `base` + s, read
/// together with page `base`, takes one read, where page `base` + 1 takes two. With a
/// `filler` (behind a cache: pages, and whether written), that many pages at the top of the
/// device are read or written before each pair (`push_out_pages`); else each page of a pair is read
/// alone first (a mapping zone's table loaded for it is then not timed in the pair).
fn first_apart(
    t: &mut dyn Target,
    h: &Halving,
    (base, limit, filler): (u64, u64, Option<(u64, bool)>),
    (one, repeats): (f64, usize),
) -> Result<Option<u64>, String> {
    let mut shares = |s: u64| -> Result<bool, String> {
        let (a, b) = (base * h.w, (base + s) * h.w);
        let len = h.read_len();
        let pair = timed(repeats, || {
            match filler {
                Some((pages, writes)) => push_out_pages(t, h, pages, writes)?,
                None => {
                    t.read(b, len)?;
                    t.read(a, len)?;
                }
            }
            t.read_queue(&[(a, len), (b, len)], 2)
        })?;
        // A pair across mapping zones loads b's table (a's was loaded last, and a device that
        // keeps one zone's table resident has dropped b's) before b's read: about two reads
        // on two dies, three on one.
        let across = h.zone_bytes.is_some_and(|z| a / z != b / z);
        Ok(pair as f64 > if across { 2.5 } else { 1.5 } * one)
    };
    let limit = limit.min(h.n - base - filler.map_or(0, |f| f.0));
    if limit < 2 || !shares(1)? {
        return Ok(None);
    }
    let mut s = 2;
    while shares(s)? {
        if s >= limit - 1 {
            return Ok(None);
        }
        s = (2 * s).min(limit - 1);
    }
    let (mut lo, mut hi) = (s / 2, s);
    while hi - lo > 1 {
        let m = lo + (hi - lo) / 2;
        if shares(m)? {
            lo = m;
        } else {
            hi = m;
        }
    }
    Ok(Some(hi))
}

/// Lays the device out again as sequential passes leave it, each test's starting point: two
/// passes, the second timed. False (and said in `r.block.how`) when it cost more than the
/// block probe's passes did: the writes since left the device otherwise (a hybrid FTL's log
/// blocks out of step with the blocks keep full merges going pass after pass), and a test from
/// there tells nothing.
fn settled(t: &mut dyn Target, r: &mut ProbeReport, h: &Halving) -> Result<bool, String> {
    for i in 0..h.n {
        page_write(t, i * h.w, h.w, h.flush)?;
    }
    let mut sum = 0.0;
    for i in 0..h.n {
        sum += page_write(t, i * h.w, h.w, h.flush)? as f64 - h.typical;
    }
    let again = sum / h.n as f64 / h.seq.max(1.0);
    if again > 1.5 {
        r.block.how += &format!(
            "; a sequential pass now costs {again:.2}x the excess per write it did: not halved"
        );
    }
    Ok(again <= 1.5)
}

/// Mean excess over the passes' median write of writing pages `from..from + len` of every
/// candidate block of `pages` pages but the last, in order, twice: the second round pays for
/// the merges the first left pending (a device whose log blocks hold a whole round merges only
/// when a write needs one).
fn stretch(
    t: &mut dyn Target,
    h: &Halving,
    pages: u64,
    from: u64,
    len: u64,
) -> Result<f64, String> {
    let mut sum = 0.0;
    let mut count = 0u32;
    for _ in 0..2 {
        for k in 0..h.n / pages - 1 {
            for j in from..from + len {
                sum += page_write(t, (k * pages + j) * h.w, h.w, h.flush)? as f64 - h.typical;
                count += 1;
            }
        }
    }
    Ok(sum / f64::from(count))
}

/// One timed write, followed by a FLUSH timed with it when `flush`: the buffer then hands the
/// FTL this one page at once, and what the FTL erases or merges for it shows in this write's
/// time (without a buffer the FLUSH costs next to nothing).
fn page_write(t: &mut dyn Target, offset: u64, len: u64, flush: bool) -> Result<u64, String> {
    Ok(t.write(offset, len)? + if flush { t.flush()? } else { 0 })
}

/// One sequential pass of page writes over the `n` pages.
fn rewrite(t: &mut dyn Target, w: u64, n: u64) -> Result<(), String> {
    for i in 0..n {
        t.write(i * w, w)?;
    }
    Ok(())
}

/// The spike (of the sorted `spikes`) nearest `at`, if one lies within `tol` writes of it.
fn nearest_spike(spikes: &[u64], at: u64, tol: u64) -> Option<u64> {
    let i = spikes.partition_point(|&x| x + tol < at);
    spikes[i..].iter().copied().take_while(|&x| x <= at + tol).min_by_key(|&x| x.abs_diff(at))
}

/// The period of spikes that repeat every `lag` writes (give or take `tol`), to a fraction of a
/// write: from a spike, the spike nearest a lag later (or two or three lags, past a spike lost),
/// again and again; the chains' spans ÷ the lags they span. The lag itself is one spike's
/// distance from the first, off by their jitter; over chains of m periods the jitter of their
/// ends counts 1/m (a 357-page block read as 357.7 from one lag of 7 blocks).
fn chain_period(spikes: &[u64], lag: u64, tol: u64) -> f64 {
    let nearest = |at: u64| nearest_spike(spikes, at, tol);
    // One chain from each spike of the first period: a period of several spikes (planes
    // filling blocks in turn) gives as many chains, whose jitter averages out.
    let (mut span, mut lags) = (0u64, 0u64);
    for &start in spikes.iter().take_while(|&&x| x < spikes[0] + lag) {
        let mut end = start;
        'chain: loop {
            for skip in 1..=3 {
                if let Some(next) = nearest(end + skip * lag) {
                    (end, lags) = (next, lags + skip);
                    continue 'chain;
                }
            }
            break;
        }
        span += end - start;
    }
    if lags == 0 {
        return lag as f64;
    }
    span as f64 / lags as f64
}

/// The spikes in a period of `lag` writes (`exact` to a fraction of a write, found with
/// tolerance `tol`), each counted by its `weight`: the median count over the whole periods in
/// view, each period cut in the middle of the pattern's widest gap (`widest`, after its first
/// spike), so that a spike a few writes early or late stays in its own period, and a period cut
/// short by the end of the view is not counted. Only the spikes that recur count (a partner one
/// period before or after, to 2 % of it): a slow spell of a wall-clock target adds spikes of its
/// own, which do not.
fn per_period(
    spikes: &[u64],
    weight: &dyn Fn(u64) -> u64,
    (lag, exact, tol): (u64, f64, u64),
    widest: u64,
) -> u64 {
    let (first, last) = (spikes[0], spikes[spikes.len() - 1]);
    let near = tol.max(1 + lag / LOOSE);
    let partner = |at: u64| nearest_spike(spikes, at, near).is_some();
    let recurring = |x: u64| partner(x + lag) || (x >= first + lag && partner(x - lag));
    // The cut: mid-gap of the widest gap that starts within the first period.
    let gap_start = spikes
        .windows(2)
        .take_while(|p| p[0] < first + lag)
        .filter(|p| p[1] - p[0] == widest)
        .map(|p| p[0])
        .next()
        .unwrap_or(first);
    let cut = gap_start as f64 + widest as f64 / 2.0 - exact;
    let mut counts = Vec::new();
    let mut k = 0.0;
    loop {
        let (from, to) = (cut + k * exact, cut + (k + 1.0) * exact);
        if to > last as f64 + 0.5 {
            break;
        }
        if from >= first as f64 - 0.5 {
            let inside = |x: &&u64| (**x as f64) >= from && (**x as f64) < to;
            counts.push(
                spikes.iter().filter(inside).filter(|&&x| recurring(x)).map(|&x| weight(x)).sum(),
            );
        }
        k += 1.0;
    }
    if counts.is_empty() {
        return 1;
    }
    median(counts).max(1)
}

/// The repeat of a spike pattern: every `period` writes, `per_period` spikes.
#[derive(Debug, PartialEq)]
struct SpikePeriod {
    period: u64,
    /// The period to a fraction of a write: the span of the longest chain of spikes one
    /// period apart from the first, ÷ the periods it spans (`chain_period`).
    exact_period: f64,
    per_period: u64,
    /// Share of the spikes with a partner one period later.
    score: f64,
    /// Found only with the loose tolerance (`spike_period`).
    loose: bool,
}

/// The smallest lag after which the spikes repeat (85 % of them have a spike one lag
/// later, give or take a write or two), and the spikes per lag, each counted by its `weight`
/// (the erases in it). One block filled at a time gives one spike per block; a stream striped
/// over several planes fills their blocks together, in a pattern that repeats once every plane
/// has filled one — counted over whole periods, still one spike per block. Where no lag holds
/// that tightly, or only a whole multiple of one that holds to 2 % of itself, that one: a page
/// FTL that stripes by least load fills its planes' blocks a few writes early or late from one
/// period to the next, and so do a hybrid FTL's merges (`loose`).
fn spike_period(spikes: &[u64], weight: &dyn Fn(u64) -> u64) -> Option<SpikePeriod> {
    let strict = repeat_at(spikes, weight, &|lag| 1 + lag / 500, false);
    let loose = repeat_at(spikes, weight, &|lag| 1 + lag / LOOSE, true);
    match (strict, loose) {
        (Some(s), Some(l))
            if l.period < s.period && {
                let m = (s.period as f64 / l.period as f64).round() as u64;
                m >= 2 && s.period.abs_diff(m * l.period) <= m * (1 + l.period / LOOSE)
            } =>
        {
            Some(l)
        }
        (Some(s), _) => Some(s),
        (None, l) => l,
    }
}

/// A period's tolerance in `spike_period`'s loose search, and in counting the spikes that
/// recur: 1/50 of the lag.
const LOOSE: u64 = 50;

/// `spike_period` with the tolerance `tol_of(lag)` writes.
fn repeat_at(
    spikes: &[u64],
    weight: &dyn Fn(u64) -> u64,
    tol_of: &dyn Fn(u64) -> u64,
    loose: bool,
) -> Option<SpikePeriod> {
    let (&first, &last) = (spikes.first()?, spikes.last()?);
    // The period is at least every gap between its spikes: a shorter lag only matches spikes
    // that come in runs (a run of spikes one write apart matches a lag of 1). A spike lost in
    // a quiet spell doubles a gap, and with it the period found — and the spikes counted in
    // it, so the block stays the same.
    let shortest = spikes.windows(2).map(|p| p[1] - p[0]).max().unwrap_or(0);
    let partner = |at: u64, tol: u64| nearest_spike(spikes, at, tol).is_some();
    for &candidate in &spikes[1..] {
        let lag = candidate - first;
        if lag < 2 {
            continue;
        }
        let tol = tol_of(lag);
        if lag + tol < shortest {
            continue;
        }
        let eligible: Vec<u64> = spikes.iter().copied().filter(|&x| x + lag <= last).collect();
        // At least two periods in view.
        if eligible.len() < 3 || first + 2 * lag > last + tol {
            break;
        }
        let matched = eligible.iter().filter(|&&x| partner(x + lag, tol)).count();
        let score = matched as f64 / eligible.len() as f64;
        if score >= 0.85 {
            let exact_period = chain_period(spikes, lag, tol);
            let per_period = per_period(spikes, weight, (lag, exact_period, tol), shortest);
            return Some(SpikePeriod { period: lag, exact_period, per_period, score, loose });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A target whose FLUSHes take the given times in turn (nothing else is called).
    struct Flushes(Vec<u64>);

    impl Target for Flushes {
        fn describe(&self) -> String {
            "flushes".into()
        }
        fn capacity_bytes(&self) -> u64 {
            0
        }
        fn write(&mut self, _: u64, _: u64) -> Result<u64, String> {
            unreachable!()
        }
        fn read(&mut self, _: u64, _: u64) -> Result<u64, String> {
            unreachable!()
        }
        fn flush(&mut self) -> Result<u64, String> {
            Ok(self.0.remove(0))
        }
        fn simulated(&self) -> bool {
            false
        }
    }

    #[test]
    fn a_buffer_holds_back_when_a_flush_is_slow_and_a_second_one_is_not() {
        // A buffer destaging, then nothing left: held back.
        assert!(holds_back(&mut Flushes(vec![900_000, 2_000]), 100_000.0).unwrap());
        // Fast: nothing held back (no second FLUSH asked).
        assert!(!holds_back(&mut Flushes(vec![50_000]), 100_000.0).unwrap());
        // A served drive persisting at every FLUSH, no buffer: both alike.
        assert!(!holds_back(&mut Flushes(vec![900_000, 700_000]), 100_000.0).unwrap());
    }

    #[test]
    fn zone_step_is_the_largest_gap_above_the_noise() {
        let s = zone_step(&[100.0, 102.0, 99.0, 101.0, 170.0, 172.0, 169.0]).unwrap();
        assert_eq!(s.at, 4);
        assert!((s.gap - 169.0 / 102.0).abs() < 1e-12);
        assert!((s.spread - (102.0 / 99.0 - 1.0)).abs() < 1e-12);
        // Flat: no step.
        assert_eq!(zone_step(&[100.0, 101.0, 100.0, 102.0]), None);
        // Up and down again is not a zone (a zone step stays up).
        assert_eq!(zone_step(&[100.0, 300.0, 100.0, 300.0, 100.0]), None);
        // A gap of 1.43 against a spread of 40 % below it is noise.
        assert_eq!(zone_step(&[100.0, 140.0, 100.0, 200.0, 200.0]), None);
        // A step of 1.25 over a quiet base is one.
        assert_eq!(zone_step(&[100.0, 100.0, 125.0, 126.0]).map(|s| s.at), Some(2));
    }

    #[test]
    fn same_die_tolerates_a_stray_delay_but_not_other_tables() {
        // A class whose members were delayed by zones 1 and 5 (tested twice each), zone 3 its
        // own (never tested), the rest never delaying.
        let class: Vec<(u32, u32)> = (0..8)
            .map(|z| if z == 3 { (0, 0) } else { (2, 2 * u32::from(z == 1 || z == 5)) })
            .collect();
        let sig = |ones: &[usize], own: usize| -> Vec<Option<bool>> {
            (0..8).map(|z| (z != own).then(|| ones.contains(&z))).collect()
        };
        assert!(same_die(&class, &sig(&[1, 5], 0)));
        // One stray delay beside the die's own.
        assert!(same_die(&class, &sig(&[1, 5, 6], 0)));
        // Another die's tables; and a page that delays nothing (a die holding no table).
        assert!(!same_die(&class, &sig(&[2, 6], 0)));
        assert!(!same_die(&class, &sig(&[], 0)));
        let none: Vec<(u32, u32)> = (0..8).map(|_| (2, 0)).collect();
        assert!(same_die(&none, &sig(&[], 4)));
    }

    /// A spike a few writes late at the start throws the lag's period off by as much; the
    /// chains from every spike of the first period average it out. Blocks of 357 writes, 7
    /// spikes a period at uneven places within it (planes filling in turn), each up to 3 writes
    /// late, the very first 6 late.
    #[test]
    fn a_period_that_holds_only_loosely_is_found_and_its_spikes_all_counted() {
        // 18 planes filling 22-page blocks in turn (a period of 396 writes), each a few writes
        // early or late from one period to the next: no lag holds to one write, one holds to
        // 2 % of itself, and every spike of a period counts (the lag's own tolerance of one
        // write counted 16 of 18).
        let within = [0u64, 2, 6, 8, 12, 14, 64, 70, 75, 84, 90, 96, 122, 127, 133, 177, 183, 189];
        let mut spikes = Vec::new();
        for period in 0..10u64 {
            for (k, &o) in within.iter().enumerate() {
                let jitter = (period * 3 + k as u64 * 7) % 5;
                spikes.push(70 + period * 396 + o + jitter);
            }
        }
        spikes.sort_unstable();
        let p = spike_period(&spikes, &|_| 1).expect("a period");
        assert!(p.loose, "{p:?}");
        assert_eq!(p.per_period, 18, "{p:?}");
        assert!((p.exact_period / 18.0 - 22.0).abs() < 0.1, "{p:?}");
        // Held to one write, the same spikes repeat only over several periods.
        let strict = repeat_at(&spikes, &|_| 1, &|lag| 1 + lag / 500, false);
        assert!(strict.as_ref().is_none_or(|s| s.period >= 2 * 396 - 8), "{strict:?}");
    }

    #[test]
    fn the_die_checks_filler_reads_stop_at_the_devices_end() {
        // 2 KiB effective pages: a 4 KiB read of the last one would pass the end (devices 24
        // and 63 of the seed-5 matrix failed their whole probe so).
        let d = crate::matrix::draw(5, 63);
        let mut t = crate::target::SimTarget::new(None, &d.overrides, true).unwrap();
        let w = d.effective_page_bytes;
        assert!(w < 4 * KIB);
        let n = t.capacity_bytes() / w;
        let h = Halving {
            w,
            n,
            pages: 0,
            typical: 0.0,
            seq: 0.0,
            flush: false,
            per_erase: None,
            period: None,
            zone_bytes: None,
        };
        push_out_pages(&mut t, &h, 8, false).unwrap();
        push_out_pages(&mut t, &h, 8, true).unwrap();
    }

    #[test]
    fn by_count_the_block_is_the_writes_per_erase_said_with_little_confidence() {
        let mut r = ProbeReport::default();
        by_count(&mut r, Some(95.45), 4096);
        assert_eq!(r.block.value, Some(95 * 4096));
        assert!((r.block.confidence - 0.3 * 0.1).abs() < 1e-9, "{}", r.block.confidence);
        by_count(&mut r, Some(21.02), 4096);
        assert_eq!(r.block.value, Some(21 * 4096));
        assert!(r.block.confidence <= 0.3);
        let mut none = ProbeReport::default();
        by_count(&mut none, None, 4096);
        assert_eq!(none.block.value, None);
    }

    #[test]
    fn the_chains_find_the_period_to_a_fraction_of_a_write() {
        let within = [0u64, 40, 100, 180, 230, 300, 340];
        let mut spikes = Vec::new();
        for period in 0..12u64 {
            for (k, &o) in within.iter().enumerate() {
                let late = if period == 0 && k == 0 { 6 } else { (period * 7 + k as u64) * 5 % 4 };
                spikes.push(100 + period * 7 * 357 + o * 7 + late);
            }
        }
        spikes.sort_unstable();
        let p = spike_period(&spikes, &|_| 1).expect("a period");
        // (The late first spike hides the one-period lag: two periods are found, 14 spikes.)
        assert_eq!(p.per_period % 7, 0, "{p:?}");
        let lag_pages = p.period as f64 / p.per_period as f64;
        let chain_pages = p.exact_period / p.per_period as f64;
        assert!((chain_pages - 357.0).abs() < 0.2, "chains: {chain_pages}");
        assert!((lag_pages - 357.0).abs() > (chain_pages - 357.0).abs(), "lag: {lag_pages}");
    }

    #[test]
    fn a_block_stride_is_a_period_every_anchor_comes_once_in() {
        // Allocations over 8 dies in turn, anchors (dies found) on dies 2, 3 and 4.
        let label = |die: u64| [2, 3, 4].contains(&die).then_some(die);
        let turn: Vec<Option<u64>> = (0..40).map(|i| label(i % 8)).collect();
        assert_eq!(period(&turn[..23], 3, 3), None, "seen twice over and 8 more");
        assert_eq!(period(&turn[..24], 3, 3), Some(8));
        // Two allocations a rewrite: dies 2 and 4 only, anchor 3 never comes.
        let skip: Vec<Option<u64>> = (0..40).map(|i| label(2 * i % 8)).collect();
        assert_eq!(period(&skip, 3, 3), None);
        // No anchor in it: no period.
        assert_eq!(period(&[None; 40], 2, 2), None);
    }
}
