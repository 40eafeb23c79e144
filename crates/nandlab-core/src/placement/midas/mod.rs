//! MiDAS (Oh et al., "MiDAS: Minimizing Write Amplification in Log-Structured Systems through
//! Adaptive Group Number and Size Configuration", FAST'24; docs/ALGORITHMS.md §2.6).
//!
//! Migration-based age groups: host writes enter group 1 (or the hot group 0), and a valid page
//! the cleaner copies out of group i goes to group i+1; the last group keeps its own. Victims
//! (the placement picks them, `Placement::select_victim`): the first group over its size budget
//! gives its oldest block (FIFO); when none is over, the last group gives its block with the
//! fewest valid pages (greedy).
//!
//! Start-up ("naive MiDA"): the hot group and four migration groups, victims greedy over all
//! blocks. The model (`model.rs`): from two logical passes of host writes on, it samples one
//! page in 100 for a time window of four physical capacities and builds the update interval
//! distribution (UID); at its end the configuration search (GCS) picks the group number and
//! sizes that minimise the Markov-chain predicted WA; the configuration is applied when its
//! predicted WA is not above the WA of the last physical capacity of writes, and the model
//! starts a new window. The hot filter: a 2-bit counter per page, raised when a page is
//! overwritten while in the hot group or young in group 1, lowered when the cleaner moves it
//! out of group 0 or 1; a page at 3 is written to the hot group.
//!
//! Named differences from the authors' simulator (pinned by tests in `tests.rs`):
//! - *synchronous model*: the search runs at the first cleaning after the window closes and
//!   its result is applied at the next host write (the simulator runs it on a thread and
//!   applies it whenever the thread ends);
//! - *relabelled groups*: a new configuration makes every non-hot block part of the last group
//!   and gives the new middle groups empty regions (the simulator merges or splits groups at
//!   the tail); a hot group over its new size is cleaned down by FIFO instead of having its
//!   surplus blocks moved to the last group;
//! - *error handling*: the simulator's "unknown area" check (every 0.3 model window of host
//!   writes once each group has given a victim, the first group whose victims were more than
//!   0.1 more valid than predicted is merged with every later group into a greedy tail of
//!   four migrating groups) and its merge after 25 cleanings in a row for one host write are
//!   reproduced; its doubling of the window after two erroneous models is not;
//! - *trims*: the placement is not told of them, so the valid-page count the model uses does
//!   not drop (the simulator's does); and a served drive restarts it in its start-up mode.
//!
//! Each group writes through one region (regions are a pool: `ftl.regions`, default 16; the
//! hot group is the Top region). Exact with one plane (one open block per region).

mod model;
#[cfg(test)]
mod tests;

use std::collections::VecDeque;
use std::sync::Arc;

use model::{Config, Gcs, Search, Uid, MAX_CONFIG_GROUPS};
use super::{PageState, Placement, PlacementEntry, PlacementSpec};
use crate::error::ConfigError;
use crate::flash::{BlockId, Geometry, Lpn};
use crate::ftl::block_table::{BlockState, BlockTable};
use crate::ftl::FtlConfig;
use crate::spec::{check, Params};

/// MiDAS declares no parameter of its own: `ftl.regions` (default 16) is the pool of regions
/// its groups write through.
pub(super) const ENTRY: PlacementEntry = PlacementEntry { name: "midas", params: &[], resolve };

fn resolve(f: &mut FtlConfig, _: &mut Params<'_>) -> Result<Arc<dyn PlacementSpec>, ConfigError> {
    let regions = *f.regions.get_or_insert(16);
    check(
        (NAIVE_GROUPS as u32 + 1..=64).contains(&regions),
        "ftl.regions",
        "placement \"midas\" needs 6 to 64 regions (a pool its groups write through)",
    )?;
    Ok(Arc::new(MidasSpec { regions }))
}

#[derive(Clone, Copy, Debug)]
struct MidasSpec {
    regions: u32,
}

impl PlacementSpec for MidasSpec {
    fn name(&self) -> &'static str {
        ENTRY.name
    }
    fn regions(&self) -> u32 {
        self.regions
    }
    /// The hot filter's counter and the write clock of each page.
    fn bytes_per_logical_page(&self) -> u64 {
        5
    }
    fn build(&self, g: &Geometry, _: u32, _: Option<Vec<u32>>) -> Result<Box<dyn Placement>, ConfigError> {
        Ok(Box::new(Midas::new(self.regions, g.pages_per_block, g.blocks, g.logical_pages, true)))
    }
}

