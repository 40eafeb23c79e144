//! MiDAS's model (Oh et al., FAST'24, §4): the update interval distribution (UID) sampled from
//! host writes, and the group configuration search (GCS) that sizes the groups from it with the
//! paper's analytic valid-ratio model and its Markov chain of page migrations (MCAM).
//!
//! Written from the paper and from reading the authors' trace simulator's behaviour; the
//! arithmetic follows that simulator where the paper leaves it open (the interval-count
//! rescaling, the first-interval estimate, the search order and its early stops), because the
//! acceptance test is agreement with it.

/// Groups a configuration may have, the hot group included (the simulator's arrays hold 10).
pub const MAX_CONFIG_GROUPS: usize = 10;

/// One group configuration: the number of groups (hot group 0 included) and each group's size
/// in blocks, with the model's valid ratio at cleaning for each and its predicted WA.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    pub groups: usize,
    pub sizes: [u32; MAX_CONFIG_GROUPS],
    pub valid_ratio: [f64; MAX_CONFIG_GROUPS],
    pub waf: f64,
    /// The hot group's traffic share the model used.
    pub hot_traffic: f64,
}

/// Why a search gave no configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Search {
    Restart,
    Stop,
}

/// The UID: per interval unit (a quarter of a block of host writes), how many sampled
/// overwrites came that many units after the previous write of the same page.
pub struct Uid {
    /// Host writes per interval unit.
    pub unit: u64,
    /// Units in the time window.
    pub window: u64,
    /// Host writes to pass before the window may start (the load).
    load_left: u64,
    /// The window's clock: whole units and writes into the current one.
    pub current: u64,
    request: u64,
    /// Per sampled page: (time of its last write << 1) | (written only once in this window);
    /// `u64::MAX`: not written in this window.
    stamps: Vec<u64>,
    pub counts: Vec<u64>,
    /// The units whose first-unit overwrites are counted without sampling.
    first_at: [u64; FIRST_CHECKS],
    pub first_count: u64,
    first_seen: Vec<u32>,
    pub on: bool,
}

/// Sampling: one page in this many (by page number).
pub const SAMPLING: u64 = 100;
const FIRST_CHECKS: usize = 10;

impl Uid {
    /// A UID over `logical_pages`, with `unit` writes per interval unit, a window of
    /// `window` units, starting after `load` host writes.
    #[must_use]
    pub fn new(logical_pages: u64, unit: u64, window: u64, load: u64) -> Self {
        let mut first_at = [0; FIRST_CHECKS];
        for (i, f) in first_at.iter_mut().enumerate() {
            *f = window / (FIRST_CHECKS as u64 + 1) * (i as u64 + 1);
        }
        Self {
            unit,
            window,
            load_left: load,
            current: 0,
            request: 0,
            stamps: vec![u64::MAX; logical_pages.div_ceil(SAMPLING) as usize],
            counts: vec![0; window as usize],
            first_at,
            first_count: 0,
            first_seen: Vec::with_capacity(unit as usize + 1),
            on: true,
        }
    }

    /// Starts a new window (the previous one's counts are dropped); `window` may change.
    pub fn restart(&mut self, window: u64) {
        self.stamps.fill(u64::MAX);
        if window != self.window {
            self.window = window;
            self.counts = vec![0; window as usize];
            // The first-unit checks keep the spacing of the first window (as the simulator).
        } else {
            self.counts.fill(0);
        }
        self.first_count = 0;
        self.current = 0;
        self.request = 0;
        self.on = true;
    }

    /// One host write of page `lpn`. Returns true when this write closed the window.
    pub fn host_write(&mut self, lpn: u64) -> bool {
        if !self.on || self.current == self.window {
            return false;
        }
        if self.load_left > 0 {
            self.load_left -= 1;
        } else if self.current < self.window {
            self.request += 1;
            if self.request == self.unit {
                self.current += 1;
                self.request = 0;
            }
        }
        if self.current == 0 && self.request == 0 {
            return false;
        }
        if self.first_at.contains(&self.current) {
            self.first_unit(lpn);
        }
        if self.current >= self.window {
            self.on = false;
            return true;
        }
        if lpn.is_multiple_of(SAMPLING) {
            self.count((lpn / SAMPLING) as usize);
        }
        false
    }

