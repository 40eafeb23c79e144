//! WARCIP: write amplification reduction by clustering I/O by rewrite interval (WARCIP paper;
//! docs/ALGORITHMS.md §11.2), as the SepBIT paper's trace simulator runs it. Time is the FTL's
//! write clock (`WriteClock`), in host page writes.
//!
//! Region 0 takes every cleaner copy. The other regions hold host-write clusters, each with a
//! center (a rewrite interval):
//! - a host write's rewrite interval is the time since the page's last host write plus its
//!   penalty (0 for a page never written, trimmed, or last written before a restart), and the
//!   penalty is cleared; the write joins the cluster whose center is nearest (ties: the cluster
//!   listed last), whose center becomes the mean of the intervals written into its current
//!   block (a cluster's mean restarts with each new block);
//! - a cleaner copy sets the page's penalty to its age (time since its last host write), so
//!   data the cleaner had to move looks colder at its next rewrite.
//!
//! Every 256 filled host-cluster blocks the clusters adapt: a cluster that took more than half
//! of the period's host writes is split (a new cluster, centered halfway between it and the
//! cluster before it, is inserted before it) if fewer than `ftl.regions` clusters exist;
//! otherwise the first cluster that took less than one block of writes is marked, and it is
//! merged away (dropped) when its block next fills. As in the reference simulator the mark is a
//! position in the cluster list, not a cluster: a later split shifts the list under it. A
//! dropped cluster's region is free and the next split reuses it; with several planes, its other
//! planes' open blocks wait there until then.

use std::sync::Arc;

use super::{PageState, Placement, PlacementEntry, PlacementSpec, WriteClock};
use crate::error::ConfigError;
use crate::flash::{Geometry, Lpn};
use crate::ftl::FtlConfig;
use crate::spec::{check, Param, Params};

/// WARCIP's parameter, in its own table `[warcip]` (left out of configurations that do not
/// choose it): `warcip.adapt_every_blocks`, how many filled host-cluster blocks separate two
/// splits or merges. Default 256.
pub(super) const ENTRY: PlacementEntry = PlacementEntry {
    name: "warcip",
    params: &[Param::omitted("warcip", "adapt_every_blocks")],
    resolve,
};

#[derive(Clone, Copy, Debug)]
struct WarcipSpec {
    regions: u32,
    adapt_every_blocks: u32,
}

fn resolve(f: &mut FtlConfig, params: &mut Params<'_>) -> Result<Arc<dyn PlacementSpec>, ConfigError> {
    let regions = *f.regions.get_or_insert(6);
    check(
        (2..=64).contains(&regions),
        "ftl.regions",
        "warcip needs at least 2 regions (the cleaner's and one host cluster)",
    )?;
    let adapt_every_blocks = params.table("warcip").u32("adapt_every_blocks", 256)?;
    check(adapt_every_blocks >= 1, "warcip.adapt_every_blocks", "must be at least 1")?;
    Ok(Arc::new(WarcipSpec { regions, adapt_every_blocks }))
}

