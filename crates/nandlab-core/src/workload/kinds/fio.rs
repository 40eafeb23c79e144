//! `workload.kind = "fio"`: random I/O whose offsets follow fio's `random_distribution`, written
//! in fio's own syntax and meaning what it means to fio (fio's HOWTO, `random_distribution`;
//! its code: `lib/zipf.c`, `lib/gauss.c`, the zoned parsing of `options.c` and the offset
//! choice of `io_u.c`), so that a fio job maps onto a nandlab run: fio's `bs` is
//! `workload.request_bytes`, `size` the device's `device.logical_bytes`, `rw=randwrite` a
//! `workload.read_fraction` of 0 (`randrw` with `rwmixread=R`: R / 100), `iodepth`
//! `workload.queue_depth`, `norandommap` `workload.norandommap`. docs/ALGORITHMS.md §10.2.
//!
//! fio picks a block among n = the file's size ÷ the block size; here a block is a request-sized
//! unit (`WorkloadSpec::request_units`). `workload.random_distribution`:
//!
//! - `random`: uniform. With fio's default random map (`workload.norandommap = false`) every
//!   block is hit once per pass over the device, in random order; here each pass is a uniformly
//!   random permutation (fio instead takes the next free block after a uniform pick, which touches
//!   every block once per pass too, in a slightly different order). `norandommap = true`: every
//!   request independent. fio uses the random map with `random` only, and so does nandlab.
//! - `zipf:θ[:center]` (θ ≥ 0, θ ≠ 1 as fio demands; default 1.1): Gray et al.'s generator
//!   ("Quickly generating billion-record synthetic databases", SIGMOD 1994), as fio uses it —
//!   exact for ranks 1 and 2, an approximation of Zipf's law beyond, with ζ(n, θ) summed over at
//!   most the first 10^7 ranks, as fio does.
//! - `pareto:h[:center]` (0 < h < 1; default 0.2): rank ⌊(n − 1) · u^(ln h / ln(1 − h))⌋ for u
//!   uniform in [0, 1): the first fraction h of the ranks take the fraction 1 − h of the accesses.
//! - `normal:dev[:center]` (0 ≤ dev < 100; default 0): the mean of 12 uniform draws in 0..=n,
//!   plus a uniform jitter whose width is dev % of n (at most n / 2), as fio computes it.
//! - For these three, fio hashes the rank to spread the hot blocks: block = (rank × 0x61C8864680B
//!   583EB + offset) mod n (64-bit wrap-around, fio's `__hash_u64`), so hot blocks are scattered
//!   and, when n does not divide 2^64, some blocks share a rank. The offset is a seeded random
//!   32-bit value (normal: 0) unless `center` c ∈ [0, 1] is given: n · c (normal: n · (c − 0.5)).
//! - `zoned:a/s[:a/s]...`: zone i takes a_i % of the accesses (whole percents, summing to 100) and
//!   the next s_i % of the device (whole percents, at most 100 in all; a zone with no size or
//!   size 0 shares what the others leave), uniformly inside. `zoned_abs:a/size[:...]`: the same
//!   with sizes in bytes, fio's suffixes k, m, g, t, p (powers of 1024; `kib`, `mib`, ... are
//!   powers of 1000, fio's default `kb_base`). Up to 256 zones; `reads,writes[,trims]` sets
//!   apart (one set: all directions; trims are parsed and not issued); an empty set is uniform.
//!
//! Sampling is O(1) per request (the random map: one swap; zoned: a 100-entry table), with
//! nothing allocated per request; tables are built once per generator (ζ: up to 10^7 powers; the
//! random map: 4 bytes per block). Deterministic by `run.seed`; fio's own random stream is not
//! reproduced, only its distributions.

use std::sync::Arc;

use super::{Generator, Plan, WorkloadKindEntry};
use crate::error::ConfigError;
use crate::flash::Geometry;
use crate::rng::Prng;
use crate::spec::Param;
use crate::workload::{custom_generator, request_units, Addresses, WorkloadSpec};

pub(super) const ENTRY: WorkloadKindEntry = WorkloadKindEntry {
    name: "fio",
    params: &[
        Param::omitted("workload", "random_distribution"),
        Param::omitted("workload", "norandommap"),
    ],
    replayed: false,
    default_passes: (1.0, 2.0),
    resolve: |w, params, g| {
        let text: String = params.or("random_distribution", "random".to_string())?;
        let norandommap: bool = params.or("norandommap", false)?;
        let distribution = parse(&text).map_err(|why| syntax_error(&text, &why))?;
        let plan = FioPlan { distribution, norandommap, unit_bytes: unit_bytes(w.request_bytes, g) };
        plan.check_fits(request_units(w.request_bytes, g))?;
        Ok(Arc::new(plan))
    },
};

