//! nccl-tests' checkable data (its `-c`): the value each rank puts at each
//! element, and the value a collective must leave there, for every type
//! and operation, as bit patterns. The inputs are hashed from a seed and
//! the element's index, and for a reduction crafted so that the result is
//! known exactly whatever order the ranks are combined in: a float sum's
//! inputs are integers on one scale whose partial sums all fit the
//! mantissa, a product's are powers of two but for one rank's, an
//! average's come from two ranks only (so it is the one result allowed
//! two units in the last place). With one contributor (a data mover, or
//! a reduction on one rank) the value is a plain hash of the index.
//!
//! The formulas are nccl-tests 2.19.6's (its verifiable library), written
//! here from their description so that a site that compares our buffers
//! with nccl-tests' sees the same values; the arithmetic is that of the
//! GPU (wrapping integers; a narrow float's sum rounded once; an fp8 sum
//! rounded through half).

use super::narrow;
use super::{Datatype, Reduction};

/// One contributor's stream of data: nccl-tests' `InitData` arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stream {
    /// Picks the values (nccl-tests: the repetition, or `33 * rep + rank`
    /// for the gathering collectives, whose every rank sends its own).
    pub seed: u64,
    /// Ranks contributing to each element (1: a data mover).
    pub rank_n: usize,
    /// This contributor among them.
    pub rank_me: usize,
}

/// The GPU's mixing of 64 bits: its halves stirred, times the golden
/// ratio's constant, the high half folded back into the low.
pub fn mix_bits(x: u64) -> u64 {
    let (mut lo, mut hi) = (x as u32, (x >> 32) as u32);
    hi = hi.wrapping_add(1);
    lo ^= hi;
    let mut v = (u64::from(hi) << 32 | u64::from(lo)).wrapping_mul(0x9e37_79b9_7f4a_7c13);
    let (lo, hi) = (v as u32, (v >> 32) as u32);
    v = (v & !0xffff_ffff) | u64::from(lo ^ (hi << 16 ^ hi >> 16));
    v
}

/// A hash of `a` keyed by `b`.
pub fn hash_of(a: u64, b: u64) -> u64 {
    let mut a = a.wrapping_add(1 << 32).wrapping_add(b);
    a ^= a >> 32;
    a = a.wrapping_mul(0x9e37_79b9_7f4a_7c13);
    a = a.wrapping_add(b >> 16 ^ b << 48);
    a ^= a >> 32;
    a.wrapping_mul(0xc4ce_b9fe_1a85_ec53)
}

fn umul32hi(a: u32, b: u32) -> u32 {
    ((u64::from(a) * u64::from(b)) >> 32) as u32
}

fn umul64hi(a: u64, b: u64) -> u64 {
    ((u128::from(a) * u128::from(b)) >> 64) as u64
}

/// Unsigned division as the GPU does it: by zero, all ones.
fn div32(a: u32, b: u32) -> u32 {
    a.checked_div(b).unwrap_or(u32::MAX)
}

/// A permutation of the ranks `0..rank_n` drawn from `rng` (which it
/// stirs): rank `rank_me`'s place in it.
fn shuffle_rank(rank_n: usize, rank_me: i64, rng: &mut u64) -> usize {
    let (a, b) = (*rng as u32, (*rng >> 32) as u32);
    *rng = mix_bits(*rng);
    let n = rank_n as u32;
    let mut r = rank_me as u32;
    // The largest power of two not above n, less one: an affine map with an
    // odd factor and x(x+1)/2 are both one to one modulo a power of two.
    let n2 = (u32::MAX >> 1).checked_shr(n.leading_zeros()).unwrap_or(0);
    let mix = |r: u32, f: u32, g: u32| {
        let r = r.wrapping_mul(f | 1).wrapping_add(g) & n2;
        (r.wrapping_mul(r).wrapping_add(r) / 2) & n2
    };
    if r <= n2 {
        r = mix(r, a, b).wrapping_add(n.wrapping_sub(n2.wrapping_add(1)));
    } else {
        r = r.wrapping_sub(n2.wrapping_add(1));
    }
    if r <= n2 {
        r = mix(r, b, a);
    }
    r as usize
}

