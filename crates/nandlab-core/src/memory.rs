//! How much RAM a resolved configuration will allocate, estimated before anything is allocated,
//! so that a front end can refuse a device that does not fit with the figure and the keys to
//! change — instead of aborting in the allocator (or being killed by the kernel) half way.
//!
//! The estimate adds the tables every part sizes from the geometry: the flash metadata the media
//! keeps per page and block, the FTL's translation and lookup tables, the RAM buffer and the RAM
//! region, the oracle's look-ahead, a workload kind's own tables (`Plan::table_bytes`), and, for a
//! served drive, the payload store's per-page CRCs, the mount's temporary tables and the payloads
//! RAM holds. Per-request and per-event memory is small and bounded and is covered by a fixed
//! allowance. The figures mirror the allocations in `flash/counting.rs`, `ftl/page.rs`,
//! `ftl/hybrid/mod.rs`, `buffer/`, `ftl/ram_region.rs`, `workload/kinds/` and `nandlab-store`
//! (tests compare them with measured peak RSS).

use crate::config::Resolved;

/// An estimate, by part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryEstimate {
    /// (what, bytes), largest first.
    pub parts: Vec<(&'static str, u64)>,
}

impl MemoryEstimate {
    #[must_use]
    pub fn total_bytes(&self) -> u64 {
        self.parts.iter().map(|p| p.1).sum()
    }

    /// Bytes that grow with the device's size (everything but the fixed allowance and the
    /// buffer and RAM region, whose sizes are their own keys).
    #[must_use]
    pub fn geometry_bytes(&self) -> u64 {
        self.parts.iter().filter(|p| GEOMETRY_PARTS.contains(&p.0)).map(|p| p.1).sum()
    }

    /// "1.2 GiB flash metadata, 0.9 GiB translation tables, ..." (parts of at least 1 MiB).
    #[must_use]
    pub fn describe(&self) -> String {
        let parts: Vec<String> = self
            .parts
            .iter()
            .filter(|p| p.1 >= 1 << 20)
            .map(|(what, bytes)| format!("{} {what}", human_bytes(*bytes)))
            .collect();
        parts.join(", ")
    }
}

const FLASH: &str = "flash metadata";
const FTL: &str = "FTL tables";
const SERVED: &str = "payload store and mount tables";
const ORACLE: &str = "oracle look-ahead";
const BUFFER: &str = "RAM buffer";
const RAM_REGION: &str = "RAM region";
const FIXED: &str = "program and scratch";
const WORKLOAD: &str = "workload tables";
const GEOMETRY_PARTS: [&str; 5] = [FLASH, FTL, SERVED, ORACLE, WORKLOAD];

/// The process itself, allocator slack, per-request state, histograms, scratch pages.
const FIXED_BYTES: u64 = 48 << 20;