    fn first_unit(&mut self, lpn: u64) {
        if self.request == 0 {
            self.first_seen.clear();
        }
        let lpn = lpn as u32;
        if self.first_seen.contains(&lpn) {
            self.first_count += 1;
        } else {
            self.first_seen.push(lpn);
        }
    }

    fn count(&mut self, i: usize) {
        let now = self.current * self.unit + self.request;
        let s = self.stamps[i];
        if s != u64::MAX {
            let interval = ((now - (s >> 1)) / self.unit).min(self.window - 1);
            self.counts[interval as usize] += 1;
            self.stamps[i] = now << 1;
        } else {
            self.stamps[i] = (now << 1) | 1;
        }
    }

    /// Closes the window's counts: pages written once go to the last unit, the first unit is
    /// estimated from the unsampled checks, and every later unit is scaled up for the part of
    /// the window too short to see it. Returns the total count.
    pub fn finish(&mut self) -> u64 {
        let last = self.counts.len() - 1;
        self.counts[last] +=
            self.stamps.iter().filter(|&&s| s != u64::MAX && s & 1 == 1).count() as u64;
        self.counts[0] = self.first_count * self.window / FIRST_CHECKS as u64 / SAMPLING;
        let w = self.window;
        let mut total = self.counts[0];
        for i in 1..self.counts.len() {
            let iu = i as u64;
            let left = ((w % iu * 2 + iu) as f64 / 2.0) / iu as f64;
            let c = self.counts[i];
            self.counts[i] = c + ((left * c as f64) / (w as f64 / iu as f64)) as i64 as u64;
            total += self.counts[i];
        }
        total
    }
}

/// Desnoyer's hot/cold greedy write amplification for over-provisioning ratio `op`, hot
/// traffic share `r` and hot data share `f`, solved by the simulator's stepped search.
#[must_use]
pub fn desnoyer_waf(op: f64, r: f64, f: f64) -> f64 {
    if op <= 1.0 {
        return 0.0;
    }
    let g = |w: f64| {
        1.0 + r / ((r * op / (f * w)).exp() - 1.0)
            + (1.0 - r) / (((1.0 - r) * op / ((1.0 - f) * w)).exp() - 1.0)
            - w
    };
    let mut w = 1.0;
    for (step, back) in [(1.0, 2.0), (0.1, 0.2), (0.01, 0.02), (0.001, 0.001)] {
        loop {
            let t = g(w);
            w += step;
            if t.is_nan() || t <= 0.0 {
                break;
            }
        }
        w -= back;
    }
    w
}

/// The configuration search's inputs and the state its candidate evaluations share.
pub struct Gcs<'a> {
    pub uid: &'a [u64],
    pub total: u64,
    /// Host writes per unit, pages per block, blocks.
    pub unit: f64,
    pub ppb: f64,
    pub blocks: u32,
    /// Blocks the simulator keeps free (its GC trigger).
    pub reserve: u32,
    /// Valid logical pages.
    pub utilization: f64,
    /// Pages of never-overwritten data the model leaves out (0 below a fifth of the device).
    pub no_access: f64,
    /// The hot group's measured traffic share, valid ratio and size (from the hot filter).
    pub g0_traffic: f64,
    pub g0_valid: f64,
    pub g0_size: f64,
    real: bool,
    calc_traffic: f64,
    calc_size: f64,
    calc_unit: usize,
    // The last group's hot/cold split for Desnoyer's formula, summed over every candidate the
    // search evaluates (as the simulator does).
    hot_req: f64,
    tot_req: f64,
    hot_lba: f64,
    tot_lba: f64,
}

type Vr = [f64; MAX_CONFIG_GROUPS];

