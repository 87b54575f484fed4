//! Floating-point formats narrower than `f32` (IEEE half, bfloat16, and
//! the two 8-bit formats NCCL 2.24 added), which Rust has no type for:
//! their bits read as an `f64` and an `f64` rounded to their bits. The
//! host side of a benchmark needs them to write validation values, to
//! check results, and to reduce in the mock backend as the GPU would.
//!
//! Rounding is to nearest, ties to even, as CUDA's conversions. A value
//! beyond the largest finite one becomes infinity in the formats that
//! have one (half, bfloat16) and the largest finite value in the 8-bit
//! ones, as CUDA's fp8 conversions with saturation give it.

/// A binary floating-point layout: sign, `exp_bits` of biased exponent,
/// `man_bits` of mantissa.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Format {
    exp_bits: u32,
    man_bits: u32,
    /// IEEE's specials (an all-ones exponent is infinity or NaN); else,
    /// as in E4M3, only all-ones exponent and mantissa is NaN and no
    /// infinity exists.
    ieee: bool,
}

/// IEEE 754 binary16.
pub const HALF: Format = Format { exp_bits: 5, man_bits: 10, ieee: true };
/// bfloat16: an `f32` with its low 16 mantissa bits dropped.
pub const BFLOAT16: Format = Format { exp_bits: 8, man_bits: 7, ieee: true };
/// FP8 E4M3 (the "FN" variant: no infinity, largest finite 448).
pub const E4M3: Format = Format { exp_bits: 4, man_bits: 3, ieee: false };
/// FP8 E5M2 (IEEE-like: infinities, largest finite 57344).
pub const E5M2: Format = Format { exp_bits: 5, man_bits: 2, ieee: true };

impl Format {
    /// Bits in all.
    pub fn bits(self) -> u32 {
        1 + self.exp_bits + self.man_bits
    }

    fn bias(self) -> i32 {
        (1 << (self.exp_bits - 1)) - 1
    }

    fn exp_all_ones(self) -> u32 {
        (1 << self.exp_bits) - 1
    }

    fn man_mask(self) -> u32 {
        (1 << self.man_bits) - 1
    }

    fn sign_bit(self) -> u32 {
        1 << (self.bits() - 1)
    }

    /// The bits of the largest finite value.
    fn max_finite(self) -> u32 {
        if self.ieee {
            (self.exp_all_ones() - 1) << self.man_bits | self.man_mask()
        } else {
            self.exp_all_ones() << self.man_bits | (self.man_mask() - 1)
        }
    }

    fn nan(self) -> u32 {
        if self.ieee {
            self.exp_all_ones() << self.man_bits | 1 << (self.man_bits - 1)
        } else {
            self.exp_all_ones() << self.man_bits | self.man_mask()
        }
    }

    /// The value of `bits` (the low [`Format::bits`] of them).
    pub fn decode(self, bits: u32) -> f64 {
        let sign = if bits & self.sign_bit() != 0 { -1.0 } else { 1.0 };
        let exp = (bits >> self.man_bits) & self.exp_all_ones();
        let man = bits & self.man_mask();
        let magnitude = if self.ieee && exp == self.exp_all_ones() {
            if man == 0 {
                f64::INFINITY
            } else {
                f64::NAN
            }
        } else if !self.ieee && exp == self.exp_all_ones() && man == self.man_mask() {
            f64::NAN
        } else if exp == 0 {
            man as f64 * pow2(1 - self.bias() - self.man_bits as i32)
        } else {
            (man | 1 << self.man_bits) as f64 * pow2(exp as i32 - self.bias() - self.man_bits as i32)
        };
        sign * magnitude
    }