impl PlacementSpec for WarcipSpec {
    fn name(&self) -> &'static str {
        ENTRY.name
    }
    fn regions(&self) -> u32 {
        self.regions
    }
    /// Each page's penalty and its last host write, which the FTL keeps for it
    /// (`PageState::last_write`): 4 bytes each.
    fn bytes_per_logical_page(&self) -> u64 {
        8
    }
    fn build(&self, g: &Geometry, _: u32, _: Option<Vec<u32>>) -> Result<Box<dyn Placement>, ConfigError> {
        Ok(Box::new(Warcip::new(
            self.regions,
            g.logical_pages as usize,
            g.pages_per_block,
            self.adapt_every_blocks,
        )))
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Cluster {
    region: u8,
    center: f64,
    /// Host writes into the cluster's current block.
    blocks: u64,
    /// Host writes in this period.
    writes: u64,
}

pub struct Warcip {
    regions: u32,
    pages_per_block: u32,
    adapt_every_blocks: u32,
    clock: WriteClock,
    /// LPN → penalty (host writes), set by the cleaner's copy.
    penalty: Vec<u32>,
    /// Position 0 is the cleaner's log (region 0); the others are host clusters.
    clusters: Vec<Cluster>,
    /// Regions no cluster uses.
    free_regions: Vec<u8>,
    period_writes: u64,
    filled_host_blocks: u32,
    merge_mark: Option<usize>,
}

impl Warcip {
    #[must_use]
    pub fn new(regions: u32, logical_pages: usize, pages_per_block: u32, adapt_every_blocks: u32) -> Self {
        assert!((2..=64).contains(&regions));
        let clusters = (0..regions)
            .map(|r| Cluster { region: r as u8, center: 0.0, blocks: 0, writes: 0 })
            .collect();
        Self {
            regions,
            pages_per_block,
            adapt_every_blocks,
            clock: WriteClock::default(),
            penalty: vec![0; logical_pages],
            clusters,
            free_regions: Vec::new(),
            period_writes: 0,
            filled_host_blocks: 0,
            merge_mark: None,
        }
    }

    /// The clusters' centers, cleaner's log first.
    #[cfg(test)]
    fn centers(&self) -> Vec<f64> {
        self.clusters.iter().map(|c| c.center).collect()
    }

    /// The clusters' regions, cleaner's log first.
    #[cfg(test)]
    fn cluster_regions(&self) -> Vec<u8> {
        self.clusters.iter().map(|c| c.region).collect()
    }

    fn adapt(&mut self) {
        let mut split = false;
        for i in 1..self.clusters.len() {
            if self.clusters[i].writes > self.period_writes / 2
                && self.clusters.len() < self.regions as usize
            {
                let region = self.free_regions.pop().expect("fewer clusters than regions");
                let center = (self.clusters[i - 1].center + self.clusters[i].center) / 2.0;
                self.clusters.insert(i, Cluster { region, center, blocks: 0, writes: 0 });
                split = true;
                break;
            }
        }
        if !split && self.merge_mark.is_none() {
            self.merge_mark = (1..self.clusters.len())
                .find(|&i| self.clusters[i].writes < u64::from(self.pages_per_block));
        }
        self.period_writes = 0;
        for c in &mut self.clusters {
            c.writes = 0;
        }
    }
}

impl Placement for Warcip {
    fn name(&self) -> &'static str {
        "warcip"
    }
    fn regions(&self) -> u32 {
        self.regions
    }
    fn needs_write_clock(&self) -> bool {
        true
    }
    fn tick(&mut self, clock: WriteClock) {
        self.clock = clock;
    }

    fn host_write(&mut self, lpn: Lpn, current: Option<PageState>, _now_ns: u64) -> u8 {
        let penalty = std::mem::take(&mut self.penalty[lpn.index()]);
        let interval = match current.and_then(|p| self.clock.since(p.last_write)) {
            Some(ago) => ago + u64::from(penalty),
            None => 0,
        } as f64;
        let mut nearest = 1;
        let mut best = f64::MAX;
        for i in (1..self.clusters.len()).rev() {
            let d = (self.clusters[i].center - interval).abs();
            if d < best {
                nearest = i;
                best = d;
            }
        }
        let c = &mut self.clusters[nearest];
        c.center = (c.center * c.blocks as f64 + interval) / (c.blocks + 1) as f64;
        c.blocks += 1;
        c.writes += 1;
        self.period_writes += 1;
        c.region
    }

    fn cleaner_copy(&mut self, lpn: Lpn, current: PageState, _now_ns: u64) -> u8 {
        let age = self.clock.since(current.last_write).unwrap_or(0);
        self.penalty[lpn.index()] = u32::try_from(age).unwrap_or(u32::MAX);
        self.clusters[0].region
    }

    fn cleaner_copy_peek(&mut self, _lpn: Lpn, _current: PageState, _now_ns: u64) -> u8 {
        self.clusters[0].region
    }

    fn filled(&mut self, region: u8) {
        let Some(i) = self.clusters.iter().position(|c| c.region == region) else { return };
        if i != 0 {
            self.filled_host_blocks += 1;
        }
        if self.merge_mark == Some(i) {
            self.clusters.remove(i);
            self.free_regions.push(region);
            self.merge_mark = None;
        } else {
            self.clusters[i].blocks = 0;
        }
        if self.filled_host_blocks == self.adapt_every_blocks {
            self.filled_host_blocks = 0;
            self.adapt();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(w: &mut Warcip, host_writes: u64) {
        w.tick(WriteClock { host_writes, mapped_pages: 0 });
    }
    fn page(last_write: u32) -> Option<PageState> {
        Some(PageState { region: 1, entered_ns: 0, last_write })
    }

    #[test]
    fn intervals_join_the_nearest_center_and_the_cleaner_sets_penalties() {
        // 4 regions: the cleaner's log (0) and three host clusters, all centered at 0.
        let mut w = Warcip::new(4, 16, 4, 256);
        at(&mut w, 1);
        assert_eq!(w.host_write(Lpn::new(0), None, 0), 3, "ties: the cluster listed last");
        at(&mut w, 2);
        // Interval 2 − 1 = 1: cluster 3 (center 0, one write) is as near as the others: it is
        // listed last and wins; its center becomes the mean (0 + 1) / 2.
        assert_eq!(w.host_write(Lpn::new(1), page(1), 0), 3);
        assert_eq!(w.centers(), vec![0.0, 0.0, 0.0, 0.5]);
        at(&mut w, 100);
        // Interval 100 − 1 = 99: nearest is cluster 3 (0.5); mean of three: (0.5·2 + 99) / 3.
        assert_eq!(w.host_write(Lpn::new(0), page(1), 0), 3);
        assert!((w.centers()[3] - 100.0 / 3.0).abs() < 1e-9);
        // Interval 0 (new page): clusters 1 and 2 tie at 0; the later one (2) wins.
        at(&mut w, 101);
        assert_eq!(w.host_write(Lpn::new(5), None, 0), 2);
        // The cleaner copies LPN 5 at 150 (last written at 101): penalty 49, region 0.
        at(&mut w, 150);
        let state = PageState { region: 2, entered_ns: 0, last_write: 101 };
        assert_eq!(w.cleaner_copy_peek(Lpn::new(5), state, 0), 0);
        assert_eq!(w.penalty[5], 0, "a peek records nothing");
        assert_eq!(w.cleaner_copy(Lpn::new(5), state, 0), 0);
        assert_eq!(w.penalty[5], 49);
        // Its next host write at 160: interval 160 − 101 + 49 = 108, and the penalty is cleared.
        at(&mut w, 160);
        assert_eq!(w.host_write(Lpn::new(5), page(101), 0), 3, "108 is nearest 33.3");
        assert_eq!(w.penalty[5], 0);
        // A filled block restarts its cluster's mean: the next write sets the center.
        w.filled(3);
        at(&mut w, 161);
        w.host_write(Lpn::new(6), page(61), 0);
        assert_eq!(w.centers()[3], 100.0);
    }

    #[test]
    fn merge_then_split() {
        // 3 regions, blocks of 4 pages, adapt after every 2 filled host blocks.
        let mut w = Warcip::new(3, 64, 4, 2);
        // Cluster 2 takes every write (ties go to the last); cluster 1 none.
        for t in 1..=8 {
            at(&mut w, t);
            assert_eq!(w.host_write(Lpn::new(t as u32), None, 0), 2);
            if t % 4 == 0 {
                w.filled(2);
            }
        }
        // Adapted: no room to split (3 clusters = 3 regions), so cluster 1 (0 writes < 4) is
        // marked, and dropped when its block fills.
        assert_eq!(w.merge_mark, Some(1));
        w.filled(1);
        assert_eq!(w.cluster_regions(), vec![0, 2]);
        // One more filled block (the dropped one counted): the period ends, and cluster 1 (now
        // region 2) took all its writes: split.
        for t in 9..=10 {
            at(&mut w, t);
            w.host_write(Lpn::new(t as u32), None, 0);
        }
        w.filled(2);
        assert_eq!(w.cluster_regions(), vec![0, 1, 2], "the freed region 1 is reused, before");
        assert_eq!(w.centers()[1], 0.0, "halfway between the cleaner's (0) and region 2's (0)");
    }
}