const KEY: &str = "workload.random_distribution";

/// The error for a string fio would not take: the key, what is wrong and the syntax.
fn syntax_error(text: &str, why: &str) -> ConfigError {
    ConfigError::new(
        KEY,
        format!(
            "{why} in {text:?}; expected fio's syntax: random | zipf[:theta[:center]] | \
             pareto[:h[:center]] | normal[:dev_percent[:center]] | \
             zoned:access%/size%[:access%/size%...][,writes...[,trims...]] | \
             zoned_abs:access%/bytes[:access%/bytes...][,...] (e.g. zipf:1.2, pareto:0.2:0.5, \
             zoned:60/10:30/20:8/30:2/40, zoned_abs:60/20g:40/100g)"
        ),
    )
}

/// Bytes of one unit: the request rounded up to whole pages.
fn unit_bytes(request_bytes: Option<u64>, g: &Geometry) -> u64 {
    let request_bytes = request_bytes.unwrap_or(g.page_size_bytes);
    request_bytes.div_ceil(g.page_size_bytes).max(1) * g.page_size_bytes
}

/// A parsed `random_distribution`.
#[derive(Clone, Debug, PartialEq)]
pub enum Distribution {
    Random,
    Zipf { theta: f64, center: Option<f64> },
    Pareto { h: f64, center: Option<f64> },
    Normal { deviation_percent: f64, center: Option<f64> },
    /// `zoned` (sizes in percent) or `zoned_abs` (`absolute`: sizes in bytes); an empty list is
    /// uniform.
    Zoned { reads: Vec<Zone>, writes: Vec<Zone>, absolute: bool },
}

/// One zone: its share of the accesses and its size (percent of the device, or bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Zone {
    pub access_percent: u8,
    pub size: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Name {
    Random,
    Zipf,
    Pareto,
    Normal,
    Zoned,
    ZonedAbs,
}

/// fio's distribution names (its `posval` list; `sequence` is not supported).
const NAMES: [(&str, Name); 6] = [
    ("random", Name::Random),
    ("zipf", Name::Zipf),
    ("pareto", Name::Pareto),
    ("normal", Name::Normal),
    ("zoned", Name::Zoned),
    ("zoned_abs", Name::ZonedAbs),
];

/// fio's defaults when no value follows the name (`FIO_DEF_ZIPF`, `FIO_DEF_PARETO`).
const ZIPF_THETA_DEFAULT: f64 = 1.1;
const PARETO_H_DEFAULT: f64 = 0.2;

/// Most zones per direction (fio's `ZONESPLIT_MAX`).
const ZONES_MAX: usize = 256;

/// `random_distribution` in fio's syntax, checked as fio checks it; the error says what is
/// wrong.
pub fn parse(text: &str) -> Result<Distribution, String> {
    let text = text.trim();
    let (name, rest) = match text.split_once(':') {
        Some((n, r)) => (n.trim(), Some(r.trim())),
        None => (text, None),
    };
    let Some(&(_, kind)) = NAMES.iter().find(|(n, _)| *n == name) else {
        let known: Vec<&str> = NAMES.iter().map(|(n, _)| *n).collect();
        return Err(format!("unknown distribution {name:?} (fio's are {})", known.join(", ")));
    };
    match kind {
        Name::Random if rest.is_some() => Err("random takes no value".into()),
        Name::Random => Ok(Distribution::Random),
        Name::Zipf => {
            let (theta, center) = value_and_center(rest, ZIPF_THETA_DEFAULT)?;
            if theta < 0.0 || theta == 1.0 {
                return Err(format!("zipf theta {theta} must be >= 0 and different from 1"));
            }
            Ok(Distribution::Zipf { theta, center })
        }
        Name::Pareto => {
            let (h, center) = value_and_center(rest, PARETO_H_DEFAULT)?;
            if h <= 0.0 || h >= 1.0 {
                return Err(format!("pareto h {h} must be in (0, 1)"));
            }
            Ok(Distribution::Pareto { h, center })
        }
        Name::Normal => {
            let (deviation_percent, center) = value_and_center(rest, 0.0)?;
            if !(0.0..100.0).contains(&deviation_percent) {
                return Err(format!("normal deviation {deviation_percent} must be in [0, 100)"));
            }
            Ok(Distribution::Normal { deviation_percent, center })
        }
        Name::Zoned | Name::ZonedAbs => {
            let absolute = kind == Name::ZonedAbs;
            let rest = rest.ok_or_else(|| format!("{name} needs its zones after a ':'"))?;
            let (reads, writes) = zoned_directions(rest, absolute)?;
            Ok(Distribution::Zoned { reads, writes, absolute })
        }
    }
}

