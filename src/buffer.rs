//! Message buffers: page-aligned host allocations, the fill bytes OSU uses
//! between sizes, and the validation patterns (`-c`) with their checks.

use std::ops::Range;
use std::ptr::NonNull;

use crate::datatype::Datatype;

pub(crate) mod verifiable;

/// Host buffers are aligned to the page size, as OSU's `posix_memalign`.
pub(crate) const PAGE_ALIGN: usize = 4096;

#[derive(Debug, thiserror::Error)]
#[error("cannot allocate a {bytes}-byte message buffer (out of memory; lower -m or -W)")]
pub struct AllocError {
    pub bytes: usize,
}

/// Below this size a buffer comes from the C heap, above it from its own
/// anonymous mapping: the same split glibc's allocator makes, so buffers
/// sit where OSU's `posix_memalign` would put them.
pub(crate) const MAPPED_ABOVE: usize = 128 * 1024;

/// A zero-initialised, page-aligned host buffer of fixed length, every
/// page of it faulted in when it is allocated, as OSU's `memset` of its
/// whole buffers does. Large buffers are anonymous mappings populated in
/// one sweep (`MAP_POPULATE`): pages faulted a few at a time instead, as
/// the sizes grow and fills reach them, made osu_mbw_mr read 4-6% less
/// than OSU's at 32-256 KiB over 40 alternating runs here, and 0-4% more
/// populated (docs/measured.md). A run whose buffers cannot fit in the
/// node's memory is refused before any is allocated (the runner's
/// estimate, bench::engine::memory).
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    len: usize,
    /// Bytes mapped, or 0 for a heap allocation.
    mapped: usize,
}

// The buffer owns its memory exclusively.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    /// Allocates `len` bytes (at least one byte, so that a zero-length
    /// message still has a valid address).
    pub(crate) fn zeroed(len: usize) -> Result<AlignedBuf, AllocError> {
        let err = AllocError { bytes: len };
        if len < MAPPED_ABOVE {
            let mut raw: *mut libc::c_void = std::ptr::null_mut();
            // SAFETY: posix_memalign with a power-of-two alignment; the
            // result is checked, then zeroed over its whole length.
            unsafe {
                if libc::posix_memalign(&mut raw, PAGE_ALIGN, len.max(1)) != 0 {
                    return Err(err);
                }
                std::ptr::write_bytes(raw as *mut u8, 0, len.max(1));
            }
            let ptr = NonNull::new(raw as *mut u8).ok_or(err)?;
            return Ok(AlignedBuf { ptr, len, mapped: 0 });
        }
        let mapped = len.checked_next_multiple_of(PAGE_ALIGN).ok_or(AllocError { bytes: len })?;
        // SAFETY: a fresh private anonymous mapping, populated now;
        // checked below.
        let raw = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                mapped,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_POPULATE,
                -1,
                0,
            )
        };
        if raw == libc::MAP_FAILED {
            return Err(err);
        }
        let ptr = NonNull::new(raw as *mut u8).ok_or(err)?;
        Ok(AlignedBuf { ptr, len, mapped })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn as_ptr(&self) -> *const u8 {
        self.ptr.as_ptr()
    }

    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr is valid for len bytes, zeroed by the mapping.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    pub(crate) fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and we hold &mut self.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in `zeroed`, by posix_memalign or mmap of this
        // length.
        unsafe {
            if self.mapped == 0 {
                libc::free(self.ptr.as_ptr() as *mut libc::c_void);
            } else {
                libc::munmap(self.ptr.as_ptr() as *mut libc::c_void, self.mapped);
            }
        }
    }
}

/// OSU fills send buffers with 'a' and receive buffers with 'b' per size.
pub(crate) const SEND_FILL: u8 = b'a';
pub(crate) const RECV_FILL: u8 = b'b';

/// The widest element, bytes.
const MAX_ELEMENT: usize = 8;