/// The hot group and the four migration groups of the start-up configuration.
const NAIVE_GROUPS: usize = 5;
/// Blocks the model assumes kept free (the simulator's cleaning trigger).
const RESERVE: u32 = 4;
/// The hot filter's counter ceiling and hot mark.
const HOT: u8 = 3;
const NO_GROUP: u8 = u8::MAX;
/// `Midas::loc` of a page in an open block: this plus the region.
const OPEN: u32 = u32::MAX - 64;
/// Cleanings in a row (for one host write) after which the simulator merges groups.
const LONG_CLEANING: u32 = 25;
/// Groups at most: a configuration's ten plus a greedy tail of four after merges.
const GROUPS_MAX: usize = MAX_CONFIG_GROUPS + NAIVE_GROUPS;
/// Measurements of the hot group kept for the model.
const G0_HISTORY: usize = 10;

/// The hot filter (MiDAS §4.4).
struct HotFilter {
    counter: Vec<u8>,
    /// Overwrites and group-0/1 cleaner copies to pass before it starts judging.
    cold_left: u64,
    /// Its window (host writes) and what is left of it.
    window: f64,
    left: i64,
    g0_age_sum: f64,
    g0_victims: f64,
    g0_valid_sum: f64,
    g0_traffic: f64,
    traffic: f64,
}

/// The hot group's measurements, one per hot filter window.
#[derive(Default)]
struct G0History {
    traffic: VecDeque<f64>,
    valid: VecDeque<f64>,
    size: VecDeque<f64>,
}

pub struct Midas {
    regions: usize,
    ppb: u32,
    blocks: u32,
    logical: u64,
    physical: u64,
    /// Groups now (the hot group 0 included); start-up mode: victims greedy over all blocks.
    groups: usize,
    naive: bool,
    /// The first group of the greedy tail (the simulator's `naive_start`): groups before it
    /// have budgets; from it on, victims are greedy over the tail.
    tail: usize,
    /// Size budget (closed blocks) of every group but the last.
    budget: [u32; GROUPS_MAX],
    /// Per region: its group (`NO_GROUP`: unused), closed blocks, pages written modulo a block.
    group_of: Vec<u8>,
    closed: Vec<u32>,
    fill: Vec<u32>,
    /// The region each group writes to.
    primary: [u8; GROUPS_MAX],
    /// (region, group): a region of the group, not the one it writes to, whose partly
    /// written block the group's copies fill first.
    drain: Vec<(u8, u8)>,
    /// The error check (the simulator's "unknown area"): the groups collected since the last
    /// configuration (bit per group), whether all were (then victims' valid ratios are
    /// summed per group), host writes since the last check, and the model's valid ratios.
    collected: u64,
    /// The group the simulator's merge after a long cleaning counts from (its `commit_g`):
    /// `None` once every group has given a victim.
    commit: Option<usize>,
    checking: bool,
    /// Cleanings since the last host write, and the group the last one copied into.
    streak: u32,
    last_target: usize,
    check_writes: u64,
    err_valid: [f64; GROUPS_MAX],
    err_victims: [f64; GROUPS_MAX],
    predicted: [f64; GROUPS_MAX],
    /// Host page writes so far; distinct pages written.
    clock: u64,
    valid_pages: u64,
    /// Per page: its block, or `OPEN + region` while that region's open block holds it (the
    /// placement learns a block's id when it closes). Per region: the pages put in its open
    /// block. Per block: the clock when it was closed.
    loc: Vec<u32>,
    open_pages: Vec<Vec<u32>>,
    sealed: Vec<u64>,
    /// WA of the last physical capacity of host writes (the simulator's progress window).
    win_writes: u64,
    win_copies: u64,
    recent_waf: f64,
    hf: HotFilter,
    hf_on: bool,
    g0: G0History,
    uid: Uid,
    model_due: bool,
    pending: Option<Config>,
    /// Every configuration applied (for reports and tests).
    pub applied: Vec<Config>,
}

