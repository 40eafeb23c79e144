//! Division by a number fixed at construction (a page or block size), a shift when it is a power
//! of two — as it almost always is. A 64-bit hardware division costs tens of cycles; the request
//! path divides byte offsets by the page size and page numbers by the block size several times
//! per request.

/// Divides by `d` (> 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Divisor {
    d: u64,
    /// `log2(d)` when `d` is a power of two, else `u32::MAX`.
    shift: u32,
}

impl Divisor {
    #[must_use]
    pub fn new(d: u64) -> Self {
        assert!(d > 0, "division by zero");
        Self { d, shift: if d.is_power_of_two() { d.trailing_zeros() } else { u32::MAX } }
    }

    #[inline(always)]
    #[must_use]
    pub fn quotient(self, x: u64) -> u64 {
        if self.shift == u32::MAX {
            x / self.d
        } else {
            x >> self.shift
        }
    }

    #[inline(always)]
    #[must_use]
    pub fn remainder(self, x: u64) -> u64 {
        if self.shift == u32::MAX {
            x % self.d
        } else {
            x & (self.d - 1)
        }
    }

    #[inline(always)]
    #[must_use]
    pub fn div_ceil(self, x: u64) -> u64 {
        self.quotient(x) + u64::from(self.remainder(x) != 0)
    }

    /// `div` on u32 values.
    #[inline(always)]
    #[must_use]
    pub fn div32(self, x: u32) -> u32 {
        self.quotient(u64::from(x)) as u32
    }

    #[inline(always)]
    #[must_use]
    pub fn rem32(self, x: u32) -> u32 {
        self.remainder(u64::from(x)) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::Divisor;

    #[test]
    fn agrees_with_hardware_division() {
        for d in [1u64, 2, 3, 64, 100, 2112, 4096, 1 << 20] {
            let q = Divisor::new(d);
            for x in [0u64, 1, d - 1, d, d + 1, 12_345_678, u64::MAX - 1, u64::MAX] {
                assert_eq!(q.quotient(x), x / d, "{x} / {d}");
                assert_eq!(q.remainder(x), x % d, "{x} % {d}");
                assert_eq!(q.div_ceil(x), x.div_ceil(d), "{x} /^ {d}");
            }
        }
    }
}
