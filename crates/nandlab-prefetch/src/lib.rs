//! Cache prefetch hints. The simulator's inner loop is bound by cache misses on large tables
//! indexed by random logical pages (the translation table above all); the run loop looks a few
//! requests ahead and asks for those lines early. This crate exists so that the core can keep
//! `#![forbid(unsafe_code)]`: the one unsafe call lives here, where it is easy to audit.
#![deny(unsafe_op_in_unsafe_fn)]
#![no_std]

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
    fn out_of_range_is_ignored() {
        let v = [1u32, 2, 3];
        super::prefetch(&v, 1);
        super::prefetch(&v, 3);
        super::prefetch::<u64>(&[], 0);
    }
}