impl Midas {
    /// `adapt`: run the model (false keeps the start-up groups, for tests).
    #[must_use]
    pub fn new(regions: u32, ppb: u32, blocks: u32, logical: u64, adapt: bool) -> Self {
        let regions = regions as usize;
        assert!(regions > NAIVE_GROUPS && regions <= 64);
        let physical = u64::from(ppb) * u64::from(blocks);
        let unit = u64::from(ppb / 4).max(1);
        let mut m = Self {
            regions,
            ppb,
            blocks,
            logical,
            physical,
            groups: NAIVE_GROUPS,
            naive: true,
            tail: 1,
            budget: [0; GROUPS_MAX],
            group_of: vec![NO_GROUP; regions],
            closed: vec![0; regions],
            fill: vec![0; regions],
            primary: [0; GROUPS_MAX],
            drain: Vec::new(),
            collected: 0,
            commit: None,
            checking: false,
            streak: 0,
            last_target: 0,
            check_writes: 0,
            err_valid: [0.0; GROUPS_MAX],
            err_victims: [0.0; GROUPS_MAX],
            predicted: [0.0; GROUPS_MAX],
            clock: 0,
            valid_pages: 0,
            loc: vec![OPEN; logical as usize],
            open_pages: vec![Vec::with_capacity(ppb as usize); regions],
            sealed: vec![0; blocks as usize],
            win_writes: 1,
            win_copies: 0,
            recent_waf: 0.0,
            hf: HotFilter {
                counter: vec![0; logical as usize],
                cold_left: logical,
                window: logical as f64,
                left: logical as i64,
                g0_age_sum: 0.0,
                g0_victims: 0.0,
                g0_valid_sum: 0.0,
                g0_traffic: 0.0,
                traffic: 0.0,
            },
            hf_on: false,
            g0: G0History::default(),
            uid: Uid::new(logical, unit, 4 * physical / unit, 2 * logical),
            model_due: false,
            pending: None,
            applied: Vec::new(),
        };
        m.uid.on = adapt;
        for g in 0..NAIVE_GROUPS {
            let r = (regions - 1 - g) as u8;
            m.group_of[r as usize] = g as u8;
            m.primary[g] = r;
        }
        m
    }

    /// Groups now (hot group included) and whether still in the start-up mode.
    #[cfg(test)]
    #[must_use]
    pub fn groups(&self) -> (usize, bool) {
        (self.groups, self.naive)
    }

    /// Applies configuration `c` as if the recent WA were above its prediction (tests).
    #[cfg(test)]
    pub fn apply(&mut self, c: Config) {
        self.recent_waf = f64::MAX;
        self.consider(c);
    }

    /// Whether the model's window closed and awaits the next cleaning, and its length in units.
    #[cfg(test)]
    #[must_use]
    pub fn model_state(&self) -> (bool, u64) {
        (self.model_due, self.uid.window)
    }

    /// The group of `region`.
    #[cfg(test)]
    #[must_use]
    pub fn group_of(&self, region: u8) -> u8 {
        self.group_of[region as usize]
    }

    /// The region group `g` writes to now.
    #[cfg(test)]
    #[must_use]
    pub fn region_of(&self, g: usize) -> u8 {
        self.primary[g]
    }

    fn last(&self) -> usize {
        self.groups - 1
    }

    /// Records page `lpn` written to group `g` and returns the region it goes to.
    fn put(&mut self, lpn: usize, g: usize) -> u8 {
        let d = self.drain.iter().position(|&(_, dg)| dg as usize == g);
        let r = d.map_or(self.primary[g], |i| self.drain[i].0);
        self.loc[lpn] = OPEN + u32::from(r);
        let open = &mut self.open_pages[r as usize];
        if open.len() < self.ppb as usize {
            open.push(lpn as u32);
        }
        let f = &mut self.fill[r as usize];
        *f = (*f + 1) % self.ppb;
        if *f == 0 {
            if let Some(i) = d {
                self.drain.remove(i);
            }
        }
        r
    }

    fn group_closed(&self, g: usize) -> u32 {
        (0..self.regions).filter(|&r| self.group_of[r] as usize == g).map(|r| self.closed[r]).sum()
    }

