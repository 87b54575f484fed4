//! nccl-tests' checkable data ([`crate::datatype::verifiable`]) in a
//! buffer: stretches of it written, and a received buffer checked against
//! the stretches it must hold, every element, wrong ones counted. Large
//! stretches are split over the host's cores: the values are hashed
//! element by element (and an integer reduction's expected value sums
//! every rank's input), where nccl-tests runs the same on the GPU.

use std::ops::Range;

use super::{show, Mismatch};
use crate::datatype::verifiable::{self, Stream};
use crate::datatype::{Datatype, Reduction};

/// `count` elements from element `at` of a buffer: the inputs `stream`
/// gives indices `first..` (with `output`, what reducing every rank's
/// inputs at those indices gives).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Stretch {
    pub at: usize,
    pub count: usize,
    pub first: u64,
    pub stream: Stream,
    pub output: bool,
}

impl Stretch {
    /// Element `k` of the stretch (0-based) as bits of a `dt`.
    fn value(&self, dt: Datatype, op: Reduction, k: usize) -> u64 {
        let index = self.first + k as u64;
        if self.output {
            verifiable::output(dt, op, self.stream.rank_n, self.stream.seed, index)
        } else {
            verifiable::input(dt, op, self.stream, index)
        }
    }
}

/// Below this many elements a stretch is done on the calling thread.
const SPLIT_ABOVE: usize = 1 << 16;

/// Elements per part of `n`: one part per core, none under
/// [`SPLIT_ABOVE`] elements (so a small `n` is one part).
fn part_len(n: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    n.div_ceil(cores).max(SPLIT_ABOVE)
}