    /// `x` rounded to the nearest value of the format (ties to even), as
    /// bits.
    pub fn encode(self, x: f64) -> u32 {
        if x.is_nan() {
            return self.nan();
        }
        let sign = if x.is_sign_negative() { self.sign_bit() } else { 0 };
        let a = x.abs();
        let overflow = || sign | if self.ieee { self.exp_all_ones() << self.man_bits } else { self.max_finite() };
        if a == 0.0 {
            return sign;
        }
        if a.is_infinite() {
            return overflow();
        }
        let min_exp = 1 - self.bias();
        // The power of two at or below a, not below the subnormals' one.
        let e = exponent_of(a).max(min_exp);
        let quantum = pow2(e - self.man_bits as i32);
        // Exact: a scaled by a power of two; then ties to even.
        let n = (a / quantum).round_ties_even() as u64;
        // n carries the implicit bit where the value is normal; rounding
        // up may carry into the next power of two.
        let (n, e) = if n >> (self.man_bits + 1) != 0 { (n >> 1, e + 1) } else { (n, e) };
        let bits = if n >> self.man_bits == 0 {
            n as u32 // subnormal (or rounded to zero)
        } else {
            let field = (e + self.bias()) as u32;
            field << self.man_bits | (n as u32 & self.man_mask())
        };
        if bits > self.max_finite() {
            return overflow();
        }
        sign | bits
    }

    /// The `v`-th non-negative finite value's bits, counting from zero and
    /// wrapping after the largest: distinct patterns for distinct `v`
    /// within a wrap, none of them NaN or infinite.
    pub fn finite_pattern(self, v: u64) -> u32 {
        (v % (u64::from(self.max_finite()) + 1)) as u32
    }

    /// `x` rounded to the format and back: the value the format holds
    /// nearest to it.
    pub fn round(self, x: f64) -> f64 {
        self.decode(self.encode(x))
    }

    /// The bits of the value `bytes` hold (little or native endian, as a
    /// GPU and this host store them).
    pub fn read(self, bytes: &[u8]) -> u32 {
        match self.bits() {
            8 => u32::from(bytes[0]),
            _ => u32::from(u16::from_ne_bytes([bytes[0], bytes[1]])),
        }
    }

    /// Writes `bits` into the first one or two bytes of `out`.
    pub fn write(self, bits: u32, out: &mut [u8]) {
        match self.bits() {
            8 => out[0] = bits as u8,
            _ => out[..2].copy_from_slice(&(bits as u16).to_ne_bytes()),
        }
    }
}

/// 2^e as an f64 (e well inside f64's normal range here).
fn pow2(e: i32) -> f64 {
    f64::from_bits(((1023 + e) as u64) << 52)
}

