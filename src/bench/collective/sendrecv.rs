//! sendrecv (nccl-tests' `sendrecv_perf`; OSU has no twin): every rank
//! sends `size` bytes to the next rank and receives `size` bytes from the
//! previous one, at once, around the ring of all ranks. One rank sends to
//! itself. algbw counts the size; busbw = algbw (one link carries it).
//! Not in [`crate::bench::BENCHMARKS`] (the OSU suite): only the
//! nccl-tests front end runs it.

use crate::backend::Collectives;
use crate::bench::collective::{inputs, Call, Collective, Ranks, Verifiable};
use crate::bench::needs;
use crate::bench::SizeCase;
use crate::buffer::{check_values, fill_zero, write_values, Mismatch};
use crate::report::nccl_tests::Collective as Nccl;
use crate::spec::{BenchSpec, Op};

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "sendrecv",
    title: "Ring send and receive (nccl-tests' sendrecv)",
    ..crate::bench::collective::allreduce::SPEC
};

pub struct SendRecv;

/// The value of element `k` that rank `from` sends in iteration `i`: a
/// block from the wrong rank, of the wrong iteration or shifted by an
/// element reads differently.
fn ring_value(from: usize, k: usize, i: usize) -> u64 {
    (from as u64 + 1) * (i as u64 + 1) * 3 + (k % 61) as u64
}

impl Collective for SendRecv {
    const SPEC: &'static BenchSpec = &SPEC;
    const OP: Op = Op::SendRecv;
    type Needs = needs::Collectives;

    fn new(_np: usize) -> Self {
        SendRecv
    }

    fn buffer_bytes(&self, size: usize, _np: usize) -> (usize, usize) {
        (size, size)
    }

    /// nccl-tests leaves an in-place sendrecv unchecked (`N/A`): over a
    /// grouped send and receive of one buffer its result is undefined.
    fn in_place_checked(&self) -> bool {
        false
    }

    fn bandwidth(&self, size: usize, np: usize) -> Option<(f64, f64)> {
        Some((size as f64, Nccl::SendRecv.bus_factor(np)))
    }

    fn fill(&self, send: &mut [u8], recv: &mut [u8], case: &SizeCase, job: &Ranks, i: usize) {
        let (c, dt, me) = (case.count, case.datatype, job.rank);
        let input = if job.in_place { &mut *recv } else { &mut *send };
        write_values(input, dt, 0..c, |k| ring_value(me, k, i));
        if !job.in_place {
            fill_zero(recv, dt, c);
        }
    }

    /// The block came from the previous rank.
    fn check(&self, recv: &[u8], case: &SizeCase, job: &Ranks, i: usize) -> Option<Mismatch> {
        let (_, prev) = crate::backend::ring_neighbours(job.rank, job.np);
        check_values(recv, case.datatype, 0..case.count, |k| ring_value(prev, k, i), 1)
    }

    /// nccl-tests' data: rank r sends block r of one stream to the next
    /// rank, so each receives its previous rank's block.
    fn verifiable(&self, case: &SizeCase, job: &Ranks, i: usize) -> Option<Verifiable> {
        let (c, s) = (case.count, Ranks::shared_stream(i));
        let (_, prev) = crate::backend::ring_neighbours(job.rank, job.np);
        let input = vec![inputs(0, c, (job.rank * c) as u64, s)];
        Some(Verifiable::mover(input, job.in_place, 0..c, vec![inputs(0, c, (prev * c) as u64, s)]))
    }
}

impl<T: Collectives> Call<T> for SendRecv {
    #[inline(always)]
    fn call(&self, t: &T, send: &T::Buf, recv: &mut T::Buf, case: &SizeCase, job: &Ranks, _i: usize) {
        t.sendrecv(job.operands(send, recv), case.count, case.datatype);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_reads_as_its_sender_iteration_and_place() {
        let v = ring_value(2, 5, 0);
        assert_ne!(v, ring_value(1, 5, 0));
        assert_ne!(v, ring_value(2, 5, 1));
        assert_ne!(v, ring_value(2, 6, 0));
        // Small enough for a char in the first iterations of a few ranks.
        assert!(ring_value(3, 60, 3) < 128);
    }
}