impl<'a> Gcs<'a> {
    #[must_use]
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        uid: &'a [u64],
        total: u64,
        unit: u64,
        ppb: u32,
        blocks: u32,
        reserve: u32,
        utilization: f64,
        no_access: f64,
        g0: (f64, f64, f64),
    ) -> Self {
        Self {
            uid,
            total,
            unit: unit as f64,
            ppb: f64::from(ppb),
            blocks,
            reserve,
            utilization,
            no_access,
            g0_traffic: g0.0,
            g0_valid: g0.1,
            g0_size: g0.2,
            real: false,
            calc_traffic: 0.0,
            calc_size: 0.0,
            calc_unit: 0,
            hot_req: 0.0,
            tot_req: 0.0,
            hot_lba: 0.0,
            tot_lba: 0.0,
        }
    }

    fn window_units(&self) -> u64 {
        self.uid.len() as u64
    }

    /// Interval unit `j` in blocks of writes.
    fn at(&self, j: usize) -> f64 {
        j as f64 * self.unit / self.ppb
    }

    /// The valid ratio at cleaning of each of `groups` groups of sizes `config` (the hot group
    /// not counted), or `None` for a configuration the model rejects. `extra` is the hot
    /// group's size in blocks. The last size may shrink for a hot group larger than asked.
    pub fn valid_ratios(
        &mut self,
        config: &mut [u32; MAX_CONFIG_GROUPS],
        groups: usize,
        extra: u32,
    ) -> Option<Vr> {
        let mut vr = [0.0; MAX_CONFIG_GROUPS];
        let mut invalid_list = [0u64; MAX_CONFIG_GROUPS];
        let mut tot = self.total;
        let mut past = 0.0;
        let mut global_valid = 0.0;
        let mut invalid: u64 = 0;
        if f64::from(config[0]) < self.unit / self.ppb {
            for v in vr.iter_mut().take(groups) {
                *v = 1.0;
            }
            return Some(vr);
        }
        if !self.real {
            if self.calc_unit == 0 {
                for i in 0..self.uid.len() {
                    invalid += self.uid[i];
                    let tr = invalid as f64 / tot as f64;
                    let cur = self.at(i + 1);
                    let size = (cur * tr + 0.5).floor();
                    if size >= f64::from(extra) {
                        past += cur;
                        self.calc_traffic = tr;
                        tot -= invalid;
                        if size > f64::from(extra) {
                            config[groups - 1] =
                                config[groups - 1].wrapping_sub((size - f64::from(extra)) as u32);
                        }
                        self.calc_size = size;
                        self.calc_unit = i + 1;
                        break;
                    }
                }
            } else {
                for i in 0..self.calc_unit {
                    invalid += self.uid[i];
                    let v = 1.0 - invalid as f64 / tot as f64;
                    global_valid += v * self.unit;
                }
                let tr = invalid as f64 / tot as f64;
                let cur = self.at(self.calc_unit);
                past += cur;
                self.calc_traffic = tr;
                tot -= invalid;
                self.calc_size = (cur * tr + 0.5).floor();
            }
        } else {
            let mig = 1.0 / self.g0_traffic;
            let refr = self.g0_traffic;
            let group_time = f64::from(extra) * mig - mig / 2.0;
            for i in 0..self.uid.len() {
                if self.at(i) < group_time {
                    invalid += self.uid[i];
                    let v = 1.0 - invalid as f64 / tot as f64;
                    global_valid += v * refr * self.unit;
                } else {
                    self.calc_unit = i;
                    break;
                }
            }
            past += group_time;
            self.calc_traffic = invalid as f64 / tot as f64;
            tot -= invalid;
        }

        let g1_traffic = if self.real {
            1.0 - self.g0_traffic + self.g0_traffic * self.g0_valid
        } else {
            1.0 - self.calc_traffic
        };
        let limit = (self.window_units() * self.unit as u64 / self.ppb as u64) as f64 - 50.0;
        let mut lg_req: u64 = 0;
        let mut lifespan_num: u64 = 0;
        for i in 0..groups {
            invalid = 0;
            let mut mig = 1.0 / g1_traffic;
            let mut refr = g1_traffic;
            for v in vr.iter().take(i) {
                mig *= 1.0 / v;
                refr *= v;
            }
            let group_time = f64::from(config[i]) * mig - mig / 2.0;
            if i != groups - 1 && f64::from(group_time as u32) + past >= limit {
                return None;
            }
            let before: u64 = invalid_list[..i].iter().sum();
            for j in 0..self.uid.len() {
                let cur = self.at(j);
                if cur >= past && cur < group_time + past {
                    invalid += self.uid[j];
                    if i < groups - 1 {
                        let v = 1.0 - invalid as f64 / (tot - before) as f64;
                        global_valid += v * refr * self.unit;
                    }
                }
                if i == groups - 1 && cur >= past {
                    lg_req = (lg_req as f64 + self.uid[j] as f64 * cur) as u64;
                    lifespan_num += self.uid[j];
                }
            }
            if i == groups - 1 {
                let mean_life = lg_req as f64 / lifespan_num as f64;
                let span = (self.window_units() * self.unit as u64 - 50) as f64;
                for j in 0..self.uid.len() {
                    let cur = self.at(j);
                    if cur >= past {
                        self.tot_req += self.uid[j] as f64;
                        let lbas = self.uid[j] as f64 / (span / cur);
                        self.tot_lba += lbas;
                        if cur <= mean_life * 0.7 {
                            self.hot_lba += lbas;
                            self.hot_req += self.uid[j] as f64;
                        }
                    }
                }
            }
            invalid_list[i] = invalid;
            let v = 1.0 - invalid as f64 / (tot - before) as f64;
            if i < groups - 1 {
                vr[i] = v;
                past += group_time;
            }
        }

        if self.no_access < 0.0 || self.no_access < f64::from(self.blocks) * self.ppb * 0.2 {
            self.no_access = 0.0;
        }
        let util = self.utilization - self.no_access;
        let last_size = f64::from(config[groups - 1]) * self.ppb - self.no_access;
        if util < global_valid {
            return None;
        }
        let last_valid = util - global_valid;
        let r = self.hot_req / self.tot_req;
        let f = self.hot_lba / self.tot_lba;
        let first = desnoyer_waf(last_size / last_valid, r, f);
        if 1.0 - 1.0 / first > 1.0 {
            return None;
        }
        // Greedy's correction for the block granularity.
        let k = 1.0 + 1.0 / (2.0 * self.ppb);
        let waf = desnoyer_waf(k * f64::from(config[groups - 1]) * self.ppb / last_valid, r, f) / k;
        vr[groups - 1] = 1.0 - 1.0 / waf;
        if vr[..groups].iter().any(|&v| v <= 0.0) {
            return None;
        }
        Some(vr)
    }

    /// The Markov chain of a page's life (written by the host, then hot or first group, then
    /// migrated group to group until overwritten): WA from the groups' valid ratios.
    #[must_use]
    pub fn chain_waf(&self, vr: &Vr, groups: usize) -> f64 {
        let n = groups + 2;
        let mut v = [0.0; MAX_CONFIG_GROUPS + 2];
        v[0] = 1.0;
        v[1] = if self.real { self.g0_valid } else { 0.0 };
        v[2..n].copy_from_slice(&vr[..groups]);
        let mut m = [[0.0; MAX_CONFIG_GROUPS + 2]; MAX_CONFIG_GROUPS + 2];
        for i in 0..n {
            m[i][0] = 1.0 - v[i];
            if i == 0 {
                m[0][1] = if self.real { self.g0_traffic } else { self.calc_traffic };
                m[0][2] = 1.0 - m[0][1];
            } else if i == n - 1 {
                m[i][i] = v[i];
            } else {
                m[i][i + 1] = v[i];
            }
        }
        let pages = f64::from(self.blocks) * self.ppb;
        let mut state = [0.0; MAX_CONFIG_GROUPS + 2];
        state[0] = pages * 0.1;
        state[1] = pages * 0.9;
        let mut copies = 0.0;
        let mut past = 0.0;
        for _ in 0..2000 {
            let mut next = [0.0; MAX_CONFIG_GROUPS + 2];
            for (j, nj) in next.iter_mut().enumerate().take(n) {
                for k in 0..n {
                    *nj += state[k] * m[k][j];
                }
            }
            state = next;
            copies = if groups == 1 {
                state[2] - state[0] * v[1]
            } else {
                state[3..groups + 2].iter().sum::<f64>() + state[1] * v[1]
            };
            past = f64::from(state[0] as u32);
        }
        (copies + past) / past
    }

    /// The search: the hot group's size, then groups added one at a time, each sized by a
    /// sweep, then four refinement rounds. `Err(Search::Restart)` when the measured hot group
    /// makes the one-group model fail (model again), `Err(Search::Stop)` when no configuration
    /// of more than one group beyond the hot group comes out (the simulator stops modelling).
    pub fn search(&mut self) -> Result<Config, Search> {
        let mut st = SearchState::new(self.blocks - self.reserve);
        self.size_hot_group(&mut st)?;
        self.add_groups(&mut st);
        for i in 0..MAX_CONFIG_GROUPS {
            if st.final_waf > st.opt_waf[i] {
                st.final_groups = i + 1;
                st.final_config = st.opt_config[i];
                st.final_vr = st.opt_vr[i];
                st.final_waf = st.opt_waf[i];
            }
        }
        self.calc_size = 0.0;
        for _ in 0..4 {
            if st.final_waf == 100.0 {
                break;
            }
            self.refine(&mut st);
        }
        // The hot group goes in front.
        let n = st.final_groups;
        if n == 0 || n + 1 > MAX_CONFIG_GROUPS {
            return Err(Search::Stop);
        }
        let groups = n + 1;
        let mut sizes = [0u32; MAX_CONFIG_GROUPS];
        let mut valid_ratio = [0.0; MAX_CONFIG_GROUPS];
        sizes[1..groups].copy_from_slice(&st.final_config[..n]);
        valid_ratio[1..groups].copy_from_slice(&st.final_vr[..n]);
        sizes[0] = st.best_size as u32;
        if groups > 2 {
            Ok(Config {
                groups,
                sizes,
                valid_ratio,
                waf: st.final_waf,
                hot_traffic: st.opt_traffic,
            })
        } else {
            Err(Search::Stop)
        }
    }

    /// One group beside the hot group: the hot group's size, from the hot filter's
    /// measurements or searched from the UID.
    fn size_hot_group(&mut self, st: &mut SearchState) -> Result<(), Search> {
        let mut gc = st.opt_config[0];
        if self.g0_valid > 0.1 || self.g0_traffic < 0.15 {
            self.real = true;
            st.g0_size = self.g0_size as u32;
            gc[0] -= st.g0_size;
            self.calc_unit = 0;
            let vr = self.valid_ratios(&mut gc, 1, st.g0_size).ok_or(Search::Restart)?;
            let waf = self.chain_waf(&vr, 1);
            if waf > 100.0 {
                return Err(Search::Restart);
            }
            st.opt_waf[0] = waf;
            st.opt_config[0][0] = gc[0];
            st.opt_vr[0][0] = vr[0];
            st.best_size = f64::from(st.g0_size);
            st.opt_traffic = self.g0_traffic;
            return Ok(());
        }
        self.real = false;
        let mut best_traffic = 0.0;
        for i in 1..30u32 {
            if f64::from(i) <= self.calc_size {
                continue;
            }
            gc[0] = st.all - i;
            self.calc_unit = 0;
            let Some(vr) = self.valid_ratios(&mut gc, 1, i) else { break };
            let waf = self.chain_waf(&vr, 1);
            if waf >= st.opt_waf[0] - 0.05 {
                break;
            }
            st.best_size = self.calc_size;
            best_traffic = self.calc_traffic;
            st.best_unit = self.calc_unit;
            st.opt_waf[0] = waf;
            st.opt_config[0][0] = gc[0];
            st.opt_vr[0][0] = vr[0];
        }
        self.calc_traffic = best_traffic;
        st.g0_size = st.best_size as u32;
        self.calc_unit = st.best_unit;
        st.opt_traffic = self.calc_traffic;
        Ok(())
    }

    /// Phase 1: one more group at a time, the new group's size swept while the last shrinks.
    fn add_groups(&mut self, st: &mut SearchState) {
        let mut tmp_max = st.opt_config[0][0].wrapping_sub(50);
        for i in 0..8 {
            let groups = i + 2;
            let mut gc = st.opt_config[i];
            gc[i + 1] = gc[i];
            gc[i] = 1;
            // (A wrapped bound would loop for ever; the simulator never meets one.)
            let max = tmp_max.min(st.all);
            for j in 1..max {
                gc[i] = j;
                gc[i + 1] = gc[i + 1].wrapping_sub(1);
                if let Some(vr) = self.valid_ratios(&mut gc, groups, st.g0_size) {
                    let waf = self.chain_waf(&vr, groups);
                    if st.opt_waf[i + 1] > waf {
                        st.opt_waf[i + 1] = waf;
                        st.opt_config[i + 1] = gc;
                        st.opt_vr[i + 1] = vr;
                        tmp_max = max - st.opt_config[i + 1][i];
                    }
                }
            }
        }
    }

    /// Phase 2, one round: the hot group's size again (UID-searched hot group only), then
    /// every group's size in turn against the last, adding groups while that helps.
    fn refine(&mut self, st: &mut SearchState) {
        if !self.real {
            let mut gc = st.final_config;
            let groups = st.final_groups;
            gc[groups - 1] = gc[groups - 1].wrapping_add(st.g0_size);
            let initial_last = gc[groups - 1];
            self.calc_size = 0.0;
            for i in 1..30u32 {
                if f64::from(i) <= self.calc_size {
                    continue;
                }
                gc[groups - 1] = initial_last.wrapping_sub(i);
                self.calc_unit = 0;
                let Some(vr) = self.valid_ratios(&mut gc, groups, i) else { break };
                let waf = self.chain_waf(&vr, groups);
                if waf < st.final_waf {
                    st.best_size = self.calc_size;
                    st.best_unit = self.calc_unit;
                    st.final_waf = waf;
                    st.final_config = gc;
                    st.final_vr = vr;
                    st.g0_size = i;
                    st.opt_traffic = self.calc_traffic;
                }
            }
        }
        let mut groups = st.final_groups;
        let mut gc = st.final_config;
        self.calc_unit = st.best_unit;
        for i in 0..8 {
            if i < groups - 1 {
                gc[groups - 1] = gc[groups - 1].wrapping_add(gc[i]);
            } else {
                gc[i + 1] = gc[i];
                groups += 1;
                if groups > MAX_CONFIG_GROUPS {
                    break;
                }
            }
            let max = gc[groups - 1].wrapping_sub(50).min(st.all);
            let mut added = false;
            gc[i] = 0;
            for j in 1..max {
                gc[i] = j;
                gc[groups - 1] = gc[groups - 1].wrapping_sub(1);
                let Some(vr) = self.valid_ratios(&mut gc, groups, st.g0_size) else { break };
                let waf = self.chain_waf(&vr, groups);
                if st.final_waf > waf {
                    st.final_groups = groups;
                    st.final_waf = waf;
                    st.final_config = gc;
                    st.final_vr = vr;
                    added = true;
                }
            }
            gc = st.final_config;
            if !added && i + 1 >= st.final_groups {
                break;
            }
        }
    }
}