/// `value[:center]` (fio's `split_parse_distr`), `default` with no value; center in [0, 1].
fn value_and_center(rest: Option<&str>, default: f64) -> Result<(f64, Option<f64>), String> {
    let Some(rest) = rest else { return Ok((default, None)) };
    let number = |s: &str| {
        let s = s.trim();
        s.parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| format!("{s:?} is not a number"))
    };
    let (value, center) = match rest.split_once(':') {
        Some((v, c)) => (number(v)?, Some(number(c)?)),
        None => (number(rest)?, None),
    };
    if let Some(c) = center {
        if !(0.0..=1.0).contains(&c) {
            return Err(format!("center {c} must be in [0, 1]"));
        }
    }
    Ok((value, center))
}

/// `reads[,writes[,trims]]` (fio's `str_split_parse`): one set applies to every direction,
/// two sets are reads and writes (trims take the writes').
fn zoned_directions(rest: &str, absolute: bool) -> Result<(Vec<Zone>, Vec<Zone>), String> {
    let sets: Vec<&str> = rest.splitn(3, ',').collect();
    let zones = |s: &str| zone_set(s, absolute);
    match sets.as_slice() {
        [all] => {
            let z = zones(all)?;
            Ok((z.clone(), z))
        }
        [reads, writes] => Ok((zones(reads)?, zones(writes)?)),
        [reads, writes, trims] => {
            zones(trims)?;
            Ok((zones(reads)?, zones(writes)?))
        }
        _ => unreachable!("splitn(3) yields one to three sets"),
    }
}

/// One direction's zones, `access/size:access/size...`, checked and completed as fio's
/// `zone_split_ddir` does (an empty set: no zones).
fn zone_set(text: &str, absolute: bool) -> Result<Vec<Zone>, String> {
    let mut zones = Vec::new();
    // fio stops at the first empty entry.
    for entry in text.trim().split(':').map(str::trim).take_while(|e| !e.is_empty()) {
        if zones.len() == ZONES_MAX {
            return Err(format!("more than {ZONES_MAX} zones"));
        }
        let (access, size) = match entry.split_once('/') {
            Some((a, s)) => (a.trim(), Some(s.trim())),
            None => (entry, None),
        };
        let access_percent = access
            .parse::<u8>()
            .ok()
            .filter(|a| *a <= 100)
            .ok_or_else(|| format!("zone {entry:?}: the access share must be 0 to 100 (percent)"))?;
        let size = match (size, absolute) {
            (None, true) => 0,
            (Some(s), true) => fio_bytes(s)
                .ok_or_else(|| format!("zone {entry:?}: {s:?} is not a size in bytes"))?,
            // A missing or zero percentage shares what the others leave (u64::MAX marks it).
            (None, false) => u64::MAX,
            (Some(s), false) => match s.parse::<u64>() {
                Ok(0) => u64::MAX,
                Ok(p) => p.min(100),
                Err(_) => return Err(format!("zone {entry:?}: {s:?} is not a whole percent")),
            },
        };
        zones.push(Zone { access_percent, size });
    }
    if zones.is_empty() {
        return Ok(zones);
    }
    let access: u32 = zones.iter().map(|z| u32::from(z.access_percent)).sum();
    let missing = zones.iter().filter(|z| z.size == u64::MAX).count() as u64;
    let sized: u64 = if absolute { 0 } else { zones.iter().filter_map(sized_percent).sum() };
    if access > 100 || sized > 100 {
        return Err("the zone percentages add up to more than 100".into());
    }
    if access < 100 {
        return Err(format!("the access percentages add up to {access}, not 100"));
    }
    // What the sized zones leave, shared (fio gives a lone zone without a size 0 %, which
    // sends every access to block 0: taken here as the whole device).
    for z in zones.iter_mut().filter(|z| z.size == u64::MAX) {
        z.size = (100 - sized) / missing;
    }
    Ok(zones)
}

fn sized_percent(z: &Zone) -> Option<u64> {
    (z.size != u64::MAX).then_some(z.size)
}

/// A byte size with fio's suffixes at its default `kb_base` of 1024: `k`/`kb` = 1024,
/// `m`/`mb` = 1024², ... `p`; `kib`, `mib`, ... `pib` = powers of 1000 (fio's "opposite units"),
/// any case; a plain number is bytes.
fn fio_bytes(s: &str) -> Option<u64> {
    let digits = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let value: u64 = s[..digits].parse().ok()?;
    let suffix = s[digits..].to_ascii_lowercase();
    let (power, base) = match suffix.as_str() {
        "" | "b" => (0, 1024),
        "k" | "kb" => (1, 1024),
        "m" | "mb" => (2, 1024),
        "g" | "gb" => (3, 1024),
        "t" | "tb" => (4, 1024),
        "p" | "pb" => (5, 1024),
        "kib" => (1, 1000),
        "mib" => (2, 1000),
        "gib" => (3, 1000),
        "tib" => (4, 1000),
        "pib" => (5, 1000),
        _ => return None,
    };
    value.checked_mul(u64::pow(base, power))
}