/// The value validation writes for `v` in element type `dt` (OSU's
/// multipliers: char 7, int 10, float 2.0; the types OSU has not take
/// those of their kind, wrapping as the type wraps). A narrow float,
/// which no multiple of `v` would keep apart once rounded, carries `v`
/// as its bit pattern, wrapping before the first one that is not a
/// finite number: distinct values for 127 (E4M3) to 32,640 (bfloat16)
/// elements in a row.
fn element(dt: Datatype, v: u64) -> [u8; MAX_ELEMENT] {
    let mut out = [0u8; MAX_ELEMENT];
    match dt {
        Datatype::Char | Datatype::Uint8 => out[0] = v.wrapping_mul(7) as u8,
        Datatype::Int => out[..4].copy_from_slice(&((v as i64).wrapping_mul(10) as i32).to_ne_bytes()),
        Datatype::Uint32 => out[..4].copy_from_slice(&(v.wrapping_mul(10) as u32).to_ne_bytes()),
        Datatype::Int64 | Datatype::Uint64 => out = v.wrapping_mul(10).to_ne_bytes(),
        Datatype::Float => out[..4].copy_from_slice(&(2.0f32 * v as f32).to_ne_bytes()),
        Datatype::Double => out = (2.0f64 * v as f64).to_ne_bytes(),
        Datatype::Half | Datatype::Bfloat16 | Datatype::F8e4m3 | Datatype::F8e5m2 => {
            let f = dt.narrow().expect("a narrow float");
            f.write(f.finite_pattern(v), &mut out)
        }
    }
    out
}

/// How a validation value is written into an element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Encoding {
    /// Times OSU's multiplier for the type (char 7, int 10, float 2.0).
    Osu,
    /// As it is (a char and an int wrap; a narrow float rounds): for the
    /// patterns OSU's multipliers would spoil, since a product, maximum or
    /// minimum of scaled values is not the scaled result.
    Exact,
    /// Divided by this, in the type: an average's result (its division
    /// rounds, so is checked to within [`AVERAGE_ULPS`] in a float type).
    Over(u64),
}

/// How far apart, in units of the last place, an average of floats may
/// be from the exact quotient rounded: NCCL multiplies each input by the
/// reciprocal of the ranks before it sums, in a precision of its choice,
/// so each of the (at most two) inputs an average's check gives weight
/// can round once on its own (nccl-tests allows the same two).
pub(crate) const AVERAGE_ULPS: u64 = 2;

impl Encoding {
    fn element(self, dt: Datatype, v: u64) -> [u8; MAX_ELEMENT] {
        // A float type's element of value x (only they take fractions).
        let float = |x: f64| -> [u8; MAX_ELEMENT] {
            let mut out = [0u8; MAX_ELEMENT];
            match dt.narrow() {
                Some(f) => f.write(f.encode(x), &mut out),
                None if dt == Datatype::Double => out = x.to_ne_bytes(),
                None => out[..4].copy_from_slice(&(x as f32).to_ne_bytes()),
            }
            out
        };
        match self {
            Encoding::Osu => element(dt, v),
            // Integers as they are, wrapping (a u64 past f64's exact range
            // written without the round trip).
            Encoding::Exact if !dt.is_float() => {
                let mut out = [0u8; MAX_ELEMENT];
                match dt.size() {
                    1 => out[0] = v as u8,
                    4 => out[..4].copy_from_slice(&(v as u32).to_ne_bytes()),
                    _ => out = v.to_ne_bytes(),
                }
                out
            }
            Encoding::Exact => float(v as f64),
            // An integer average truncates, as NCCL's.
            Encoding::Over(n) if !dt.is_float() => Encoding::Exact.element(dt, v / n.max(1)),
            Encoding::Over(n) => float(v as f64 / n.max(1) as f64),
        }
    }
}

/// `v` as one element of `dt` (rounded in a float type), in the first
/// bytes: a scalar to hand a library.
pub(crate) fn exact_element(dt: Datatype, v: u64) -> [u8; MAX_ELEMENT] {
    Encoding::Exact.element(dt, v)
}