/// Integers x (this rank's) and y (their sum over the ranks) with y in
/// `[y_max/2, y_max]`: the ranks fall in partitions, partition p's ranks
/// each giving p + 1, and the last rank the remainder. With `avoid`, `y`
/// comes in and the new one differs from it. Written once per width: the
/// GPU's arithmetic wraps at the width.
macro_rules! gen_sum_xy {
    ($name:ident, $u:ty, $wide:expr) => {
        fn $name(rank_n: usize, rank_me: usize, rng: &mut u64, y_max: $u, y: &mut $u, avoid: bool) -> $u {
            let y_min = y_max.wrapping_add(1) / 2;
            let span = (y_max / 2).wrapping_add(if avoid { 0 } else { 1 });
            let d: $u =
                if $wide { umul64hi(*rng, span as u64) as $u } else { umul32hi(*rng as u32, span as u32) as $u };
            let y1 = (if avoid { y.wrapping_add(1) } else { y_min }).wrapping_add(d);
            *y = y1.wrapping_sub(if avoid && (y1 < y_min || y_max < y1) { y_max / 2 } else { 0 });
            *rng = mix_bits(*rng);
            let (r, rn) = (rank_me as u32, rank_n as u32);
            let rn_u = rn as $u;
            let mut pn: $u = if rn == 1 {
                1
            } else {
                (2 as $u).wrapping_mul(y.checked_div(rn_u).unwrap_or(<$u>::MAX)).wrapping_sub(1)
            };
            if pn == 0 {
                pn = 1;
            }
            if rn_u < pn {
                pn = rn_u;
            }
            let p_sum: $u = if u64::from(y_max) <= u64::from(u32::MAX >> 1) {
                ((pn as u32).wrapping_mul(pn.wrapping_add(1) as u32) / 2) as $u
            } else {
                ((pn as u64).wrapping_mul(pn.wrapping_add(1) as u64) / 2) as $u
            };
            let by_sum = y.checked_div(p_sum).unwrap_or(<$u>::MAX);
            let by_rank = rn_u.checked_div(pn).unwrap_or(<$u>::MAX);
            let s = (if by_sum < by_rank { by_sum } else { by_rank }) as u32;
            let part = div32(r, s);
            let mut x: $u = if (part as $u) < pn { 1 + part as $u } else { 0 };
            if r == rn.wrapping_sub(1) {
                x = x.wrapping_add(y.wrapping_sub((s as $u).wrapping_mul(p_sum)));
            }
            x
        }
    };
}
gen_sum_xy!(gen_sum_xy32, u32, false);
gen_sum_xy!(gen_sum_xy64, u64, true);

/// [`gen_sum_xy32`] or, for a mantissa wider than 32 bits (`wide`),
/// [`gen_sum_xy64`], in `u64`s: x, with `y` in and out.
fn gen_sum_xy(wide: bool, rank_n: usize, rank_me: usize, rng: &mut u64, y_max: u64, y: &mut u64, avoid: bool) -> u64 {
    if wide {
        return gen_sum_xy64(rank_n, rank_me, rng, y_max, y, avoid);
    }
    let mut y32 = *y as u32;
    let x = gen_sum_xy32(rank_n, rank_me, rng, y_max as u32, &mut y32, avoid);
    *y = u64::from(y32);
    u64::from(x)
}

/// The layout of a floating-point type: exponent and mantissa bits.
#[derive(Clone, Copy)]
struct Float {
    exp: u32,
    man: u32,
}

impl Float {
    fn of(dt: Datatype) -> Option<Float> {
        let (exp, man) = match dt {
            Datatype::Float => (8, 23),
            Datatype::Double => (11, 52),
            Datatype::Half => (5, 10),
            Datatype::Bfloat16 => (8, 7),
            Datatype::F8e4m3 => (4, 3),
            Datatype::F8e5m2 => (5, 2),
            _ => return None,
        };
        Some(Float { exp, man })
    }

    fn man_mask(self) -> u64 {
        (1u64 << self.man) - 1
    }

    fn bias(self) -> u32 {
        (1 << (self.exp - 1)) - 1
    }

    /// The bits of sign, biased exponent and mantissa put together.
    fn make(self, sign: u64, exp: u64, man: u64) -> u64 {
        ((sign << self.exp | exp) << self.man) | man
    }

