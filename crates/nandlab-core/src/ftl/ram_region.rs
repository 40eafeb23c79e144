//! A RAM region of the page-mapped store: DEB's Extra Buffer Region (LFSS thesis §4.1,
//! docs/ALGORITHMS.md §3) or the "DAC with RAM as the hottest region" baseline. Battery-backed RAM,
//! so a page the placement sends here lives here instead of on flash: its updates are done in place
//! at RAM speed, with no program and no garbage. The region is written back when its used space
//! passes a threshold: the oldest pages (least recently updated) first, until it is below half the
//! threshold (DEB rule 5); all of it at shutdown and at the end of a run, counted apart so a user
//! sees how much of the saving was only deferred.
//!
//! The page FTL maps a RAM page to a pseudo physical page number past the flash
//! (`base_ppn + slot`), so its translation table stays one array. Slots form a doubly linked
//! list in update order (head = oldest); everything is preallocated at construction.

use crate::flash::{Lpn, Ppn};

const NIL: u32 = u32::MAX;

/// Why RAM pages were written back to flash.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RamWriteBack {
    /// Rule 5: the used space passed the threshold.
    Threshold,
    /// The device is shut down (NBD disconnect / server stop).
    Shutdown,
    /// The end of a simulation run.
    EndOfRun,
}

/// What the RAM region did (cumulative; the device reports the measurement window's share).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct RamRegionCounters {
    /// Host page writes that landed in RAM (new entries plus in-place updates).
    pub host_write_pages: u64,
    /// Of those, updates of a page already in RAM (done in place).
    pub in_place_updates: u64,
    /// Host page reads served from RAM.
    pub read_pages: u64,
    /// Pages written back to flash by the threshold (rule 5).
    pub write_back_pages: u64,
    /// Threshold write-back episodes.
    pub write_backs: u64,
    /// Pages written back at shutdown.
    pub shutdown_write_back_pages: u64,
    /// Pages written back at the end of a run.
    pub final_write_back_pages: u64,
    /// Erases the cleaner did to make room for the shutdown and end-of-run write-backs (so
    /// the erases of the run proper are `erases` minus these).
    pub shutdown_write_back_erases: u64,
    pub final_write_back_erases: u64,
    /// RAM time charged (each page access costs `timing.ram_page_ns`).
    pub ram_ns: u64,
}

impl std::ops::Sub for RamRegionCounters {
    type Output = Self;
    fn sub(self, o: Self) -> Self {
        Self {
            host_write_pages: self.host_write_pages - o.host_write_pages,
            in_place_updates: self.in_place_updates - o.in_place_updates,
            read_pages: self.read_pages - o.read_pages,
            write_back_pages: self.write_back_pages - o.write_back_pages,
            write_backs: self.write_backs - o.write_backs,
            shutdown_write_back_pages: self.shutdown_write_back_pages - o.shutdown_write_back_pages,
            final_write_back_pages: self.final_write_back_pages - o.final_write_back_pages,
            shutdown_write_back_erases: self.shutdown_write_back_erases
                - o.shutdown_write_back_erases,
            final_write_back_erases: self.final_write_back_erases - o.final_write_back_erases,
            ram_ns: self.ram_ns - o.ram_ns,
        }
    }
}

/// A RAM region's size and fill (for metrics).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct RamRegionInfo {
    pub capacity_pages: u32,
    pub threshold_pages: u32,
    pub used_pages: u32,
}

pub struct RamRegion {
    capacity_pages: u32,
    /// Rule 5 fires when an insertion would take the used pages above this.
    threshold_pages: u32,
    /// Pseudo PPN of slot 0 (the flash's page count).
    base_ppn: Ppn,
    page_size_bytes: usize,
    lpn: Vec<Lpn>,
    prev: Vec<u32>,
    next: Vec<u32>,
    /// Oldest and newest slot in update order.
    head: u32,
    tail: u32,
    free: Vec<u32>,
    /// Page payloads, allocated on the first write that carries data (served drives).
    data: Vec<u8>,
    /// Slots whose content was lost (a damaged NVRAM page found at start-up): reading them is
    /// an error until the page is written again. Empty unless some slot is poisoned.
    poisoned: Vec<bool>,
    pub counters: RamRegionCounters,
}

impl RamRegion {
    /// `threshold`: fraction of the capacity in (0, 1] (checked by the config).
    #[must_use]
    pub fn new(capacity_pages: u32, threshold: f64, base_ppn: Ppn, page_size_bytes: u64) -> Self {
        assert!(capacity_pages >= 1);
        assert!(threshold > 0.0 && threshold <= 1.0);
        assert!(u64::from(base_ppn) + u64::from(capacity_pages) < u64::from(Ppn::NONE));
        let c = capacity_pages as usize;
        let threshold_pages = ((f64::from(capacity_pages) * threshold).round() as u32).max(1);
        Self {
            capacity_pages,
            threshold_pages,
            base_ppn,
            page_size_bytes: page_size_bytes as usize,
            lpn: vec![Lpn::default(); c],
            prev: vec![NIL; c],
            next: vec![NIL; c],
            head: NIL,
            tail: NIL,
            // Popped from the back: slot 0 first.
            free: (0..capacity_pages).rev().collect(),
            data: Vec::new(),
            poisoned: Vec::new(),
            counters: RamRegionCounters::default(),
        }
    }