/// Writes `value(k)` into each element k of `range`.
pub(crate) fn write_values(buf: &mut [u8], dt: Datatype, range: Range<usize>, value: impl Fn(usize) -> u64) {
    write_as(Encoding::Osu, buf, dt, range, value)
}

/// Writes `value(k)`, encoded as `enc` says, into each element k of
/// `range`.
pub(crate) fn write_as(enc: Encoding, buf: &mut [u8], dt: Datatype, range: Range<usize>, value: impl Fn(usize) -> u64) {
    let w = dt.size();
    for k in range {
        buf[k * w..(k + 1) * w].copy_from_slice(&enc.element(dt, value(k))[..w]);
    }
}

/// First element in `range` that differs from `value(k)`. Integers
/// compare exactly; a float or double may be off by 0.001 plus the
/// rounding that a sum of `terms` of them can accumulate; a narrow float
/// must match exactly.
pub(crate) fn check_values(
    buf: &[u8],
    dt: Datatype,
    range: Range<usize>,
    value: impl Fn(usize) -> u64,
    terms: usize,
) -> Option<Mismatch> {
    check_as(Encoding::Osu, buf, dt, range, value, terms)
}

/// [`check_values`] of values written encoded as `enc`; a narrow float
/// written [`Encoding::Over`] (an average) may be [`AVERAGE_ULPS`] away.
pub(crate) fn check_as(
    enc: Encoding,
    buf: &[u8],
    dt: Datatype,
    range: Range<usize>,
    value: impl Fn(usize) -> u64,
    terms: usize,
) -> Option<Mismatch> {
    let w = dt.size();
    let mut first: Option<Mismatch> = None;
    let mut wrong = 0;
    let ulps = if matches!(enc, Encoding::Over(_)) { AVERAGE_ULPS } else { 0 };
    for k in range {
        let want = enc.element(dt, value(k));
        let got = &buf[k * w..(k + 1) * w];
        let ok = match dt {
            Datatype::Float => {
                let a = f32::from_ne_bytes([got[0], got[1], got[2], got[3]]);
                let b = f32::from_ne_bytes([want[0], want[1], want[2], want[3]]);
                (a - b).abs() <= 0.001 + b.abs() * terms as f32 * f32::EPSILON
            }
            Datatype::Double => {
                let a = f64::from_ne_bytes(got.try_into().expect("8 bytes"));
                let b = f64::from_ne_bytes(want);
                (a - b).abs() <= 0.001 + b.abs() * terms as f64 * f64::EPSILON
            }
            Datatype::Half | Datatype::Bfloat16 | Datatype::F8e4m3 | Datatype::F8e5m2 => {
                // Apart by units in the last place: how far apart the bit
                // patterns are (of one sign, as every pattern here).
                let f = dt.narrow().expect("a narrow float");
                u64::from(f.read(got).abs_diff(f.read(&want))) <= ulps
            }
            _ => got == &want[..w],
        };
        if !ok {
            wrong += 1;
            if first.is_none() {
                first = Some(Mismatch { index: k, expected: show(dt, &want), found: show(dt, got), count: 0 });
            }
        }
    }
    first.map(|m| Mismatch { count: wrong, ..m })
}

/// The point-to-point pattern: element k of iteration i carries
/// 7*(k+1) + size + i.
fn pt2pt_value(size: usize, iteration: usize) -> impl Fn(usize) -> u64 {
    move |k| 7 * (k as u64 + 1) + size as u64 + iteration as u64
}

/// Writes the point-to-point validation pattern.
pub(crate) fn fill_pattern(buf: &mut [u8], dt: Datatype, count: usize, size: usize, iteration: usize) {
    write_values(buf, dt, 0..count, pt2pt_value(size, iteration));
}

/// Fills `count` elements with the value validation uses for zero, so a
/// message that never arrives is caught.
pub(crate) fn fill_zero(buf: &mut [u8], dt: Datatype, count: usize) {
    buf[..count * dt.size()].fill(0);
}

/// First element that differs from the pattern.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    pub index: usize,
    pub expected: String,
    pub found: String,
    /// How many elements differ in total.
    pub count: usize,
}