/// `f` over `0..n` in contiguous parts ([`part_len`]); the parts'
/// results in order.
fn in_parts<R: Send>(n: usize, f: impl Fn(Range<usize>) -> R + Sync) -> Vec<R> {
    let part = part_len(n);
    if part >= n {
        return vec![f(0..n)];
    }
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .step_by(part)
            .map(|a| {
                s.spawn({
                    let f = &f;
                    move || f(a..(a + part).min(n))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("a data part")).collect()
    })
}

/// Writes stretch `s` of type `dt` values for operation `op` into `buf`.
pub(crate) fn write(buf: &mut [u8], dt: Datatype, op: Reduction, s: &Stretch) {
    let w = dt.size();
    let bytes = &mut buf[s.at * w..(s.at + s.count) * w];
    let part = part_len(s.count);
    let fill = |first: usize, chunk: &mut [u8]| {
        for (k, e) in chunk.chunks_exact_mut(w).enumerate() {
            e.copy_from_slice(&s.value(dt, op, first + k).to_le_bytes()[..w]);
        }
    };
    if part >= s.count {
        return fill(0, bytes);
    }
    std::thread::scope(|sc| {
        for (p, chunk) in bytes.chunks_mut(part * w).enumerate() {
            let fill = &fill;
            sc.spawn(move || fill(p * part, chunk));
        }
    });
}

/// Checks elements `range` of `buf`: each stretch of `expect` (inside the
/// range) must hold its values, within nccl-tests' tolerance for the type
/// and operation, and every other element zero. The first wrong element
/// and how many are wrong.
pub(crate) fn check(
    buf: &[u8],
    dt: Datatype,
    op: Reduction,
    range: Range<usize>,
    expect: &[Stretch],
) -> Option<Mismatch> {
    let w = dt.size();
    let tolerance = verifiable::tolerance(dt, op);
    // In buffer order, so that each part walks them with one cursor
    // (an all-to-all has a stretch per rank).
    let mut stretches: Vec<&Stretch> = expect.iter().collect();
    stretches.sort_by_key(|s| s.at);
    let start = range.start;
    let parts = in_parts(range.len(), |part| {
        let mut first: Option<Mismatch> = None;
        let mut wrong = 0;
        let ks = part.start + start..part.end + start;
        let mut at = stretches.partition_point(|s| s.at + s.count <= ks.start);
        for k in ks {
            while stretches.get(at).is_some_and(|s| s.at + s.count <= k) {
                at += 1;
            }
            let expected = match stretches.get(at) {
                Some(s) if s.at <= k => s.value(dt, op, k - s.at),
                _ => 0,
            };
            let got = &buf[k * w..(k + 1) * w];
            let mut bits = [0u8; 8];
            bits[..w].copy_from_slice(got);
            if u64::from_le_bytes(bits).abs_diff(expected) > tolerance {
                wrong += 1;
                if first.is_none() {
                    let e = expected.to_le_bytes();
                    first = Some(Mismatch { index: k, expected: show(dt, &e[..w]), found: show(dt, got), count: 0 });
                }
            }
        }
        (first, wrong)
    });
    let wrong: usize = parts.iter().map(|(_, n)| n).sum();
    let first = parts.into_iter().find_map(|(m, _)| m)?;
    Some(Mismatch { count: wrong, ..first })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stretch(at: usize, count: usize, first: u64, rank_n: usize, rank_me: usize, output: bool) -> Stretch {
        Stretch { at, count, first, stream: Stream { seed: 7, rank_n, rank_me }, output }
    }

    /// A stretch written element by element and split over cores give the
    /// same bytes; a check finds none wrong, then every changed element,
    /// and an element outside the stretches must stay zero.
    #[test]
    fn written_stretches_check_and_changes_are_counted() {
        for dt in [Datatype::Float, Datatype::Half, Datatype::Uint64, Datatype::Char] {
            let n = 3 * SPLIT_ABOVE + 5;
            let w = dt.size();
            let mut buf = vec![0u8; (n + 10) * w];
            let s = stretch(4, n, 1000, 1, 0, false);
            write(&mut buf, dt, Reduction::Sum, &s);
            for k in [0, 1, SPLIT_ABOVE, n - 1] {
                let want = verifiable::input(dt, Reduction::Sum, s.stream, 1000 + k as u64);
                let mut b = [0u8; 8];
                b[..w].copy_from_slice(&buf[(4 + k) * w..(5 + k) * w]);
                assert_eq!(u64::from_le_bytes(b), want, "{dt:?} {k}");
            }
            assert_eq!(check(&buf, dt, Reduction::Sum, 0..n + 10, &[s]), None, "{dt:?}");
            buf[(4 + 2 * SPLIT_ABOVE) * w] ^= 0x40;
            buf[(n + 6) * w] = 1;
            let m = check(&buf, dt, Reduction::Sum, 0..n + 10, &[s]).expect("two wrong");
            assert_eq!((m.index, m.count), (4 + 2 * SPLIT_ABOVE, 2), "{dt:?}");
        }
    }

    /// The expected output of a reduction over ranks is what the check
    /// wants; an average of floats may be off by two units.
    #[test]
    fn an_average_of_floats_is_allowed_two_units() {
        let dt = Datatype::Float;
        let mut buf = vec![0u8; 4 * 4];
        let out = stretch(0, 4, 0, 3, 0, true);
        write(&mut buf, dt, Reduction::Avg, &out);
        let bump = |buf: &mut Vec<u8>, by: u32| {
            let v = u32::from_le_bytes(buf[0..4].try_into().unwrap()) + by;
            buf[0..4].copy_from_slice(&v.to_le_bytes());
        };
        bump(&mut buf, 2);
        assert_eq!(check(&buf, dt, Reduction::Avg, 0..4, &[out]), None);
        bump(&mut buf, 1);
        assert_eq!(check(&buf, dt, Reduction::Avg, 0..4, &[out]).map(|m| m.count), Some(1));
        assert_eq!(check(&buf, dt, Reduction::Sum, 0..4, &[stretch(0, 4, 0, 3, 0, true)]).map(|m| m.index), Some(0));
    }
}
