//! Fitting trace addresses onto a simulated device of a given logical size.
//!
//! Real traces address volumes of hundreds of GB or several TB, while a
//! simulated SSD is often much smaller. [`AddressFit`] maps each record's
//! `(device, offset, length)` onto `[0, logical_bytes)` in one of three
//! [`FitMode`]s:
//!
//! * **`Error`** (`workload.fit = "error"`): addresses are used as they are; a
//!   request that ends beyond `logical_bytes` is a
//!   [`TraceError::OutOfRange`] naming the file, line, offset and device
//!   size.
//! * **`Fold`** (`"fold"`): the start offset is taken modulo `logical_bytes`;
//!   a request that would then cross the end of the device is **clamped** at
//!   the end (it is not split and does not wrap around). When `logical_bytes`
//!   is a multiple of the page size, page alignment is preserved.
//! * **`Compact { chunk_bytes }`** (`"compact"`): the address space is cut into
//!   aligned chunks of `chunk_bytes`; each distinct chunk gets the next dense
//!   chunk index in order of first touch, and the offset inside the chunk is
//!   kept. A request spanning several chunks is mapped chunk by chunk, and
//!   pieces that land next to each other are merged, so it yields one or more
//!   extents. A chunk whose dense index would end beyond `logical_bytes` is an
//!   `OutOfRange` error: size the device with [`compact_footprint_bytes`].
//!
//! **Devices.** In `Error` and `Fold` modes the record's device number is
//! ignored: requests of different devices/volumes that use the same offsets
//! land on the same simulated addresses. Select one device with
//! `workload.device` ([`crate::TraceOptions::device`]) or use `Compact`, which
//! (when `multi_device` is true) keys chunks by `(device, chunk)` and so
//! gives every device's data its own space. With `multi_device` false,
//! `Compact` keys chunks by address only.
//!
//! Records with length 0 (flushes) produce no extents.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use crate::{open, TraceError, TraceOptions, TraceRecord};

/// How trace addresses are fitted onto the simulated device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FitMode {
    /// Use addresses as they are; fail on a request beyond the device.
    Error,
    /// Offset modulo the device size; clamp at the end.
    Fold,
    /// Dense remapping of touched chunks in order of first touch.
    Compact {
        /// Chunk size in bytes (must be > 0; a multiple of the page size is
        /// sensible).
        chunk_bytes: u64,
    },
}

impl FitMode {
    /// `"error"`, `"fold"` or `"compact"`.
    pub fn name(self) -> &'static str {
        match self {
            FitMode::Error => "error",
            FitMode::Fold => "fold",
            FitMode::Compact { .. } => "compact",
        }
    }
}

/// Stateful address mapper; see the module documentation.
#[derive(Clone, Debug)]
pub struct AddressFit {
    mode: FitMode,
    logical_bytes: u64,
    multi_device: bool,
    chunks: HashMap<(u64, u64), u64>,
}

impl AddressFit {
    /// A mapper onto `[0, logical_bytes)`. `multi_device`: whether the
    /// records may come from several devices (only `Compact` uses it, to key
    /// chunks by device). Invalid settings (zero sizes) are reported by
    /// [`AddressFit::map`] as [`TraceError::Config`].
    pub fn new(mode: FitMode, logical_bytes: u64, multi_device: bool) -> Self {
        AddressFit { mode, logical_bytes, multi_device, chunks: HashMap::new() }
    }

    /// The mode in use.
    pub fn mode(&self) -> FitMode {
        self.mode
    }

    /// Number of distinct chunks mapped so far (`Compact` only; 0 otherwise).
    pub fn chunks_used(&self) -> u64 {
        self.chunks.len() as u64
    }

    /// Maps `rec` and **appends** its `(offset_bytes, length_bytes)` extents
    /// on the simulated device to `out` (it does not clear `out`). `path` is
    /// used in error messages.
    pub fn map(
        &mut self,
        path: &Path,
        rec: &TraceRecord,
        out: &mut Vec<(u64, u64)>,
    ) -> Result<(), TraceError> {
        let logical = self.logical_bytes;
        if logical == 0 {
            return Err(TraceError::Config {
                message: "the device's logical size is 0 bytes".into(),
            });
        }
        if rec.length_bytes == 0 {
            return Ok(());
        }
        let out_of_range = || TraceError::OutOfRange {
            path: path.to_path_buf(),
            line: rec.line,
            offset_bytes: rec.offset_bytes,
            length_bytes: rec.length_bytes,
            logical_bytes: logical,
        };
        let end = rec.offset_bytes.checked_add(rec.length_bytes).ok_or_else(out_of_range)?;
        match self.mode {
            FitMode::Error => {
                if end > logical {
                    return Err(out_of_range());
                }
                out.push((rec.offset_bytes, rec.length_bytes));
            }
            FitMode::Fold => {
                let start = rec.offset_bytes % logical;
                out.push((start, rec.length_bytes.min(logical - start)));
            }
            FitMode::Compact { chunk_bytes } => {
                if chunk_bytes == 0 {
                    return Err(TraceError::Config {
                        message: "the compact fitting chunk size is 0 bytes".into(),
                    });
                }
                let device = if self.multi_device { rec.device } else { 0 };
                let first_new = out.len();
                let mut pos = rec.offset_bytes;
                while pos < end {
                    let chunk = pos / chunk_bytes;
                    let inner = pos % chunk_bytes;
                    let take = (end - pos).min(chunk_bytes - inner);
                    let index = match self.chunks.get(&(device, chunk)) {
                        Some(&i) => i,
                        None => {
                            let i = self.chunks.len() as u64;
                            let fits = i
                                .checked_mul(chunk_bytes)
                                .and_then(|s| s.checked_add(chunk_bytes))
                                .is_some_and(|e| e <= logical);
                            if !fits {
                                return Err(out_of_range());
                            }
                            self.chunks.insert((device, chunk), i);
                            i
                        }
                    };
                    // index * chunk_bytes + chunk_bytes <= logical was checked
                    // when the chunk was inserted, so this cannot overflow.
                    let mapped = index * chunk_bytes + inner;
                    let extend = out.len() > first_new;
                    match out.last_mut() {
                        Some(last) if extend && last.0 + last.1 == mapped => last.1 += take,
                        _ => out.push((mapped, take)),
                    }
                    pos += take;
                }
            }
        }
        Ok(())
    }
}