/// The resolved `fio` kind.
#[derive(Clone, Debug, PartialEq)]
pub struct FioPlan {
    pub distribution: Distribution,
    /// `workload.norandommap`: no random map for `random`.
    pub norandommap: bool,
    /// Bytes of one unit (fio's block).
    unit_bytes: u64,
}

impl FioPlan {
    /// `zoned_abs` zones that receive accesses must end within the device (fio fails the job
    /// when it picks one that does not).
    fn check_fits(&self, units: u64) -> Result<(), ConfigError> {
        let Distribution::Zoned { reads, writes, absolute: true } = &self.distribution else {
            return Ok(());
        };
        let device_bytes = units.saturating_mul(self.unit_bytes);
        for zones in [reads, writes] {
            let mut end = 0u64;
            for z in zones {
                end = end.saturating_add(z.size);
                // fio: the zone's last block (end ÷ block size) past the device's.
                if z.access_percent > 0 && end / self.unit_bytes > units {
                    return Err(ConfigError::new(
                        KEY,
                        format!(
                            "zoned_abs zones end at {end} bytes, past the {device_bytes} bytes \
                             the workload addresses (the logical capacity in whole requests)"
                        ),
                    ));
                }
            }
        }
        Ok(())
    }
}

impl Plan for FioPlan {
    fn generator(&self, spec: &WorkloadSpec) -> Result<Box<dyn Generator>, ConfigError> {
        let units = spec.request_units();
        let mut setup = Prng::for_stream(spec.seed, "workload.fio");
        let sampler = match &self.distribution {
            Distribution::Random if self.norandommap => Sampler::Uniform,
            Distribution::Random => Sampler::RandomMap { order: (0..units).map(|u| u as u32).collect(), next: 0 },
            Distribution::Zipf { theta, .. } => Sampler::Zipf(FioZipf::new(units, *theta)),
            Distribution::Pareto { h, .. } => Sampler::Pareto { power: h.ln() / (1.0 - h).ln() },
            Distribution::Normal { deviation_percent, .. } => {
                Sampler::Normal { width: normal_width(units, *deviation_percent) }
            }
            Distribution::Zoned { reads, writes, absolute } => Sampler::Zoned {
                reads: ZoneTable::new(reads, *absolute, units, self.unit_bytes),
                writes: ZoneTable::new(writes, *absolute, units, self.unit_bytes),
            },
        };
        let offset = match &self.distribution {
            Distribution::Zipf { center, .. } | Distribution::Pareto { center, .. } => {
                center.map_or(setup.next_u64() >> 32, |c| (units as f64 * c) as u64)
            }
            Distribution::Normal { center: Some(c), .. } => {
                ((units as f64 * (c - 0.5)) as i64).rem_euclid(units as i64) as u64
            }
            _ => 0,
        };
        custom_generator(spec, Box::new(FioAddresses { units, offset, sampler }))
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    /// The random map.
    fn table_bytes(&self, spec: &WorkloadSpec) -> u64 {
        let map = self.distribution == Distribution::Random && !self.norandommap;
        if map {
            spec.request_units() * 4
        } else {
            0
        }
    }
}

/// fio's normal jitter width: ⌈n · dev / 100⌉, at most n / 2.
fn normal_width(n: u64, deviation_percent: f64) -> u64 {
    if deviation_percent == 0.0 {
        return 0;
    }
    ((n as f64 * deviation_percent / 100.0).ceil() as u64).min(n / 2)
}

/// fio's `__hash_u64`: multiplication by 2^64 / φ² (the golden ratio), wrapping.
const GOLDEN_RATIO_64: u64 = 0x61C8_8646_80B5_83EB;

/// Gray et al.'s Zipf generator as fio's `zipf_next` computes it (module doc).
#[derive(Clone, Debug)]
pub(crate) struct FioZipf {
    n: u64,
    theta: f64,
    zeta_n: f64,
    alpha: f64,
    eta: f64,
}

/// fio sums ζ(n, θ) over at most this many ranks (`ZIPF_MAX_GEN`).
const ZETA_TERMS_MAX: u64 = 10_000_000;

impl FioZipf {
    pub(crate) fn new(n: u64, theta: f64) -> Self {
        let zeta_n: f64 = (1..=n.min(ZETA_TERMS_MAX)).map(|i| (i as f64).powf(-theta)).sum();
        let zeta_2 = 1.0 + 0.5f64.powf(theta);
        let alpha = 1.0 / (1.0 - theta);
        let eta = (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta_2 / zeta_n);
        Self { n, theta, zeta_n, alpha, eta }
    }