/// floor(log2(a)) for a positive, finite, normal f64.
fn exponent_of(a: f64) -> i32 {
    ((a.to_bits() >> 52) & 0x7ff) as i32 - 1023
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Format; 4] = [HALF, BFLOAT16, E4M3, E5M2];

    #[test]
    fn known_values() {
        for (f, one, max, max_bits) in [
            (HALF, 0x3c00, 65504.0, 0x7bff),
            (BFLOAT16, 0x3f80, 3.3895313892515355e38, 0x7f7f),
            (E4M3, 0x38, 448.0, 0x7e),
            (E5M2, 0x3c, 57344.0, 0x7b),
        ] {
            assert_eq!(f.encode(1.0), one, "{f:?}");
            assert_eq!(f.decode(one), 1.0);
            assert_eq!(f.decode(max_bits), max, "{f:?}");
            assert_eq!(f.encode(max), max_bits);
            assert_eq!(f.encode(-2.0), f.sign_bit() | f.encode(2.0));
        }
        // Smallest subnormals.
        assert_eq!(HALF.decode(1), 2f64.powi(-24));
        assert_eq!(E4M3.decode(1), 2f64.powi(-9));
        assert_eq!(E5M2.decode(1), 2f64.powi(-16));
        // bfloat16 is the top half of an f32.
        assert_eq!(BFLOAT16.encode(3.5), (3.5f32.to_bits() >> 16));
    }

    #[test]
    fn ties_go_to_even_and_carry() {
        // Half holds every integer up to 2048, then even ones.
        assert_eq!(HALF.round(2049.0), 2048.0);
        assert_eq!(HALF.round(2051.0), 2052.0);
        assert_eq!(HALF.round(2050.9), 2050.0);
        // E4M3 holds 4 significant bits: 17 is a tie between 16 and 18.
        assert_eq!(E4M3.round(17.0), 16.0);
        assert_eq!(E4M3.round(19.0), 20.0);
        // E5M2 holds 3: 15 rounds up into the next power of two.
        assert_eq!(E5M2.round(15.0), 16.0);
        assert_eq!(E5M2.round(14.0), 14.0);
        // Half the smallest subnormal ties to zero; more rounds up.
        assert_eq!(HALF.encode(2f64.powi(-25)), 0);
        assert_eq!(HALF.encode(1.5 * 2f64.powi(-25)), 1);
    }

    #[test]
    fn beyond_the_largest_value() {
        assert_eq!(HALF.decode(HALF.encode(1e6)), f64::INFINITY);
        assert_eq!(BFLOAT16.decode(BFLOAT16.encode(-1e300)), f64::NEG_INFINITY);
        assert_eq!(E5M2.decode(E5M2.encode(1e6)), f64::INFINITY);
        // E4M3 has no infinity: it saturates.
        assert_eq!(E4M3.decode(E4M3.encode(1e6)), 448.0);
        assert_eq!(E4M3.decode(E4M3.encode(f64::INFINITY)), 448.0);
        // 65520 is the tie above half's largest: it rounds to infinity.
        assert_eq!(HALF.round(65519.0), 65504.0);
        assert_eq!(HALF.round(65520.0), f64::INFINITY);
        for f in ALL {
            assert!(f.decode(f.encode(f64::NAN)).is_nan(), "{f:?}");
        }
    }

    #[test]
    fn finite_patterns_wrap_before_the_specials() {
        for f in ALL {
            let max = u64::from(f.max_finite());
            assert!(f.decode(f.finite_pattern(max)).is_finite());
            assert_eq!(f.finite_pattern(max + 1), 0, "{f:?}");
            assert_eq!(f.finite_pattern(max + 8), 7);
        }
        assert_eq!(E4M3.max_finite() + 1, 127);
        assert_eq!(BFLOAT16.max_finite() + 1, 32640);
    }

    /// Every pattern that is a number reads back to the same bits.
    #[test]
    fn every_pattern_round_trips() {
        for f in ALL {
            let mut numbers = 0;
            for bits in 0..1u32 << f.bits() {
                let v = f.decode(bits);
                if v.is_nan() {
                    continue;
                }
                numbers += 1;
                let back = f.encode(v);
                // Negative zero keeps its sign.
                assert_eq!(back, bits, "{f:?} {bits:#x} = {v}");
                let mut bytes = [0u8; 2];
                f.write(bits, &mut bytes);
                assert_eq!(f.read(&bytes), bits);
            }
            let nans = (1u32 << f.bits()) - numbers;
            let want = if f.ieee { 2 * f.man_mask() } else { 2 };
            assert_eq!(nans, want, "{f:?}");
        }
    }

    /// Between any two neighbouring values, the midpoint goes to the one
    /// whose pattern is even, and a point a quarter of the way to the
    /// nearer one.
    #[test]
    fn halfway_values_between_neighbours() {
        for f in ALL {
            for bits in 1..f.max_finite() {
                let (lo, hi) = (f.decode(bits), f.decode(bits + 1));
                let mid = (lo + hi) / 2.0;
                let even = if bits % 2 == 0 { bits } else { bits + 1 };
                assert_eq!(f.encode(mid), even, "{f:?} between {lo} and {hi}");
                assert_eq!(f.encode(lo + (hi - lo) / 4.0), bits);
                assert_eq!(f.encode(hi - (hi - lo) / 4.0), bits + 1);
            }
        }
    }
}
