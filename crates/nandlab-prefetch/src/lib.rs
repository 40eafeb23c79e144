//! Memory hints for the simulator's inner loop, which is bound by cache and TLB misses on large
//! tables indexed by random logical pages (the translation table above all):
//! - `prefetch`: the run loop looks a few requests ahead and asks for those cache lines early;
//! - `idle_priority`: side threads (a trace's totals counted during its replay) yield the CPU to
//!   the simulation;
//! - `HugePageAlloc`: a global allocator for the binaries that backs large tables with
//!   transparent huge pages (2 MiB), so a random lookup in a 16 MiB table does not also miss
//!   the TLB. On this project's machines THP is in `madvise` mode: it must be asked for.
//!
//! This crate exists so that the core can keep `#![forbid(unsafe_code)]`: the few unsafe calls
//! live here, where they are easy to audit.
#![deny(unsafe_op_in_unsafe_fn)]

use std::alloc::{GlobalAlloc, Layout, System};

/// Allocations at least this large are advised as huge pages.
const HUGE_ALLOCATION_MIN_BYTES: usize = 8 << 20;

/// The system allocator, with transparent huge pages requested for large allocations.
/// Install in a binary with `#[global_allocator] static A: HugePageAlloc = HugePageAlloc;`.
pub struct HugePageAlloc;

impl HugePageAlloc {
    /// Asks for huge pages over a large allocation. The system allocator serves large blocks
    /// from fresh anonymous mappings, page-aligned but not 2 MiB-aligned: the advice covers the
    /// whole range and the kernel uses huge pages for its 2 MiB-aligned interior. Layouts are
    /// never changed, so `calloc`'s lazily zeroed pages stay untouched until used (a 1 TiB
    /// device's tables would otherwise be resident from the start).
    fn advise(ptr: *mut u8, size: usize) {
        #[cfg(target_os = "linux")]
        if !ptr.is_null() && size >= HUGE_ALLOCATION_MIN_BYTES {
            let start = ptr as usize & !4095;
            let len = size + (ptr as usize - start);
            // SAFETY: the range covers a live allocation just returned by the system allocator,
            // rounded down to its page (which belongs to the same anonymous mapping); madvise
            // only changes how the kernel backs it. A failure (THP off) leaves ordinary pages.
            unsafe {
                libc::madvise(start as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = (ptr, size);
    }
}

// SAFETY: every method forwards to `System` with the caller's layout unchanged.
unsafe impl GlobalAlloc for HugePageAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with a valid, non-zero-size layout (the caller's contract).
        let ptr = unsafe { System.alloc(layout) };
        Self::advise(ptr, layout.size());
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as in `alloc`.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        Self::advise(ptr, layout.size());
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `alloc`/`alloc_zeroed` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// Lowers the calling thread to the idle scheduling class (Linux `SCHED_IDLE`): it then runs
/// only on a CPU nothing else wants. For side work whose result is needed late or not at all —
/// a trace's totals counted beside the replay — so that on a machine with as many busy threads
/// as cores it does not take a share of the simulation's CPU. Elsewhere, or if refused, it does
/// nothing (the thread keeps its priority; only speed depends on it).
pub fn idle_priority() {
    #[cfg(target_os = "linux")]
    {
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: `sched_setscheduler` reads the parameter struct only during the call; pid 0 is
        // the calling thread, which any thread may lower without privileges.
        let _ = unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) };
    }
}

/// Hints the CPU to bring `slice[index]` into the cache. Out-of-range indexes are ignored; on
/// architectures without a stable prefetch intrinsic this does nothing.
#[inline(always)]
pub fn prefetch<T>(slice: &[T], index: usize) {
    if index >= slice.len() {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    {
        let ptr = slice[index..].as_ptr().cast::<i8>();
        // SAFETY: a prefetch is only a hint: it never faults and has no architectural effect.
        // The pointer is also in bounds of a live slice.
        unsafe {
            core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(ptr);
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn huge_allocations_round_trip() {
        use std::alloc::{GlobalAlloc, Layout};
        let a = super::HugePageAlloc;
        for size in [64, 1 << 20, 16 << 20] {
            let layout = Layout::from_size_align(size, 8).unwrap();
            // SAFETY: non-zero size; freed with the same layout.
            unsafe {
                let p = a.alloc_zeroed(layout);
                assert!(!p.is_null());
                assert_eq!(*p.add(size - 1), 0);
                *p.add(size - 1) = 7;
                a.dealloc(p, layout);
            }
        }
    }

    #[test]
    fn out_of_range_is_ignored() {
        let v = [1u32, 2, 3];
        super::prefetch(&v, 1);
        super::prefetch(&v, 3);
        super::prefetch::<u64>(&[], 0);
    }
}
