//! Future-knowledge oracle placement: each write (host or cleaner copy) goes to the log whose
//! band contains the page's true time to its next host write, measured in host page writes.
//! Pages that die soon share blocks, so victims are nearly empty. No real FTL can do this; it is
//! the yardstick that shows how far a practical placement (DAC, none) is from informed
//! separation on the same workload.
//!
//! Bands: `boundaries` (ascending, in host page writes) split distances into `regions` classes;
//! the shortest distances go to the Top region (N−1), never-rewritten pages to the Bottom (0).
//! `ftl.oracle_bands` names the two layouts in use (docs/ALGORITHMS.md §11.5): `"geometric"`
//! (the default; boundaries `ftl.oracle_boundaries_passes`, ratio 4 around one pass) and
//! `"segments"`, the FK scheme of SepBIT's trace simulator (Wang et al., FAST'22): bands one
//! erase block of host page writes wide, class k holding distances in [k·S, (k+1)·S).

use std::sync::Arc;

use super::{PageState, Placement, PlacementEntry, PlacementSpec};
use crate::error::ConfigError;
use crate::flash::{Geometry, Lpn};
use crate::ftl::FtlConfig;
use crate::spec::{check, one_of, Param, Params};

pub(super) const ENTRY: PlacementEntry = PlacementEntry {
    name: "oracle",
    params: &[Param::new("ftl", "oracle_boundaries_passes"), Param::omitted("ftl", "oracle_bands")],
    resolve,
};

/// The oracle's regions (default 2) and bands.
#[derive(Clone, Debug)]
struct OracleSpec {
    regions: u32,
    bands: Bands,
}

#[derive(Clone, Debug)]
enum Bands {
    /// Boundaries in units of the logical capacity (`ftl.oracle_boundaries_passes`; default
    /// geometric around 1.0 with ratio 4).
    Passes(Vec<f64>),
    /// SepBIT's FK: boundaries at 1, 2, … erase blocks of host page writes. Known only once the
    /// geometry is, so it is resolved in `build`.
    Segments,
}

fn resolve(f: &mut FtlConfig, params: &mut Params<'_>) -> Result<Arc<dyn PlacementSpec>, ConfigError> {
    let regions = *f.regions.get_or_insert(2);
    check((1..=64).contains(&regions), "ftl.regions", "must be between 1 and 64")?;
    let layout: Option<String> = params.get("oracle_bands")?;
    if let Some(layout) = layout.as_deref() {
        one_of(layout, "ftl.oracle_bands", &["geometric", "segments"])?;
        params.set("oracle_bands", &layout);
        if layout == "segments" {
            // Explicit boundaries would contradict the layout; refuse rather than pick one.
            let explicit: Option<Vec<f64>> = params.get("oracle_boundaries_passes")?;
            check(
                explicit.is_none(),
                "ftl.oracle_boundaries_passes",
                "is set together with ftl.oracle_bands = \"segments\", whose boundaries are one \
                 erase block of writes apart; set one of the two",
            )?;
            return Ok(Arc::new(OracleSpec { regions, bands: Bands::Segments }));
        }
    }
    let geometric: Vec<f64> =
        (0..regions - 1).map(|i| 4f64.powf(f64::from(i) - f64::from(regions - 2) / 2.0)).collect();
    let b = params.or("oracle_boundaries_passes", geometric)?;
    super::check_bands("ftl.oracle_boundaries_passes", &b, regions)?;
    Ok(Arc::new(OracleSpec { regions, bands: Bands::Passes(b) }))
}

impl PlacementSpec for OracleSpec {
    fn name(&self) -> &'static str {
        ENTRY.name
    }
    fn regions(&self) -> u32 {
        self.regions
    }
    /// A victim's pages may go to any band.
    fn cleaner_destinations_max(&self) -> u32 {
        self.regions
    }
    fn needs_future(&self) -> bool {
        true
    }
    /// Each page's next write time.
    fn bytes_per_logical_page(&self) -> u64 {
        8
    }
    fn build(
        &self,
        geometry: &Geometry,
        _: u32,
        future: Option<Vec<u32>>,
    ) -> Result<Box<dyn Placement>, ConfigError> {
        let future = future.ok_or_else(|| {
            ConfigError::new(
                "ftl.placement",
                "the oracle needs the workload's future: run it through the runner, which \
                 pre-computes next-write distances",
            )
        })?;
        let boundaries = match &self.bands {
            Bands::Passes(passes) => {
                let logical = geometry.logical_pages as f64;
                passes.iter().map(|p| (p * logical).round() as u64).collect()
            }
            Bands::Segments => (1..u64::from(self.regions))
                .map(|k| k * u64::from(geometry.pages_per_block))
                .collect(),
        };
        Ok(Box::new(Oracle::new(self.regions, boundaries, future, geometry.logical_pages)))
    }
}