    /// Bits of a value that is neither zero, infinite nor NaN, from a
    /// hash: a random sign, an exponent from the middle of the range.
    fn random(self, mut rng: u64) -> u64 {
        let sign = rng & 1;
        rng ^= rng >> 1;
        let exp = (rng & ((1 << (self.exp - 1)) - 1)) + (1 << (self.exp - 2));
        rng ^= rng >> self.exp;
        self.make(sign, exp, rng & self.man_mask())
    }

    /// A mantissa `man` (not zero, at most twice the mask plus one: the
    /// implicit bit included) on the scale of exponent `exp`, normalised.
    fn normalised(self, sign: u64, exp: u32, man: u64) -> u64 {
        if man == 0 {
            return 0;
        }
        let shift = man.leading_zeros() - (64 - self.man - 1);
        self.make(sign, u64::from(exp - shift), (man << shift) & self.man_mask())
    }

    /// nccl-tests' float sum (same_sign false): the even ranks' inputs
    /// add up to one integer, the odd ranks' (negated) to another.
    fn sum(self, input: bool, rank_n: usize, rank_me: usize, seed: u64, index: u64, wide: bool) -> u64 {
        let exp_lo = 1 + self.man;
        let exp_hi = (1 << self.exp) - 1;
        let max_mant = 2 * self.man_mask() + 1;
        let mut rng = hash_of(seed, index);
        let mut y_sign = rng & 1;
        let mut x_sign = y_sign;
        let xy_exp = exp_lo + umul32hi((rng >> 32) as u32, exp_hi - exp_lo);
        rng = mix_bits(rng);
        let me = shuffle_rank(rank_n, rank_me as i64, &mut rng);
        let mut y0 = 0;
        let mut x0 = gen_sum_xy(wide, rank_n.div_ceil(2), me / 2, &mut rng, max_mant, &mut y0, false);
        if rank_n / 2 != 0 {
            let mut y1 = y0;
            let x1 = gen_sum_xy(wide, rank_n / 2, me / 2, &mut rng, max_mant, &mut y1, true);
            if y0 < y1 {
                y_sign ^= 1;
            }
            y0 = y0.abs_diff(y1);
            x_sign ^= (me % 2) as u64;
            if me % 2 == 1 {
                x0 = x1;
            }
        }
        if input {
            self.normalised(x_sign, xy_exp, x0)
        } else {
            self.normalised(y_sign, xy_exp, y0)
        }
    }

    /// nccl-tests' float pre-multiplied sum: the even ranks (scalar 1) sum
    /// to one integer, the odd ones (scalar 2) to another, both positive.
    fn pre_mul_sum(self, input: bool, rank_n: usize, rank_me: usize, seed: u64, index: u64, wide: bool) -> u64 {
        let exp_lo = 1 + self.man;
        let exp_hi = (1 << self.exp) - 1;
        let max_mant = 2 * self.man_mask() + 1;
        let mut rng = hash_of(seed, index);
        let y_sign = rng & 1;
        let y_exp = exp_lo + umul32hi((rng >> 32) as u32, exp_hi - exp_lo);
        rng = mix_bits(rng);
        let sub0 = shuffle_rank(rank_n.div_ceil(2), (rank_me / 2) as i64, &mut rng);
        let sub1 = shuffle_rank(rank_n / 2, (rank_me / 2) as i64, &mut rng);
        let gen = |n: usize, r: usize, rng: &mut u64, y_max: u64| {
            let mut y = 0;
            (gen_sum_xy(wide, n, r, rng, y_max, &mut y, false), y)
        };
        let (x0, y0) = gen(rank_n.div_ceil(2), sub0, &mut rng, max_mant >> 1);
        let (x1, y1) = if rank_n / 2 != 0 { gen(rank_n / 2, sub1, &mut rng, max_mant >> 2) } else { (0, 0) };
        let x = if rank_me % 2 == 0 { x0 } else { x1 };
        let y = y0.wrapping_add(2u64.wrapping_mul(y1));
        let y = if wide { y } else { u64::from(y as u32) };
        self.normalised(y_sign, y_exp, if input { x } else { y })
    }

