//! What `-c` expects of the atomics (osu_acc_latency, osu_fop_latency,
//! osu_cas_latency) after each iteration.
//!
//! Before every iteration, untimed, each rank writes its own value into
//! its window and its origin buffer: rank r's value is r + 1, written as a
//! typed element by [`crate::buffer::write_values`], so that a sum of two
//! values is the sum of their elements in every type. Refilling keeps the
//! values small: a sum carried over thousands of iterations would overflow
//! MPI_CHAR, and MPIs differ on what an overflowing MPI_SUM gives (Open
//! MPI's vectorised sum saturates where its scalar one wraps).
//!
//! - accumulate and fetch_and_op (MPI_SUM) add the acting rank's value to
//!   each element: the window then holds own + peer, and fetch_and_op
//!   brings back the target's value;
//! - compare_and_swap's comparand is the target's value at even
//!   iterations (it swaps: the window then holds the acting rank's value)
//!   and the acting rank's own at odd ones (it does not: the window keeps
//!   its value), so that both outcomes are checked; either way it brings
//!   back the target's value.
//!
//! Which ranks act: rank 0 always; rank 1 too in an active-target latency
//! (fence, pscw), where each iteration is a round trip. A rank whose
//! window nobody updates must find its own value unchanged.

use super::Op;

/// One rank's expectations for one benchmark and synchronisation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Expect {
    pub op: Op,
    /// This rank's value and its peer's (rank + 1).
    pub own: u64,
    pub peer: u64,
    /// This rank updates its peer's window.
    pub acts: bool,
    /// The peer updates this rank's window.
    pub updated: bool,
}

impl Expect {
    /// For `rank` of two; `round_trip` when both ranks act (an
    /// active-target latency).
    pub fn new(op: Op, rank: usize, round_trip: bool) -> Expect {
        Expect {
            op,
            own: value(rank),
            peer: value(1 - rank),
            acts: rank == 0 || round_trip,
            updated: rank == 1 || round_trip,
        }
    }

    /// Whether `-c` can check `op`: the atomics OSU validates.
    pub fn checks(op: Op) -> bool {
        matches!(op, Op::Accumulate | Op::FetchAndOp | Op::CompareAndSwap)
    }

    /// compare_and_swap's comparand at iteration `i`: the target's value
    /// (a swap) at even iterations, this rank's own at odd ones.
    pub(crate) fn comparand(&self, i: usize) -> u64 {
        if i % 2 == 0 {
            self.peer
        } else {
            self.own
        }
    }

    /// Each checked element of this rank's window after iteration `i`.
    pub fn window(&self, i: usize) -> u64 {
        if !self.updated {
            return self.own;
        }
        match self.op {
            // The peer's comparand is this rank's value at even iterations.
            Op::CompareAndSwap if i % 2 == 0 => self.peer,
            Op::CompareAndSwap => self.own,
            _ => self.own + self.peer,
        }
    }

    /// The element fetched back, where this rank fetches: the target's
    /// value before the operation.
    pub(crate) fn fetched(&self) -> Option<u64> {
        (self.acts && matches!(self.op, Op::FetchAndOp | Op::CompareAndSwap)).then_some(self.peer)
    }
}

/// Rank `rank`'s value.
pub fn value(rank: usize) -> u64 {
    rank as u64 + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_add_the_acting_ranks_value() {
        for op in [Op::Accumulate, Op::FetchAndOp] {
            let target = Expect::new(op, 1, false);
            assert_eq!([0, 9].map(|i| target.window(i)), [3, 3]);
            let origin = Expect::new(op, 0, false);
            assert_eq!(origin.window(4), 1, "nobody updates a passive origin's window");
            // A round trip updates both windows.
            assert_eq!(Expect::new(op, 0, true).window(0), 3);
        }
        assert_eq!(Expect::new(Op::Accumulate, 0, false).fetched(), None);
        assert_eq!(Expect::new(Op::FetchAndOp, 0, false).fetched(), Some(2));
        assert_eq!(Expect::new(Op::FetchAndOp, 1, false).fetched(), None, "the passive target fetches nothing");
        assert_eq!(Expect::new(Op::FetchAndOp, 1, true).fetched(), Some(1));
    }

    #[test]
    fn compare_and_swap_swaps_at_even_iterations() {
        let origin = Expect::new(Op::CompareAndSwap, 0, false);
        assert_eq!([0, 1].map(|i| origin.comparand(i)), [2, 1]);
        assert_eq!(origin.fetched(), Some(2));
        let target = Expect::new(Op::CompareAndSwap, 1, false);
        assert_eq!([0, 1, 2].map(|i| target.window(i)), [1, 2, 1]);
        let back = Expect::new(Op::CompareAndSwap, 1, true);
        assert_eq!((back.comparand(0), back.comparand(1), back.fetched()), (1, 2, Some(1)));
        assert_eq!([0, 1].map(|i| Expect::new(Op::CompareAndSwap, 0, true).window(i)), [2, 1]);
    }

    #[test]
    fn only_the_atomics_are_checked() {
        let checked = [Op::Put, Op::Get, Op::Accumulate, Op::FetchAndOp, Op::CompareAndSwap, Op::GetAccumulate]
            .map(Expect::checks);
        assert_eq!(checked, [false, false, true, true, true, false]);
    }
}