    #[must_use]
    pub fn capacity_pages(&self) -> u32 {
        self.capacity_pages
    }

    #[cfg(test)]
    #[must_use]
    pub fn threshold_pages(&self) -> u32 {
        self.threshold_pages
    }

    #[must_use]
    pub fn used_pages(&self) -> u32 {
        self.capacity_pages - self.free.len() as u32
    }

    #[must_use]
    pub fn info(&self) -> RamRegionInfo {
        RamRegionInfo {
            capacity_pages: self.capacity_pages,
            threshold_pages: self.threshold_pages,
            used_pages: self.used_pages(),
        }
    }

    /// Whether `ppn` names a RAM slot rather than a flash page.
    #[inline]
    #[must_use]
    pub fn holds(&self, ppn: Ppn) -> bool {
        ppn >= self.base_ppn && ppn.get() - self.base_ppn.get() < self.capacity_pages
    }

    #[inline]
    fn slot(&self, ppn: Ppn) -> u32 {
        debug_assert!(self.holds(ppn));
        ppn.get() - self.base_ppn.get()
    }

    /// The pseudo PPN of slot `slot`.
    #[inline]
    fn ppn(&self, slot: u32) -> Ppn {
        Ppn::new(self.base_ppn.get() + slot)
    }

    /// Whether inserting one more page must first write back (rule 5's trigger).
    #[must_use]
    pub fn over_threshold_after_insert(&self) -> bool {
        self.used_pages() + 1 > self.threshold_pages
    }

    /// How many of the oldest pages rule 5 writes back: down to below half the threshold.
    #[must_use]
    pub fn write_back_count(&self) -> u32 {
        let target = self.threshold_pages.div_ceil(2).saturating_sub(1);
        self.used_pages().saturating_sub(target)
    }

    /// The LPN in the oldest slot.
    #[must_use]
    pub fn oldest(&self) -> Option<(Lpn, Ppn)> {
        (self.head != NIL).then(|| (self.lpn[self.head as usize], self.ppn(self.head)))
    }

    fn unlink(&mut self, s: u32) {
        let (p, n) = (self.prev[s as usize], self.next[s as usize]);
        if p == NIL {
            self.head = n;
        } else {
            self.next[p as usize] = n;
        }
        if n == NIL {
            self.tail = p;
        } else {
            self.prev[n as usize] = p;
        }
    }

    fn push_newest(&mut self, s: u32) {
        self.prev[s as usize] = self.tail;
        self.next[s as usize] = NIL;
        if self.tail == NIL {
            self.head = s;
        } else {
            self.next[self.tail as usize] = s;
        }
        self.tail = s;
    }

    fn store(&mut self, s: u32, data: Option<&[u8]>) {
        if let Some(p) = self.poisoned.get_mut(s as usize) {
            *p = false;
        }
        if let Some(d) = data {
            let p = self.page_size_bytes;
            if self.data.is_empty() {
                self.data = vec![0; self.capacity_pages as usize * p];
            }
            let at = s as usize * p;
            self.data[at..at + p].copy_from_slice(d);
        }
    }

    /// A new page in RAM; returns its pseudo PPN. The caller made room.
    pub fn insert(&mut self, lpn: Lpn, data: Option<&[u8]>, ram_page_ns: u64) -> Ppn {
        let s = self.free.pop().expect("RAM region full: the caller writes back first");
        self.lpn[s as usize] = lpn;
        self.push_newest(s);
        self.store(s, data);
        self.counters.host_write_pages += 1;
        self.counters.ram_ns += ram_page_ns;
        self.ppn(s)
    }

    /// A page restored at start-up into slot `slot` (the NVRAM slot it was found in); it
    /// becomes the newest. `None` (nothing done) when the slot is past the region or in use.
    pub fn insert_at(&mut self, slot: u32, lpn: Lpn, data: Option<&[u8]>) -> Option<Ppn> {
        let i = self.free.iter().position(|&s| s == slot)?;
        self.free.remove(i);
        self.lpn[slot as usize] = lpn;
        self.push_newest(slot);
        self.store(slot, data);
        Some(self.ppn(slot))
    }

    /// An update of a page already in RAM: in place (rule 6); it becomes the newest.
    pub fn update(&mut self, ppn: Ppn, data: Option<&[u8]>, ram_page_ns: u64) {
        let s = self.slot(ppn);
        self.unlink(s);
        self.push_newest(s);
        self.store(s, data);
        self.counters.host_write_pages += 1;
        self.counters.in_place_updates += 1;
        self.counters.ram_ns += ram_page_ns;
    }