    /// The hot filter on an overwrite (`old`: the group the page leaves).
    fn hf_overwrite(&mut self, lpn: usize, old: u8) {
        if !self.hf_step() {
            return;
        }
        self.hf.left -= 1;
        let c = &mut self.hf.counter[lpn];
        if old == 0 {
            *c = (*c + 1).min(HOT);
        } else if old == 1 {
            // The age of the block the page leaves (0 while it is still open).
            let l = self.loc[lpn];
            let age = if l >= OPEN { 0 } else { self.clock - self.sealed[l as usize] };
            if age as f64 <= self.hf.window {
                *c = (*c + 1).min(HOT);
            } else {
                *c = c.saturating_sub(1);
            }
        }
    }

    /// The hot filter on a cleaner copy out of group 0 or 1.
    fn hf_copied(&mut self, lpn: usize, from: u8) {
        if !self.hf_step() {
            return;
        }
        let c = &mut self.hf.counter[lpn];
        if *c > 0 {
            *c -= 1;
            if from == 0 {
                *c = c.saturating_sub(1);
            }
        }
    }

    /// Common start of every hot filter update: false while it is still cold; ends a window.
    fn hf_step(&mut self) -> bool {
        if !self.hf_on {
            return false;
        }
        if self.hf.cold_left > 0 {
            self.hf.cold_left -= 1;
            return false;
        }
        if self.hf.left <= 0 && self.hf.g0_victims > 0.0 {
            self.hf_new_window();
        }
        true
    }

    /// The hot filter's window ended: its hot group measurements go to the model and its next
    /// window is the hot group's mean block age (smoothed).
    fn hf_new_window(&mut self) {
        let h = &mut self.hf;
        if h.g0_traffic != 0.0 && self.uid.on {
            let tr = h.g0_traffic / h.traffic;
            for q in [&mut self.g0.traffic, &mut self.g0.valid, &mut self.g0.size] {
                if q.len() >= G0_HISTORY {
                    q.pop_back();
                }
            }
            self.g0.traffic.push_front(tr);
            self.g0.valid.push_front(h.g0_valid_sum / h.g0_victims);
            let size: u32 =
                (0..self.regions).filter(|&r| self.group_of[r] == 0).map(|r| self.closed[r]).sum();
            self.g0.size.push_front(f64::from(size));
        }
        let prev = h.window;
        let mut age = h.g0_age_sum / h.g0_victims;
        if prev != 0.0 {
            age = if age >= prev * 2.0 { prev * 1.5 } else { (age + prev) / 2.0 };
        }
        h.window = age.trunc();
        h.left = h.window as i64 - 1;
        h.g0_age_sum = 0.0;
        h.g0_victims = 0.0;
        h.g0_traffic = 0.0;
        h.traffic = 0.0;
        h.g0_valid_sum = 0.0;
    }

    fn run_model(&mut self, table: &BlockTable) {
        self.model_due = false;
        let ppb = f64::from(self.ppb);
        // Pages of blocks with no invalid page outside the configured groups, less 5 % of the
        // last groups (the simulator's estimate of data never overwritten).
        let first_naive = self.tail;
        let mut no_access = 0.0;
        for b in 0..self.blocks as usize {
            let outside = match table.state[b] {
                BlockState::Free => true,
                BlockState::Retired => false,
                _ => self.group_of[table.region[b] as usize] as usize >= first_naive,
            };
            if outside && table.valid[b] == table.write_pointer[b] {
                no_access += ppb;
            }
        }
        no_access -= ppb * f64::from(self.group_closed(self.last())) * 0.05;
        if self.naive {
            for g in self.tail..self.tail + NAIVE_GROUPS - 1 {
                no_access -= ppb * f64::from(self.group_closed(g)) * 0.05;
            }
        }
        let mean = |q: &VecDeque<f64>| q.iter().sum::<f64>() / q.len() as f64;
        let g0_traffic = if self.g0.traffic.is_empty() { 0.01 } else { mean(&self.g0.traffic) };
        let g0_valid = if self.g0.valid.is_empty() { 0.05 } else { mean(&self.g0.valid) };
        let g0_size = if self.g0.size.is_empty() { 1.0 } else { (mean(&self.g0.size) + 1.0 + 0.5).floor() };
        self.g0 = G0History::default();
        let too_valid = if g0_size > 1.0 { g0_valid > 0.18 } else { g0_valid > 0.3 };
        if too_valid || self.group_closed(self.last()) < 1 {
            // The hot group is not hot enough to model yet: try again with a window twice as long.
            self.uid.restart(self.uid.window * 2);
            return;
        }
        let total = self.uid.finish();
        let counts = std::mem::take(&mut self.uid.counts);
        let config = {
            let mut gcs = Gcs::new(
                &counts,
                total,
                self.uid.unit,
                self.ppb,
                self.blocks,
                RESERVE,
                self.valid_pages as f64,
                no_access,
                (g0_traffic, g0_valid, g0_size),
            );
            gcs.search()
        };
        self.uid.counts = counts;
        match config {
            Ok(c) => self.pending = Some(c),
            Err(Search::Restart) => {
                let w = self.uid.window;
                self.uid.restart(w);
            }
            // After a search that found no configuration the simulator stops modelling.
            Err(Search::Stop) => self.uid.on = false,
        }
    }