/// Distance value meaning "never written again".
pub const NEVER: u32 = u32::MAX;

pub struct Oracle {
    regions: u32,
    boundaries: Vec<u64>,
    /// Per host page write, in order: host page writes until the same LPN is written again.
    future: Vec<u32>,
    cursor: u64,
    /// Per LPN: index of its next host write (`u64::MAX` = never).
    next_write_at: Vec<u64>,
}

impl Oracle {
    #[must_use]
    pub fn new(regions: u32, boundaries: Vec<u64>, future: Vec<u32>, logical_pages: u64) -> Self {
        assert_eq!(boundaries.len() + 1, regions as usize);
        Self {
            regions,
            boundaries,
            future,
            cursor: 0,
            next_write_at: vec![u64::MAX; logical_pages as usize],
        }
    }

    fn region_for(&self, distance: u64) -> u8 {
        super::band_region(&self.boundaries, &distance)
    }
}

impl Placement for Oracle {
    fn name(&self) -> &'static str {
        "oracle"
    }

    fn regions(&self) -> u32 {
        self.regions
    }

    fn host_write(&mut self, lpn: Lpn, _current: Option<PageState>, _now_ns: u64) -> u8 {
        let i = self.cursor as usize;
        assert!(i < self.future.len(), "oracle: more host page writes than foreseen");
        let d = self.future[i];
        self.cursor += 1;
        let (distance, at) = if d == NEVER {
            (u64::MAX, u64::MAX)
        } else {
            (u64::from(d), self.cursor - 1 + u64::from(d))
        };
        self.next_write_at[lpn.index()] = at;
        self.region_for(distance)
    }

    fn cleaner_copy(&mut self, lpn: Lpn, _current: PageState, _now_ns: u64) -> u8 {
        let at = self.next_write_at[lpn.index()];
        let distance = if at == u64::MAX { u64::MAX } else { at - self.cursor };
        self.region_for(distance)
    }
}

/// For a stream of host page writes (LPNs in order), the distance from each write to the next
/// write of the same LPN, or `NEVER`.
#[must_use]
pub fn next_write_distances(writes: &[Lpn], logical_pages: u64) -> Vec<u32> {
    assert!(writes.len() < NEVER as usize, "oracle supports fewer than 2^32 - 1 page writes");
    let mut last_seen = vec![u32::MAX; logical_pages as usize];
    let mut out = vec![NEVER; writes.len()];
    for (i, &lpn) in writes.iter().enumerate().rev() {
        let next = last_seen[lpn.index()];
        if next != u32::MAX {
            out[i] = next - i as u32;
        }
        last_seen[lpn.index()] = i as u32;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{Bands, OracleSpec, NEVER};
    use crate::flash::{Geometry, Lpn};
    use crate::placement::PlacementSpec;

    #[test]
    fn segments_layout_is_one_erase_block_of_writes_per_band() {
        // SepBIT's FK with 64-page blocks and 4 classes: [0, 64), [64, 128), [128, 192), rest.
        let geometry = Geometry {
            page_size_bytes: 4096,
            pages_per_block: 64,
            blocks: 32,
            logical_pages: 1024,
            sector_size_bytes: 512,
        };
        let spec = OracleSpec { regions: 4, bands: Bands::Segments };
        let future = vec![63, 64, 127, 128, 191, 192, NEVER];
        let mut o = spec.build(&geometry, 0, Some(future)).unwrap();
        let regions: Vec<u8> = (0..7).map(|i| o.host_write(Lpn::new(i), None, 0)).collect();
        assert_eq!(regions, vec![3, 2, 2, 1, 1, 0, 0]);
    }
}