/// The search's best configurations so far: per group number (phase 1), and overall.
struct SearchState {
    /// Blocks to share out (all but the reserve).
    all: u32,
    opt_config: [[u32; MAX_CONFIG_GROUPS]; MAX_CONFIG_GROUPS],
    opt_vr: [Vr; MAX_CONFIG_GROUPS],
    opt_waf: [f64; MAX_CONFIG_GROUPS],
    /// The hot group's size as the group sizing sees it, and as reported.
    g0_size: u32,
    best_size: f64,
    best_unit: usize,
    opt_traffic: f64,
    final_groups: usize,
    final_config: [u32; MAX_CONFIG_GROUPS],
    final_vr: Vr,
    final_waf: f64,
}

impl SearchState {
    fn new(all: u32) -> Self {
        let mut st = Self {
            all,
            opt_config: [[0; MAX_CONFIG_GROUPS]; MAX_CONFIG_GROUPS],
            opt_vr: [[0.0; MAX_CONFIG_GROUPS]; MAX_CONFIG_GROUPS],
            opt_waf: [10000.0; MAX_CONFIG_GROUPS],
            g0_size: 0,
            best_size: 0.0,
            best_unit: 0,
            opt_traffic: 0.0,
            final_groups: 0,
            final_config: [0; MAX_CONFIG_GROUPS],
            final_vr: [0.0; MAX_CONFIG_GROUPS],
            final_waf: 100.0,
        };
        st.opt_config[0][0] = all;
        st.opt_vr[0][0] = 1.0;
        st
    }
}