    /// Applies a configuration (the simulator's `checking_ginfo`): only if its predicted WA is
    /// not above the recent WA; the model restarts either way.
    fn consider(&mut self, c: Config) {
        let window = self.uid.window;
        self.uid.restart(window);
        self.err_valid = [0.0; GROUPS_MAX];
        self.err_victims = [0.0; GROUPS_MAX];
        self.checking = false;
        self.check_writes = 0;
        if self.recent_waf < c.waf || !self.relabel(c.groups) {
            return;
        }
        self.collected = 0;
        self.commit = Some(0);
        self.predicted = [0.0; GROUPS_MAX];
        self.predicted[..MAX_CONFIG_GROUPS].copy_from_slice(&c.valid_ratio);
        for g in 0..c.groups - 1 {
            self.budget[g] = c.sizes[g].saturating_sub(1 + u32::from(g == 1));
        }
        self.applied.push(c);
    }

    /// Makes `groups` groups: every non-hot region joins the new last group, which keeps
    /// writing where group 1 wrote; the middle groups get unused regions. False (nothing
    /// changed) when too few regions are unused.
    pub fn relabel(&mut self, groups: usize) -> bool {
        assert!((3..=MAX_CONFIG_GROUPS).contains(&groups));
        let last = groups - 1;
        let keep = self.primary[self.tail];
        let joins = |g: u8| g != NO_GROUP && g != 0;
        let free = (0..self.regions)
            .filter(|&r| {
                let g = self.group_of[r];
                (g == NO_GROUP || (joins(g) && r as u8 != keep)) && self.closed[r] == 0 && self.fill[r] == 0
            })
            .count();
        if free < last - 1 {
            return false;
        }
        for r in 0..self.regions {
            if joins(self.group_of[r]) {
                self.group_of[r] = last as u8;
                if r as u8 != keep && self.closed[r] == 0 && self.fill[r] == 0 {
                    self.group_of[r] = NO_GROUP;
                }
            }
        }
        self.primary[last] = keep;
        self.drain = (0..self.regions as u8)
            .filter(|&r| self.group_of[r as usize] as usize == last && r != keep && self.fill[r as usize] > 0)
            .map(|r| (r, last as u8))
            .collect();
        let mut g = 1;
        for r in (0..self.regions).rev() {
            if g == last {
                break;
            }
            if self.group_of[r] == NO_GROUP {
                self.group_of[r] = g as u8;
                self.primary[g] = r as u8;
                g += 1;
            }
        }
        self.groups = groups;
        self.tail = last;
        self.naive = false;
        true
    }

    /// The error check, every 0.3 of a model window of host writes once every group has
    /// given a victim under the configuration: the first group whose victims were more than
    /// 0.1 more valid than the model said is an "unknown area": it and every group after it
    /// are merged into one greedy tail of four migrating groups.
    fn check_errors(&mut self) {
        let end = if self.naive { self.tail } else { self.groups };
        let unknown = (1..end).find(|&g| {
            let real = self.err_valid[g] / self.err_victims[g];
            self.predicted[g] - real <= -0.1
        });
        if let Some(g) = unknown {
            if !self.naive {
                self.greedy_tail();
            }
            for _ in 0..self.tail.saturating_sub(g) {
                self.merge_tail();
            }
        }
        self.err_valid = [0.0; GROUPS_MAX];
        self.err_victims = [0.0; GROUPS_MAX];
    }