    /// A rank from 0 (the most popular), before fio's hash.
    #[inline]
    pub(crate) fn rank(&self, u: f64) -> u64 {
        let z = u * self.zeta_n;
        let rank1 = if z < 1.0 {
            1
        } else if z < 1.0 + 0.5f64.powf(self.theta) {
            2
        } else {
            1 + (self.n as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64
        };
        rank1 - 1
    }
}

/// 100 slots of one percent of the accesses each, naming the zone's first unit and length.
struct ZoneTable {
    slots: Option<Box<[(u64, u64); 100]>>,
}

impl ZoneTable {
    fn new(zones: &[Zone], absolute: bool, units: u64, unit_bytes: u64) -> Self {
        if zones.is_empty() {
            return Self { slots: None };
        }
        let mut slots = Box::new([(0u64, 1u64); 100]);
        let (mut slot, mut size_before) = (0usize, 0u64);
        for z in zones {
            let size_end = size_before.saturating_add(z.size);
            // fio: zoned starts at whole percents of the blocks and spans n × (its percents) ÷
            // 100 blocks; zoned_abs cuts at whole blocks. An empty zone is its first block.
            let (first, length) = if absolute {
                let first = size_before / unit_bytes;
                (first, (size_end / unit_bytes).saturating_sub(first))
            } else {
                (size_before.min(100) * units / 100, units * (size_end.min(100) - size_before.min(100)) / 100)
            };
            let first = first.min(units - 1);
            let length = length.clamp(1, units - first);
            for s in &mut slots[slot..slot + usize::from(z.access_percent)] {
                *s = (first, length);
            }
            slot += usize::from(z.access_percent);
            size_before = size_end;
        }
        Self { slots: Some(slots) }
    }
}

enum Sampler {
    Uniform,
    /// A uniformly random order of the units, consumed one per request (an incremental
    /// Fisher–Yates shuffle): every unit once per pass.
    RandomMap {
        order: Vec<u32>,
        next: usize,
    },
    Zipf(FioZipf),
    Pareto {
        power: f64,
    },
    Normal {
        width: u64,
    },
    Zoned {
        reads: ZoneTable,
        writes: ZoneTable,
    },
}

struct FioAddresses {
    units: u64,
    /// Added to a hashed rank (fio's `rand_off`).
    offset: u64,
    sampler: Sampler,
}

impl FioAddresses {
    /// fio's spreading of a rank: hash, add the offset, modulo n.
    #[inline]
    fn spread(&self, rank: u64) -> u64 {
        rank.wrapping_mul(GOLDEN_RATIO_64).wrapping_add(self.offset) % self.units
    }