fn show(dt: Datatype, bytes: &[u8]) -> String {
    let four = || [bytes[0], bytes[1], bytes[2], bytes[3]];
    let eight = || -> [u8; 8] { bytes[..8].try_into().expect("8 bytes") };
    match dt {
        Datatype::Char => format!("{}", bytes[0] as i8),
        Datatype::Uint8 => format!("{}", bytes[0]),
        Datatype::Int => format!("{}", i32::from_ne_bytes(four())),
        Datatype::Uint32 => format!("{}", u32::from_ne_bytes(four())),
        Datatype::Float => format!("{}", f32::from_ne_bytes(four())),
        Datatype::Int64 => format!("{}", i64::from_ne_bytes(eight())),
        Datatype::Uint64 => format!("{}", u64::from_ne_bytes(eight())),
        Datatype::Double => format!("{}", f64::from_ne_bytes(eight())),
        Datatype::Half | Datatype::Bfloat16 | Datatype::F8e4m3 | Datatype::F8e5m2 => {
            let f = dt.narrow().expect("a narrow float");
            format!("{}", f.decode(f.read(bytes)))
        }
    }
}

/// Checks a received buffer against the point-to-point pattern, every
/// element.
pub(crate) fn check_pattern(buf: &[u8], dt: Datatype, count: usize, size: usize, iteration: usize) -> Option<Mismatch> {
    check_values(buf, dt, 0..count, pt2pt_value(size, iteration), 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_and_zeroed() {
        let b = AlignedBuf::zeroed(10000).unwrap();
        assert_eq!(b.as_ptr() as usize % PAGE_ALIGN, 0);
        assert!(b.as_slice().iter().all(|&x| x == 0));
        let z = AlignedBuf::zeroed(0).unwrap();
        assert_eq!(z.len(), 0);
        assert!(!z.as_ptr().is_null());
    }

    #[test]
    fn heap_and_mapped_buffers() {
        for len in [1, 4096, MAPPED_ABOVE - 1, MAPPED_ABOVE, 3 * MAPPED_ABOVE + 5] {
            let mut b = AlignedBuf::zeroed(len).unwrap();
            assert_eq!(b.as_ptr() as usize % PAGE_ALIGN, 0);
            assert!(b.as_slice().iter().all(|&x| x == 0));
            b.as_mut_slice()[len - 1] = 7;
        }
    }

    #[test]
    fn huge_allocation_is_an_error() {
        assert!(AlignedBuf::zeroed(usize::MAX / 2).is_err());
    }

    #[test]
    fn pattern_round_trip_each_type() {
        for dt in Datatype::ALL {
            let count = 37;
            let mut b = vec![0u8; count * dt.size()];
            fill_pattern(&mut b, dt, count, 148, 3);
            assert_eq!(check_pattern(&b, dt, count, 148, 3), None, "{dt:?}");
            // a different iteration is a different pattern
            assert!(check_pattern(&b, dt, count, 148, 4).is_some(), "{dt:?}");
        }
    }

    #[test]
    fn char_pattern_values() {
        let mut b = vec![0u8; 2];
        fill_pattern(&mut b, Datatype::Char, 2, 1, 0);
        // element 0: v = 7 + 1 = 8 -> 56; element 1: v = 15 -> 105
        assert_eq!(b, vec![56, 105]);
    }

    #[test]
    fn mismatch_reports_first_and_total() {
        let mut b = vec![0u8; 16];
        fill_pattern(&mut b, Datatype::Int, 4, 16, 0);
        b[8] ^= 1;
        b[12] ^= 1;
        let m = check_pattern(&b, Datatype::Int, 4, 16, 0).unwrap();
        assert_eq!(m.index, 2);
        assert_eq!(m.count, 2);
        assert_eq!(m.expected, format!("{}", (7 * 3 + 16) * 10));
    }

    #[test]
    fn float_sums_tolerate_rounding_not_errors() {
        // a sum of 1000 floats near 2e8 may be off by a few units
        let v = 100_000_000u64;
        let mut b = vec![0u8; 4];
        let want = 2.0f32 * v as f32;
        b.copy_from_slice(&(want + 64.0).to_ne_bytes());
        assert!(check_values(&b, Datatype::Float, 0..1, |_| v, 1000).is_none());
        b.copy_from_slice(&(want * 1.01).to_ne_bytes());
        assert!(check_values(&b, Datatype::Float, 0..1, |_| v, 1000).is_some());
    }

    /// A narrow float is exact but for an average, which may be two units
    /// in the last place away; its pattern values stay apart and finite.
    #[test]
    fn narrow_floats_are_exact_but_for_an_average() {
        for dt in [Datatype::Half, Datatype::Bfloat16, Datatype::F8e4m3, Datatype::F8e5m2] {
            let f = dt.narrow().unwrap();
            let w = dt.size();
            let mut b = vec![0u8; 3 * w];
            write_as(Encoding::Exact, &mut b, dt, 0..3, |k| 2 + k as u64);
            assert_eq!(check_as(Encoding::Exact, &b, dt, 0..3, |k| 2 + k as u64, 4), None, "{dt:?}");
            assert_eq!(show(dt, &b[w..]), "3");
            // One unit off: wrong for a sum, within an average's allowance.
            f.write(f.read(&b[w..]) + 1, &mut b[w..]);
            let m = check_as(Encoding::Exact, &b, dt, 0..3, |k| 2 + k as u64, 4).expect("one unit off");
            assert_eq!((m.index, m.count, m.expected.as_str()), (1, 1, "3"), "{dt:?}");
            // An average of sum 6 over 4 ranks: 1.5, exact in each type.
            write_as(Encoding::Over(4), &mut b, dt, 0..3, |_| 6);
            assert_eq!(f.decode(f.read(&b)), 1.5);
            let exact = f.read(&b);
            for (off, wrong) in [(1, false), (2, false), (3, true)] {
                f.write(exact + off, &mut b[..w]);
                assert_eq!(check_as(Encoding::Over(4), &b, dt, 0..3, |_| 6, 4).is_some(), wrong, "{dt:?} +{off}");
            }
            // The pattern: distinct, finite values element by element.
            let n = 100;
            let mut p = vec![0u8; n * w];
            fill_pattern(&mut p, dt, n, 8, 0);
            let values: std::collections::BTreeSet<u32> = p.chunks(w).map(|e| f.read(e)).collect();
            assert_eq!(values.len(), n, "{dt:?}");
            assert!(values.iter().all(|&v| f.decode(v).is_finite()));
            assert_eq!(check_pattern(&p, dt, n, 8, 0), None);
            assert!(check_pattern(&p, dt, n, 8, 1).is_some());
        }
    }

    #[test]
    fn char_sums_wrap_like_two_complement() {
        // four ranks each contributing 7*50 mod 256 sum to 7*200 mod 256
        let mut b = vec![0u8; 1];
        let part = (7u32 * 50 % 256) as u8;
        b[0] = part.wrapping_mul(4);
        assert!(check_values(&b, Datatype::Char, 0..1, |_| 200, 4).is_none());
        b[0] = 127; // a saturating sum
        let m = check_values(&b, Datatype::Char, 0..1, |_| 200, 4).unwrap();
        assert_eq!((m.expected.as_str(), m.found.as_str()), ("120", "127"));
    }

    #[test]
    fn float_tolerance() {
        let mut b = vec![0u8; 4];
        fill_pattern(&mut b, Datatype::Float, 1, 4, 0);
        let v = f32::from_ne_bytes([b[0], b[1], b[2], b[3]]);
        b.copy_from_slice(&(v + 0.0005).to_ne_bytes());
        assert!(check_pattern(&b, Datatype::Float, 1, 4, 0).is_none());
        b.copy_from_slice(&(v + 0.5).to_ne_bytes());
        assert!(check_pattern(&b, Datatype::Float, 1, 4, 0).is_some());
    }
}