    /// Turns the last group into a greedy tail of four migrating groups (three more groups,
    /// in unused regions). Nothing changes when too few regions are unused.
    fn greedy_tail(&mut self) {
        let fresh: Vec<usize> = (0..self.regions)
            .rev()
            .filter(|&r| self.group_of[r] == NO_GROUP && self.closed[r] == 0 && self.fill[r] == 0)
            .take(NAIVE_GROUPS - 2)
            .collect();
        if fresh.len() < NAIVE_GROUPS - 2 || self.tail + NAIVE_GROUPS - 1 > GROUPS_MAX {
            return;
        }
        for (i, &r) in fresh.iter().enumerate() {
            let g = self.tail + 1 + i;
            self.group_of[r] = g as u8;
            self.primary[g] = r as u8;
        }
        self.groups = self.tail + NAIVE_GROUPS - 1;
        self.naive = true;
    }

    /// Merges the group before the tail into the tail (the simulator's `merge_group`): every
    /// group from the tail on moves one down; the tail keeps writing where it wrote, the merged
    /// group's partly written block is filled by the tail's copies. At the hot group the
    /// start-up mode is back (victims greedy over all blocks).
    fn merge_tail(&mut self) {
        let t = self.tail;
        if t < 2 {
            return;
        }
        let merged = self.primary[t - 1];
        for r in 0..self.regions {
            let g = self.group_of[r];
            if g != NO_GROUP && g as usize >= t {
                self.group_of[r] = g - 1;
            }
        }
        for d in &mut self.drain {
            if d.1 as usize >= t {
                d.1 -= 1;
            }
        }
        for g in t - 1..self.groups - 1 {
            self.primary[g] = self.primary[g + 1];
        }
        if self.fill[merged as usize] > 0 {
            self.drain.push((merged, (t - 1) as u8));
        }
        self.groups -= 1;
        self.tail -= 1;
        if self.tail == 1 {
            self.checking = false;
            self.check_writes = 0;
        }
    }

    /// A cleaning ended within `LONG_CLEANING` victims (the simulator's
    /// `checking_config_apply`): once every group has given a victim under the configuration,
    /// the error check starts.
    fn cleaning_done(&mut self) {
        if self.commit.is_none() || self.streak > LONG_CLEANING {
            return;
        }
        if self.collected != 0 {
            self.commit = Some(self.tail - 1);
        }
        if self.collected == (1u64 << (self.tail + 1)) - 1 {
            self.commit = None;
            self.checking = true;
        }
    }

    /// `LONG_CLEANING` victims in a row (the simulator's `infinite_gc_handling`): the groups
    /// from the one counted from (`commit`, else the last copy's destination) on are merged
    /// into the tail, which becomes a greedy tail of four.
    fn long_cleaning(&mut self) {
        if self.tail == 1 {
            return;
        }
        let from = self.commit.unwrap_or(self.last_target).min(self.tail);
        for _ in 0..self.tail + 1 - from {
            if self.tail == 1 {
                break;
            }
            self.merge_tail();
        }
        if self.commit.is_some_and(|c| c >= self.tail) {
            self.commit = None;
            self.checking = true;
        }
        if !self.naive {
            self.greedy_tail();
        }
    }

    /// The group the cleaner takes its next victim from, and whether FIFO (else greedy).
    fn victim_group(&self) -> (usize, bool) {
        if self.tail == 1 {
            return (usize::MAX, false);
        }
        for g in 0..self.tail {
            if self.budget[g] < self.group_closed(g) {
                return (g, true);
            }
        }
        (self.tail, false)
    }

    /// Whether block `b` is a victim candidate of group `g`: FIFO takes `g` itself, greedy
    /// the whole tail from `g` on (`usize::MAX`: every group).
    fn in_group(&self, table: &BlockTable, b: BlockId, g: usize, fifo: bool) -> bool {
        let bg = self.group_of[table.region[b.index()] as usize] as usize;
        g == usize::MAX || bg == g || (!fifo && bg > g && bg < self.groups)
    }
}