    /// fio's `gauss_next` before the hash.
    fn normal(&self, width: u64, rng: &mut Prng) -> u64 {
        let n = self.units;
        let sum: u64 = (0..12).map(|_| rng.below(n + 1)).sum();
        let mut mean = sum.div_ceil(12);
        if width > 0 {
            let mut dev = (width as f64 * rng.unit_f64()) as i64 - (width / 2) as i64;
            while mean.wrapping_add_signed(dev) >= n {
                dev /= 2;
            }
            mean = mean.wrapping_add_signed(dev);
        }
        mean
    }
}

impl Addresses for FioAddresses {
    fn next_unit(&mut self, rng: &mut Prng, write: bool) -> u64 {
        let n = self.units;
        match &mut self.sampler {
            Sampler::Uniform => rng.below(n),
            Sampler::RandomMap { order, next } => {
                if *next == order.len() {
                    *next = 0;
                }
                let j = *next + rng.below((order.len() - *next) as u64) as usize;
                order.swap(*next, j);
                *next += 1;
                u64::from(order[*next - 1])
            }
            Sampler::Zipf(z) => {
                let rank = z.rank(rng.unit_f64());
                self.spread(rank)
            }
            Sampler::Pareto { power } => {
                let rank = ((n - 1) as f64 * rng.unit_f64().powf(*power)) as u64;
                self.spread(rank)
            }
            Sampler::Normal { width } => {
                let width = *width;
                let rank = self.normal(width, rng);
                self.spread(rank)
            }
            Sampler::Zoned { reads, writes } => {
                let table = if write { writes } else { reads };
                match &table.slots {
                    None => rng.below(n),
                    Some(slots) => {
                        let (first, length) = slots[rng.below(100) as usize];
                        first + rng.below(length)
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::workload::{WorkItem, Workload};

    fn zones(spec: &[(u8, u64)]) -> Vec<Zone> {
        spec.iter().map(|&(access_percent, size)| Zone { access_percent, size }).collect()
    }

    #[test]
    fn parses_fio_syntax_with_fio_defaults() {
        use Distribution as D;
        assert_eq!(parse("random"), Ok(D::Random));
        assert_eq!(parse("zipf"), Ok(D::Zipf { theta: 1.1, center: None }));
        assert_eq!(parse(" zipf:1.2:0.25 "), Ok(D::Zipf { theta: 1.2, center: Some(0.25) }));
        assert_eq!(parse("pareto"), Ok(D::Pareto { h: 0.2, center: None }));
        assert_eq!(parse("pareto:0.3"), Ok(D::Pareto { h: 0.3, center: None }));
        assert_eq!(parse("normal:10"), Ok(D::Normal { deviation_percent: 10.0, center: None }));
        let hot = zones(&[(60, 10), (30, 20), (8, 30), (2, 40)]);
        assert_eq!(
            parse("zoned:60/10:30/20:8/30:2/40"),
            Ok(D::Zoned { reads: hot.clone(), writes: hot, absolute: false })
        );
        // Sizes left out share what the others leave; reads and writes apart.
        assert_eq!(
            parse("zoned:50/10:50,30:70/20"),
            Ok(D::Zoned {
                reads: zones(&[(50, 10), (50, 90)]),
                writes: zones(&[(30, 80), (70, 20)]),
                absolute: false
            })
        );
        // fio's sizes: k/m/g = powers of 1024, kib/mib/gib = powers of 1000.
        assert_eq!(
            parse("zoned_abs:60/20G:30/100m:10/3kib"),
            Ok(D::Zoned {
                reads: zones(&[(60, 20 << 30), (30, 100 << 20), (10, 3000)]),
                writes: zones(&[(60, 20 << 30), (30, 100 << 20), (10, 3000)]),
                absolute: true
            })
        );
        // An empty set is uniform.
        let Ok(D::Zoned { reads, writes, .. }) = parse("zoned:,100/50") else { panic!() };
        assert!(reads.is_empty());
        assert_eq!(writes, zones(&[(100, 50)]));
    }

    #[test]
    fn refuses_what_fio_refuses() {
        for (bad, why) in [
            ("zipf:1", "different from 1"),
            ("zipf:-0.5", "must be >= 0"),
            ("pareto:1.5", "must be in (0, 1)"),
            ("pareto:0", "must be in (0, 1)"),
            ("normal:100", "[0, 100)"),
            ("zipf:1.2:1.5", "center 1.5"),
            ("zipf:abc", "not a number"),
            ("gauss:3", "unknown distribution \"gauss\""),
            ("sequence:2,0,1", "unknown distribution"),
            ("random:5", "random takes no value"),
            ("zoned", "needs its zones"),
            ("zoned:60/10:30/20", "add up to 90, not 100"),
            ("zoned:60/50:40/60", "more than 100"),
            ("zoned:160/10", "0 to 100"),
            ("zoned:50/x:50/50", "whole percent"),
            ("zoned_abs:50/1q:50/2", "not a size in bytes"),
        ] {
            let e = syntax_error(bad, &parse(bad).unwrap_err());
            assert_eq!(e.key, "workload.random_distribution");
            assert!(e.message.contains(why), "{bad}: {}", e.message);
            assert!(e.message.contains("expected fio's syntax"), "{}", e.message);
        }
    }

    /// fio's Zipf ranks: 1 and 2 exact, the rest Gray's approximation of Zipf's law.
    #[test]
    fn zipf_ranks_follow_grays_generator() {
        for (n, theta) in [(4096u64, 0.8), (4096, 1.2), (1000, 1.1)] {
            let z = FioZipf::new(n, theta);
            let mut rng = Prng::new(5);
            let draws = 1_000_000u64;
            let mut counts = vec![0u64; n as usize + 1];
            for _ in 0..draws {
                counts[z.rank(rng.unit_f64()).min(n) as usize] += 1;
            }
            let zeta: f64 = (1..=n).map(|i| (i as f64).powf(-theta)).sum();
            let zipf = |r: u64| ((r + 1) as f64).powf(-theta) / zeta;
            let f = |r: u64| counts[r as usize] as f64 / draws as f64;
            for r in 0..2 {
                assert!((f(r) / zipf(r) - 1.0).abs() < 0.02, "n {n} θ {theta} rank {r}");
            }
            for r in 2..12 {
                let ratio = f(r) / zipf(r);
                assert!((0.85..1.25).contains(&ratio), "n {n} θ {theta} rank {r}: {ratio}");
            }
            if theta < 1.0 {
                // Exactly Gray's mass: u ↦ n (η u − η + 1)^α is increasing, so rank r ≥ 2 (from
                // 0) takes the u whose image lies in [r, r + 1).
                let u_of = |y: f64| ((y / n as f64).powf(1.0 / z.alpha) - 1.0) / z.eta + 1.0;
                let low = (1.0 + 0.5f64.powf(theta)) / zeta;
                for r in 2..12u64 {
                    let mass = u_of(r as f64 + 1.0).clamp(low, 1.0) - u_of(r as f64).clamp(low, 1.0);
                    assert!((f(r) / mass - 1.0).abs() < 0.03, "rank {r}: {} vs {mass}", f(r));
                }
            }
        }
    }

    /// A generator of `kind=fio` on a small device (n a power of two: fio's hash is then a
    /// one-to-one map of ranks onto blocks), with the units it addresses.
    fn run(distribution: &str, extra: &[&str]) -> (Vec<(bool, u64)>, u64) {
        let d = format!("workload.random_distribution={distribution}");
        let mut o = vec![
            "device.blocks=80",
            "device.pages_per_block=64",
            "device.logical_bytes=16777216",
            "workload.kind=fio",
            "workload.prefill=false",
            "workload.warmup_passes=0",
            d.as_str(),
        ];
        o.extend_from_slice(extra);
        let r = Config::from_overrides(&o).unwrap().resolve().unwrap();
        let page = r.geometry.page_size_bytes;
        let units = r.workload.request_units();
        let items = Workload::new(&r.workload).unwrap().filter_map(|i| match i {
            WorkItem::Request(q) => Some((q.kind == crate::request::RequestKind::Write, q.offset_bytes / page)),
            _ => None,
        });
        (items.collect(), units)
    }

    fn counts(pages: &[(bool, u64)], n: u64) -> Vec<u64> {
        let mut c = vec![0u64; n as usize];
        pages.iter().for_each(|(_, p)| c[*p as usize] += 1);
        c
    }

    #[test]
    fn hashed_ranks_land_where_fio_puts_them() {
        let (pages, n) = run("zipf:1.2:0.25", &["workload.passes=100"]);
        assert_eq!(n, 4096);
        let c = counts(&pages, n);
        // Rank r is block (r·φ' + n/4) mod n: ranks 0 and 1 take Zipf's exact shares.
        let block = |r: u64| (r.wrapping_mul(GOLDEN_RATIO_64).wrapping_add(n / 4)) % n;
        let zeta: f64 = (1..=n).map(|i| (i as f64).powf(-1.2)).sum();
        for r in 0..2u64 {
            let share = c[block(r) as usize] as f64 / pages.len() as f64;
            let p = ((r + 1) as f64).powf(-1.2) / zeta;
            assert!((share / p - 1.0).abs() < 0.03, "rank {r}: {share} vs {p}");
        }
        assert_ne!(block(1).abs_diff(block(0)), 1, "hot blocks are not neighbours");
    }

    #[test]
    fn pareto_h_is_the_hot_fraction() {
        for h in [0.2, 0.1, 0.35] {
            let (pages, n) = run(&format!("pareto:{h}"), &["workload.passes=30"]);
            let c = counts(&pages, n);
            // With the seeded offset o: block (r·φ' + o) mod n. The hottest block is rank 0's;
            // the first h·n ranks are the blocks reached from it by the same map.
            let hottest = (0..n).max_by_key(|&b| c[b as usize]).unwrap();
            let offset = hottest;
            let hot_ranks = (h * n as f64) as u64;
            let hot: u64 = (0..hot_ranks)
                .map(|r| c[((r.wrapping_mul(GOLDEN_RATIO_64).wrapping_add(offset)) % n) as usize])
                .sum();
            let share = hot as f64 / pages.len() as f64;
            assert!((share - (1.0 - h)).abs() < 0.01, "h {h}: {share} of the accesses to the top {h}");
        }
    }

    #[test]
    fn normal_is_fios_sum_of_uniforms_plus_jitter() {
        let n = 10_000u64;
        for dev in [0.0, 10.0, 50.0] {
            let a = FioAddresses { units: n, offset: 0, sampler: Sampler::Uniform };
            let width = normal_width(n, dev);
            let mut rng = Prng::new(9);
            let draws = 200_000;
            let xs: Vec<f64> = (0..draws).map(|_| a.normal(width, &mut rng) as f64).collect();
            let mean = xs.iter().sum::<f64>() / draws as f64;
            let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / draws as f64).sqrt();
            // Mean of 12 uniforms on 0..=n: sd n/12; the jitter adds width²/12 of variance.
            let want_sd = ((n as f64 / 12.0).powi(2) + (width as f64).powi(2) / 12.0).sqrt();
            assert!((mean / (n as f64 / 2.0) - 1.0).abs() < 0.01, "dev {dev}: mean {mean}");
            assert!((sd / want_sd - 1.0).abs() < 0.02, "dev {dev}: sd {sd} vs {want_sd}");
            assert!(xs.iter().all(|&x| x < n as f64));
        }
        assert_eq!(normal_width(1000, 60.0), 500, "at most n/2");
        assert_eq!(normal_width(1000, 0.5), 5);
    }

    #[test]
    fn zoned_shares_go_to_their_zones() {
        let (pages, n) = run("zoned:60/10:30/20:8/30:2/40", &["workload.passes=25"]);
        let c = counts(&pages, n);
        let zone = |from: u64, to: u64| -> f64 {
            c[(from * n / 100) as usize..(to * n / 100) as usize].iter().sum::<u64>() as f64
                / pages.len() as f64
        };
        for (from, to, share) in [(0, 10, 0.6), (10, 30, 0.3), (30, 60, 0.08), (60, 100, 0.02)] {
            assert!((zone(from, to) - share).abs() < 0.005, "{from}-{to} %: {}", zone(from, to));
        }
        // Uniform inside a zone.
        let first = &c[..(n / 10) as usize];
        let (lo, hi) = (first.iter().min().unwrap(), first.iter().max().unwrap());
        assert!(*lo > 0 && hi - lo < 80, "{lo}..{hi}");
        // zoned_abs: 16 MiB device, 90 % of the accesses to its first MiB.
        let (pages, n) = run("zoned_abs:90/1m:10/15m", &["workload.passes=10"]);
        let c = counts(&pages, n);
        let share = c[..256].iter().sum::<u64>() as f64 / pages.len() as f64;
        assert!((share - 0.9).abs() < 0.01, "{share}");
        // Reads and writes zoned apart.
        let (pages, _) =
            run("zoned:100/10,100/50:0/50", &["workload.passes=5", "workload.read_fraction=0.5"]);
        assert!(pages.iter().filter(|(w, _)| !*w).all(|(_, p)| *p < 410));
        assert!(pages.iter().filter(|(w, _)| *w).all(|(_, p)| *p < 2048));
        assert!(pages.iter().filter(|(w, _)| *w).any(|(_, p)| *p >= 410));
    }

    #[test]
    fn random_map_hits_every_block_once_per_pass() {
        let (pages, n) = run("random", &["workload.passes=3"]);
        assert_eq!(pages.len() as u64, 3 * n);
        for pass in pages.chunks(n as usize) {
            let c = counts(pass, n);
            assert!(c.iter().all(|&x| x == 1), "each block once per pass");
        }
        assert_ne!(pages[..n as usize], pages[n as usize..2 * n as usize], "a new order each pass");
        let (pages, n) = run("random", &["workload.passes=1", "workload.norandommap=true"]);
        let c = counts(&pages, n);
        let untouched = c.iter().filter(|&&x| x == 0).count() as f64 / n as f64;
        assert!((untouched - (-1f64).exp()).abs() < 0.03, "independent draws miss e^-1: {untouched}");
    }

    #[test]
    fn resolves_records_and_checks_the_device() {
        let r = Config::from_overrides(&["workload.kind=fio"]).unwrap().resolve().unwrap();
        let w = &r.config.workload;
        assert_eq!(w.param::<String>("random_distribution").as_deref(), Some("random"));
        assert_eq!(w.param::<bool>("norandommap"), Some(false));
        let e = Config::from_overrides(&[
            "workload.kind=fio",
            "device.logical_bytes=16777216",
            "workload.random_distribution=zoned_abs:50/8m:50/9m",
        ])
        .unwrap()
        .resolve()
        .unwrap_err();
        assert_eq!(e.key, "workload.random_distribution");
        assert!(e.message.contains("past the 16777216 bytes"), "{}", e.message);
        let e = Config::from_overrides(&["workload.kind=fio", "workload.random_distribution=zipf:1"])
            .unwrap()
            .resolve()
            .unwrap_err();
        assert!(e.to_string().contains("workload.random_distribution"), "{e}");
        let (a, _) = run("normal:5:0.3", &["workload.passes=1", "workload.request_bytes=16384"]);
        let (b, _) = run("normal:5:0.3", &["workload.passes=1", "workload.request_bytes=16384"]);
        assert_eq!(a, b, "deterministic by seed");
        assert!(a.iter().all(|(_, p)| p % 4 == 0 && *p < 4096), "aligned whole requests");
    }
}