/// The estimate for `r`; `served`: a served drive (payloads kept; the image's tables).
#[must_use]
pub fn estimate(r: &Resolved, served: bool) -> MemoryEstimate {
    let g = &r.geometry;
    let physical = g.physical_pages();
    let logical = g.logical_pages;
    let blocks = u64::from(g.blocks);
    let page = g.page_size_bytes;
    // CountingMedia: LPN (4) and, when something may be recovered from it (a served drive's
    // image), sequence number (8) per page; region, erase count, write pointer per block.
    let flash = physical * if served { 12 } else { 4 } + blocks * 9;
    let ftl = if let Some(placement) = r.placement() {
        // Per logical page: l2p (4) and what the placement keeps (DAC with a time threshold:
        // region entry time; DEB: last update time and a fast-update bit; the oracle: next
        // write time).
        let per_lpn = 4 + placement.bytes_per_logical_page();
        // Valid bitmap (1 bit per physical page), lookup table with victim indexes, free list,
        // wear leveler state (per block), modification times for a cleaner that reads them.
        let times = r.ftl.page().is_some_and(|p| p.cleaning.reads_time());
        logical * per_lpn + physical / 8 + blocks * if times { 60 } else { 52 }
    } else {
        // Newest log copy per LPN (4), valid bitmap, per-block counts, block map.
        logical * 4
            + physical / 8
            + blocks * 16
            + logical.div_ceil(u64::from(g.pages_per_block)) * 4
    };
    let mut parts = vec![(FLASH, flash), (FTL, ftl)];
    if served {
        // FileMedia: data CRC (4) and three bit maps per page, written-flags per block; the
        // mount's temporary OOB table (24 per page) and CRC copy; the metadata-only store's
        // stash of the disk's first pages.
        let stash = if r.config.serve.store == "metadata-only" { 4096 * page } else { 0 };
        parts.push((SERVED, physical * (4 + 24 + 4 + 1) + blocks * 16 + stash));
    }
    if r.needs_future() {
        // The run's host page writes (prefill, warm-up, measured) listed once (4) with their
        // next-write distances (4), and a last-seen table per logical page while computing.
        let w = &r.workload.config;
        let passes = 1.0 + w.warmup_passes.unwrap_or(0.0) + w.passes.unwrap_or(1.0);
        let writes = (passes * logical as f64 * w.repeat as f64) as u64;
        parts.push((ORACLE, writes.saturating_mul(8) + logical * 4));
    }
    // A workload kind's own tables (`zipf`'s permutation, `fio`'s random map).
    let workload = r.workload.plan.table_bytes(&r.workload);
    if workload > 0 {
        parts.push((WORKLOAD, workload));
    }
    let buffer_pages = u64::from(r.buffer_pages());
    if buffer_pages > 0 {
        // Slot links and LPNs (about 32 per slot), the dense page index (4 per logical page up
        // to 2^27 pages, a hash table beyond), payloads when served.
        let index = if logical <= 1 << 27 { logical * 4 } else { buffer_pages * 16 };
        let payload = if served { buffer_pages * page } else { 0 };
        parts.push((BUFFER, buffer_pages * 32 + index + payload));
    }
    let ram_pages = u64::from(r.ram_region_pages());
    if ram_pages > 0 {
        let payload = if served { ram_pages * page } else { 0 };
        parts.push((RAM_REGION, ram_pages * 24 + payload));
    }
    parts.push((FIXED, FIXED_BYTES + 8 * page));
    parts.sort_by_key(|p| std::cmp::Reverse(p.1));
    MemoryEstimate { parts }
}

/// "1.5 GiB", "640 MiB", "12 KiB".
#[must_use]
pub fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;

    fn resolve(o: &[&str]) -> Resolved {
        Config::from_overrides(o).unwrap().resolve().unwrap()
    }

    #[test]
    fn page_ftl_estimate_by_hand() {
        // 1024 blocks x 64 pages = 65,536 physical pages; utilization 0.5: 32,768 logical.
        let r =
            resolve(&["device.blocks=1024", "device.pages_per_block=64", "device.utilization=0.5"]);
        let e = estimate(&r, false);
        // A run's media keeps the LPN per page (no sequence numbers); greedy reads no
        // modification times.
        let flash = 65_536 * 4 + 1024 * 9;
        let ftl = 32_768 * 4 + 65_536 / 8 + 1024 * 52;
        assert_eq!(e.parts.iter().find(|p| p.0 == FLASH).unwrap().1, flash);
        assert_eq!(e.parts.iter().find(|p| p.0 == FTL).unwrap().1, ftl);
        assert_eq!(e.total_bytes(), flash + ftl + FIXED_BYTES + 8 * 4096);
        assert_eq!(e.geometry_bytes(), flash + ftl);
        // A served drive keeps sequence numbers and adds the payload store's tables.
        let served = estimate(&r, true);
        assert_eq!(served.parts.iter().find(|p| p.0 == FLASH).unwrap().1, 65_536 * 12 + 1024 * 9);
        assert!(served.total_bytes() > e.total_bytes() + 65_536 * 30);
        // A cleaner that reads block ages keeps 8 bytes more per block.
        let cat = resolve(&[
            "device.blocks=1024",
            "device.pages_per_block=64",
            "device.utilization=0.5",
            "ftl.cleaning=cat",
        ]);
        let cat_ftl = estimate(&cat, false).parts.iter().find(|p| p.0 == FTL).unwrap().1;
        assert_eq!(cat_ftl, ftl + 1024 * 8);
    }

    #[test]
    fn human_readable() {
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(3 << 29), "1.5 GiB");
    }
}