impl Placement for Midas {
    fn name(&self) -> &'static str {
        ENTRY.name
    }

    fn regions(&self) -> u32 {
        self.regions as u32
    }

    fn host_write(&mut self, lpn: Lpn, current: Option<PageState>, _now_ns: u64) -> u8 {
        let i = lpn.index();
        if self.streak > 0 {
            self.cleaning_done();
            self.streak = 0;
        }
        if self.clock == self.logical {
            // The load is written: the hot filter starts (the simulator's sequential fill).
            self.hf_on = true;
        }
        match current {
            Some(p) => self.hf_overwrite(i, self.group_of[p.region as usize]),
            None => self.valid_pages += 1,
        }
        let g = if self.hf_on {
            self.hf.traffic += 1.0;
            if self.hf.counter[i] >= HOT {
                self.hf.g0_traffic += 1.0;
                0
            } else {
                1
            }
        } else {
            1
        };
        self.clock += 1;
        if self.uid.host_write(lpn.get() as u64) {
            self.model_due = true;
        }
        if let Some(c) = self.pending.take() {
            self.consider(c);
        }
        if self.checking {
            self.check_writes += 1;
            if self.check_writes as f64 > (self.uid.window * self.uid.unit) as f64 * 0.3 {
                self.check_errors();
                self.check_writes = 0;
            }
        }
        // The progress window: WA of the last physical capacity of host writes.
        self.win_writes += 1;
        if self.clock % self.physical == 2 {
            self.recent_waf = (self.win_writes + self.win_copies) as f64 / self.win_writes as f64;
            self.win_writes = 1;
            self.win_copies = 0;
        }
        self.put(i, g)
    }

    fn cleaner_copy(&mut self, lpn: Lpn, current: PageState, _now_ns: u64) -> u8 {
        let from = self.group_of[current.region as usize];
        if from <= 1 {
            self.hf_copied(lpn.index(), from);
        }
        self.win_copies += 1;
        let from = (from as usize).min(self.last());
        let to = if from < self.last() { from + 1 } else { from };
        self.put(lpn.index(), to)
    }

    fn selects_victims(&self) -> bool {
        true
    }

    fn select_victim(&mut self, table: &BlockTable) -> Option<BlockId> {
        if self.model_due {
            self.run_model(table);
        }
        self.streak += 1;
        if self.streak > LONG_CLEANING {
            self.long_cleaning();
            self.streak = 1;
        }
        let (g, fifo) = self.victim_group();
        let mut pick = BlockId::NONE;
        if fifo {
            let mut b = table.fifo_head();
            while b != BlockId::NONE && !self.in_group(table, b, g, true) {
                b = table.fifo_next(b);
            }
            pick = b;
        } else {
            'buckets: for v in 0..=self.ppb {
                let mut b = table.bucket_head(v);
                while b != BlockId::NONE {
                    if self.in_group(table, b, g, false) {
                        pick = b;
                        break 'buckets;
                    }
                    b = table.bucket_next(b);
                }
            }
        }
        if pick == BlockId::NONE {
            return None;
        }
        let r = table.region[pick.index()] as usize;
        self.closed[r] = self.closed[r].saturating_sub(1);
        let bg = (self.group_of[r] as usize).min(self.groups - 1);
        if self.checking {
            self.err_valid[bg] += f64::from(table.valid[pick.index()]) / f64::from(self.ppb);
            self.err_victims[bg] += 1.0;
        }
        if self.commit.is_some() {
            self.collected |= 1 << g.min(63);
        }
        self.last_target = if bg + 1 < self.groups { bg + 1 } else { bg };
        if self.group_of[r] == 0 && self.hf_on {
            self.hf.g0_age_sum += (self.clock - self.sealed[pick.index()]) as f64;
            self.hf.g0_victims += 1.0;
            self.hf.g0_valid_sum += f64::from(table.valid[pick.index()]) / f64::from(self.ppb);
        }
        Some(pick)
    }

    fn block_closed(&mut self, block: BlockId, region: u8) {
        self.closed[region as usize] += 1;
        self.sealed[block.index()] = self.clock;
        let here = OPEN + u32::from(region);
        for &lpn in &self.open_pages[region as usize] {
            if self.loc[lpn as usize] == here {
                self.loc[lpn as usize] = block.get();
            }
        }
        self.open_pages[region as usize].clear();
    }
}