    /// Marks a slot's content as lost (see `poisoned`).
    pub fn poison(&mut self, ppn: Ppn) {
        let s = self.slot(ppn) as usize;
        if self.poisoned.is_empty() {
            self.poisoned = vec![false; self.capacity_pages as usize];
        }
        self.poisoned[s] = true;
    }

    /// Whether a slot's content was lost.
    #[must_use]
    pub fn is_poisoned(&self, ppn: Ppn) -> bool {
        self.poisoned.get(self.slot(ppn) as usize).copied().unwrap_or(false)
    }

    /// The slot index of a RAM pseudo page number (the NVRAM slot that persists it).
    #[must_use]
    pub fn slot_of(&self, ppn: Ppn) -> u32 {
        self.slot(ppn)
    }

    /// Serves a read from RAM.
    pub fn read(&mut self, ppn: Ppn, out: Option<&mut [u8]>, ram_page_ns: u64) {
        let s = self.slot(ppn) as usize;
        if let Some(o) = out {
            let p = self.page_size_bytes;
            if self.data.is_empty() {
                o.fill(0);
            } else {
                o.copy_from_slice(&self.data[s * p..(s + 1) * p]);
            }
        }
        self.counters.read_pages += 1;
        self.counters.ram_ns += ram_page_ns;
    }

    /// The payload of a slot (for a write-back), if payloads are kept.
    #[must_use]
    pub fn payload(&self, ppn: Ppn) -> Option<&[u8]> {
        let s = self.slot(ppn) as usize;
        let p = self.page_size_bytes;
        (!self.data.is_empty()).then(|| &self.data[s * p..(s + 1) * p])
    }

    /// Frees the slot of a page that left RAM (written back or trimmed).
    pub fn remove(&mut self, ppn: Ppn) {
        let s = self.slot(ppn);
        if let Some(p) = self.poisoned.get_mut(s as usize) {
            *p = false;
        }
        self.unlink(s);
        self.free.push(s);
    }

    /// LPN held by a slot.
    #[must_use]
    pub fn lpn_at(&self, ppn: Ppn) -> Lpn {
        self.lpn[self.slot(ppn) as usize]
    }

    /// Invariants: the list holds exactly the used slots, in a consistent chain.
    pub fn check(&self) {
        let mut seen = 0u32;
        let mut s = self.head;
        let mut prev = NIL;
        while s != NIL {
            assert_eq!(self.prev[s as usize], prev, "RAM region list is broken");
            prev = s;
            s = self.next[s as usize];
            seen += 1;
            assert!(seen <= self.capacity_pages, "RAM region list has a cycle");
        }
        assert_eq!(prev, self.tail);
        assert_eq!(seen, self.used_pages(), "RAM region list and free slots disagree");
    }

    /// Bytes of RAM the region's bookkeeping and payloads take.
    #[must_use]
    pub fn memory_bytes(&self) -> u64 {
        (self.lpn.len() * 12 + self.free.capacity() * 4 + self.data.len()) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(n: u32) -> Lpn {
        Lpn::new(n)
    }

    fn p(n: u32) -> Ppn {
        Ppn::new(n)
    }

    #[test]
    fn oldest_first_in_update_order_and_half_threshold_drain() {
        let mut r = RamRegion::new(4, 1.0, p(100), 16);
        let a = r.insert(l(7), None, 10);
        let b = r.insert(l(8), None, 10);
        let _c = r.insert(l(9), None, 10);
        assert_eq!((a, b), (p(100), p(101)));
        assert_eq!(r.oldest(), Some((l(7), p(100))));
        // Updating 7 in place makes 8 the oldest.
        r.update(a, None, 10);
        assert_eq!(r.oldest(), Some((l(8), p(101))));
        r.insert(l(10), None, 10);
        assert!(r.over_threshold_after_insert());
        // Threshold 4: drain until below 2 → 3 of the 4 pages go.
        assert_eq!(r.write_back_count(), 3);
        r.remove(b);
        assert_eq!(r.oldest(), Some((l(9), p(102))));
        r.check();
        assert_eq!(r.counters.host_write_pages, 5);
        assert_eq!(r.counters.in_place_updates, 1);
        assert_eq!(r.counters.ram_ns, 50);
    }

    #[test]
    fn payloads_round_trip() {
        let mut r = RamRegion::new(2, 0.5, p(0), 4);
        assert_eq!(r.threshold_pages(), 1);
        let page = r.insert(l(3), Some(&[1, 2, 3, 4]), 0);
        let mut out = [0u8; 4];
        r.read(page, Some(&mut out), 0);
        assert_eq!(out, [1, 2, 3, 4]);
        assert_eq!(r.payload(page), Some(&[1u8, 2, 3, 4][..]));
        assert!(r.holds(p(1)) && !r.holds(p(2)));
    }
}