    /// nccl-tests' float product: one rank gives a random mantissa, the
    /// others powers of two whose exponents sum to the result's.
    fn prod(self, input: bool, rank_n: usize, rank_me: usize, seed: u64, index: u64) -> u64 {
        let mut rng = hash_of(seed, index);
        let me = shuffle_rank(rank_n, rank_me as i64, &mut rng);
        let y_sign = ((rank_n / 2) % 2) as u64;
        let x_sign = (me % 2) as u64;
        let max_exp = (1u32 << (self.exp - 1)) - 1;
        let mut y_exp = 0;
        let x_exp = gen_sum_xy32(rank_n, me, &mut rng, max_exp, &mut y_exp, false);
        let (x_exp, y_exp) = (x_exp.wrapping_add(self.bias()), y_exp.wrapping_add(self.bias()));
        let y_mant = (rng & self.man_mask()).max(1);
        if input {
            self.make(x_sign, u64::from(x_exp), if me == 0 { y_mant } else { 0 })
        } else {
            self.make(y_sign, u64::from(y_exp), y_mant)
        }
    }
}

/// A value of type `dt` as an `f64` (exactly, for every type here).
fn value_of(dt: Datatype, bits: u64) -> f64 {
    match dt {
        Datatype::Float => f64::from(f32::from_bits(bits as u32)),
        Datatype::Double => f64::from_bits(bits),
        _ => dt.narrow().map_or(f64::NAN, |f| f.decode(bits as u32)),
    }
}

/// `x` rounded once to type `dt` (nearest, ties to even), as bits.
fn bits_of(dt: Datatype, x: f64) -> u64 {
    match dt {
        Datatype::Float => u64::from((x as f32).to_bits()),
        Datatype::Double => x.to_bits(),
        _ => dt.narrow().map_or(0, |f| u64::from(f.encode(x))),
    }
}

/// The GPU's sum of two values of float type `dt`: one rounding to the
/// type (the exact sum of two of them fits an `f64` closely enough), but
/// for fp8, which NCCL adds in half and rounds again.
fn float_add(dt: Datatype, a: u64, b: u64) -> u64 {
    let s = value_of(dt, a) + value_of(dt, b);
    match dt {
        Datatype::F8e4m3 | Datatype::F8e5m2 => bits_of(dt, narrow::HALF.round(s)),
        Datatype::Float => u64::from((value_of(dt, a) as f32 + value_of(dt, b) as f32).to_bits()),
        _ => bits_of(dt, s),
    }
}

/// An integer type: its width and whether it is signed.
#[derive(Clone, Copy)]
struct Int {
    bits: u32,
    signed: bool,
}

impl Int {
    fn of(dt: Datatype) -> Option<Int> {
        let (bits, signed) = match dt {
            Datatype::Char => (8, true),
            Datatype::Uint8 => (8, false),
            Datatype::Int => (32, true),
            Datatype::Uint32 => (32, false),
            Datatype::Int64 => (64, true),
            Datatype::Uint64 => (64, false),
            _ => return None,
        };
        Some(Int { bits, signed })
    }

    fn mask(self) -> u64 {
        u64::MAX >> (64 - self.bits)
    }

    /// The value as an `i128` (sign-extended where signed).
    fn wide(self, v: u64) -> i128 {
        if self.signed {
            i128::from((v << (64 - self.bits)) as i64 >> (64 - self.bits))
        } else {
            i128::from(v)
        }
    }

    fn reduce(self, op: Reduction, a: u64, b: u64) -> u64 {
        let m = self.mask();
        match op {
            Reduction::Prod => a.wrapping_mul(b) & m,
            Reduction::Max => {
                if self.wide(a) >= self.wide(b) {
                    a
                } else {
                    b
                }
            }
            Reduction::Min => {
                if self.wide(a) <= self.wide(b) {
                    a
                } else {
                    b
                }
            }
            Reduction::Sum | Reduction::Avg | Reduction::MulSum => a.wrapping_add(b) & m,
        }
    }
}

/// The operation each element is generated for: with one contributor,
/// none (nccl-tests' "nil" reduction, a copy).
fn effective(op: Reduction, rank_n: usize) -> Option<Reduction> {
    (rank_n > 1).then_some(op)
}