/// The space a trace needs under `FitMode::Compact { chunk_bytes }`: the
/// number of distinct `(device, chunk)` pairs its records touch times
/// `chunk_bytes`, in one pass (honouring `options.format` and
/// `options.device`). Chunks are keyed by device, so this is never less than
/// what an [`AddressFit`] with `multi_device` false needs.
pub fn compact_footprint_bytes(
    path: &Path,
    options: &TraceOptions,
    chunk_bytes: u64,
) -> Result<u64, TraceError> {
    if chunk_bytes == 0 {
        return Err(TraceError::Config {
            message: "the compact fitting chunk size is 0 bytes".into(),
        });
    }
    let mut seen = ChunkSet::default();
    for rec in open(path, options)? {
        let rec = rec?;
        if rec.length_bytes == 0 {
            continue;
        }
        let first = rec.offset_bytes / chunk_bytes;
        let last = (rec.offset_bytes.saturating_add(rec.length_bytes) - 1) / chunk_bytes;
        seen.insert(rec.device, first, last);
    }
    Ok(seen.chunks().saturating_mul(chunk_bytes))
}

/// Distinct chunks touched, kept as disjoint runs per device: a request's cost is one run,
/// not one entry per chunk, so a (corrupt or huge) request spanning billions of chunks is
/// counted in constant time and memory.
#[derive(Default)]
struct ChunkSet {
    /// `(device, first chunk)` → last chunk (inclusive) of each disjoint, non-adjacent run.
    runs: BTreeMap<(u64, u64), u64>,
    chunks: u64,
}

impl ChunkSet {
    /// Adds chunks `first..=last` of `device`.
    fn insert(&mut self, device: u64, mut first: u64, mut last: u64) {
        // Absorb every run that overlaps or touches [first, last]: the one starting at or
        // before `first` (if it reaches first - 1), then those starting inside.
        if let Some((&(d, s), &e)) = self.runs.range(..=(device, first)).next_back() {
            if d == device && e.saturating_add(1) >= first {
                if e >= last {
                    return;
                }
                first = s;
                last = last.max(e);
                self.runs.remove(&(d, s));
                self.chunks = self.chunks.saturating_sub((e - s).saturating_add(1));
            }
        }
        while let Some((&(d, s), &e)) = self.runs.range((device, first)..).next() {
            if d != device || s > last.saturating_add(1) {
                break;
            }
            last = last.max(e);
            self.runs.remove(&(d, s));
            self.chunks = self.chunks.saturating_sub((e - s).saturating_add(1));
        }
        self.runs.insert((device, first), last);
        self.chunks = self.chunks.saturating_add((last - first).saturating_add(1));
    }

    fn chunks(&self) -> u64 {
        self.chunks
    }
}

#[cfg(test)]
mod tests {
    use super::ChunkSet;
    use std::collections::HashSet;

    /// The run set counts exactly what a set of single chunks counts, on random overlapping,
    /// touching and nested ranges of a few devices.
    #[test]
    fn chunk_runs_count_like_a_set() {
        let mut state = 0x9E37_79B9_7F4A_7C15_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..200 {
            let mut runs = ChunkSet::default();
            let mut set = HashSet::new();
            for _ in 0..40 {
                let device = next() % 3;
                let first = next() % 200;
                let last = first + next() % 20;
                runs.insert(device, first, last);
                set.extend((first..=last).map(|c| (device, c)));
                assert_eq!(runs.chunks(), set.len() as u64);
            }
        }
    }

    /// A run reaching the end of the u64 chunk space neither overflows nor loops.
    #[test]
    fn huge_runs_are_constant_time() {
        let mut runs = ChunkSet::default();
        runs.insert(0, 0, u64::MAX - 1);
        runs.insert(0, 5, 10);
        assert_eq!(runs.chunks(), u64::MAX);
        runs.insert(1, 7, 7);
        assert_eq!(runs.chunks(), u64::MAX, "saturates");
    }
}