/// The input that contributor `s` puts at element `index` for a reduction
/// `op` over `s.rank_n` contributors (a copy where one), as the bits of
/// a `dt` (its low [`Datatype::size`] bytes).
pub fn input(dt: Datatype, op: Reduction, s: Stream, index: u64) -> u64 {
    let salted = index ^ index << 16 ^ s.rank_me as u64;
    if let Some(int) = Int::of(dt) {
        return match effective(op, s.rank_n) {
            None => mix_bits(s.seed ^ index) >> (64 - int.bits),
            Some(op) => {
                let bits = int.mask() & hash_of(salted, s.seed);
                if op == Reduction::Prod && bits == 0 {
                    1
                } else {
                    bits
                }
            }
        };
    }
    let Some(f) = Float::of(dt) else { return 0 };
    let wide = dt.size() > 4;
    match effective(op, s.rank_n) {
        None | Some(Reduction::Max | Reduction::Min) => f.random(hash_of(salted, s.seed)),
        Some(Reduction::Sum) => f.sum(true, s.rank_n, s.rank_me, s.seed, index, wide),
        Some(Reduction::Prod) => f.prod(true, s.rank_n, s.rank_me, s.seed, index),
        Some(Reduction::MulSum) => f.pre_mul_sum(true, s.rank_n, s.rank_me, s.seed, index, wide),
        Some(Reduction::Avg) => {
            // Only two ranks give a value (so the sum has no order), the
            // same at every index.
            let mut rng = s.seed;
            let r = shuffle_rank(s.rank_n, s.rank_me as i64, &mut rng);
            let m = rng.wrapping_mul(if r != 0 { 0xbeef } else { 1 }) & f.man_mask();
            if r < 2 {
                bits_of(dt, (1 + m) as f64)
            } else {
                0
            }
        }
    }
}

/// The value element `index` holds after reduction `op` over `rank_n`
/// contributors of stream `seed` (with one, the input itself).
pub fn output(dt: Datatype, op: Reduction, rank_n: usize, seed: u64, index: u64) -> u64 {
    let stream = |r: usize| Stream { seed, rank_n, rank_me: r };
    let Some(op) = effective(op, rank_n) else { return input(dt, op, stream(0), index) };
    if let Some(int) = Int::of(dt) {
        // Every rank's input, each times its scalar for a pre-multiplied
        // sum, reduced in the type; an average then divided.
        let scaled = |r: usize| {
            let x = input(dt, op, stream(r), index);
            if op == Reduction::MulSum {
                x.wrapping_mul(Reduction::pre_mul_scalar(r)) & int.mask()
            } else {
                x
            }
        };
        let acc = (1..rank_n).fold(scaled(0), |acc, r| int.reduce(op, acc, scaled(r)));
        if op != Reduction::Avg {
            return acc;
        }
        // The quotient truncates toward zero, as C's in the type.
        return (int.wide(acc) / rank_n as i128) as u64 & int.mask();
    }
    let Some(f) = Float::of(dt) else { return 0 };
    let wide = dt.size() > 4;
    match op {
        Reduction::Sum => f.sum(false, rank_n, 0, seed, index, wide),
        Reduction::Prod => f.prod(false, rank_n, 0, seed, index),
        Reduction::MulSum => f.pre_mul_sum(false, rank_n, 0, seed, index, wide),
        Reduction::Max | Reduction::Min => (1..rank_n).fold(input(dt, op, stream(0), index), |acc, r| {
            let x = input(dt, op, stream(r), index);
            let take_x = if op == Reduction::Max {
                value_of(dt, x) > value_of(dt, acc)
            } else {
                value_of(dt, x) < value_of(dt, acc)
            };
            if take_x {
                x
            } else {
                acc
            }
        }),
        Reduction::Avg => {
            let mut rng = seed;
            shuffle_rank(rank_n, -1, &mut rng);
            let m0 = rng & f.man_mask();
            let m1 = rng.wrapping_mul(0xbeef) & f.man_mask();
            // Each of the two values times the reciprocal of the ranks in
            // float (double for a double), rounded to the type, then added.
            let part = |m: u64| {
                if wide {
                    bits_of(dt, (1 + m) as f64 * (1.0 / rank_n as f64))
                } else {
                    bits_of(dt, f64::from((1 + m) as f32 * (1.0 / rank_n as f64) as f32))
                }
            };
            float_add(dt, part(m0), part(m1))
        }
    }
}

/// How far (in units of the bit pattern read as an unsigned integer) a
/// result may be from [`output`]: two for a float average, whose
/// multiplications NCCL does in a type of its choosing; else none.
pub fn tolerance(dt: Datatype, op: Reduction) -> u64 {
    if dt.is_float() && op == Reduction::Avg {
        2
    } else {
        0
    }
}

#[cfg(test)]
mod tests;
