//! osu_reduce_scatter: MPI_Reduce_scatter with MPI_SUM over a vector of
//! size / element-size elements, split as OSU does: n / np each, the
//! first n mod np ranks one more (one each for the first n ranks when
//! n < np). busbw = algbw * (n-1)/n.

use crate::backend::Collectives;
use crate::bench::collective::{check_reduction, fill_reduction, inputs, reduced, Call, Collective, Ranks, Verifiable};
use crate::bench::needs;
use crate::bench::SizeCase;
use crate::buffer::Mismatch;
use crate::report::nccl_tests::Collective as Nccl;
use crate::spec::{BenchSpec, Op};

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_reduce_scatter",
    title: "OSU MPI Reduce_scatter Latency Test",
    ..crate::bench::collective::allreduce::SPEC
};

pub struct ReduceScatter {
    counts: Vec<i32>,
}

impl ReduceScatter {
    /// Elements each rank keeps at the current size (osu_ireduce_scatter
    /// passes them on).
    pub fn counts(&self) -> &[i32] {
        &self.counts
    }
}

/// Elements each rank receives out of `n`.
pub(crate) fn recv_counts(n: usize, np: usize) -> Vec<i32> {
    (0..np).map(|r| (n / np + usize::from(r < n % np)) as i32).collect()
}

impl ReduceScatter {
    /// This rank's block: first element and length.
    fn block(&self, rank: usize) -> (usize, usize) {
        let start = self.counts[..rank].iter().map(|&c| c as usize).sum();
        (start, self.counts[rank] as usize)
    }
}

impl Collective for ReduceScatter {
    const SPEC: &'static BenchSpec = &SPEC;
    const OP: Op = Op::ReduceScatter;
    type Needs = needs::Collectives;

    fn new(_np: usize) -> Self {
        ReduceScatter { counts: Vec::new() }
    }

    /// In place, the receive buffer holds the whole input vector.
    fn buffer_bytes(&self, size: usize, _np: usize) -> (usize, usize) {
        (size, size)
    }

    fn prepare(&mut self, case: &SizeCase, job: &Ranks) {
        self.counts = recv_counts(case.count, job.np);
    }

    fn bandwidth(&self, size: usize, np: usize) -> Option<(f64, f64)> {
        Some((size as f64, Nccl::ReduceScatter.bus_factor(np)))
    }

    fn fill(&self, send: &mut [u8], recv: &mut [u8], case: &SizeCase, job: &Ranks, i: usize) {
        fill_reduction(send, recv, case, job, i);
    }

    /// Element l of this rank's result is element start + l of the summed
    /// vector; in place it sits at the start of the buffer (MPI), or where
    /// the rank's block was (NCCL).
    fn check(&self, recv: &[u8], case: &SizeCase, job: &Ranks, i: usize) -> Option<Mismatch> {
        let (start, len) = self.block(job.rank);
        let at = if job.in_place && job.result_at_own_block { start * case.datatype.size() } else { 0 };
        check_reduction(recv.get(at..).unwrap_or_default(), case, job, i, start, len)
    }

    /// nccl-tests' data: every rank's whole input reduced, each rank
    /// keeping its block (in place with NCCL: where the block lies).
    fn verifiable(&self, case: &SizeCase, job: &Ranks, i: usize) -> Option<Verifiable> {
        let s = job.reduction_stream(i);
        let (start, len) = self.block(job.rank);
        let at = if job.in_place && job.result_at_own_block { start } else { 0 };
        let input = vec![inputs(0, case.count, 0, s)];
        let expect = vec![reduced(at, len, start as u64, s)];
        Some(Verifiable::reducing(job.reduction, input, job.in_place, at..at + len, expect))
    }
}

impl<T: Collectives> Call<T> for ReduceScatter {
    #[inline(always)]
    fn call(&self, t: &T, send: &T::Buf, recv: &mut T::Buf, case: &SizeCase, job: &Ranks, _i: usize) {
        t.reduce_scatter(job.operands(send, recv), &self.counts, case.datatype, job.reduction);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn osu_split() {
        assert_eq!(recv_counts(10, 4), vec![3, 3, 2, 2]);
        assert_eq!(recv_counts(2, 4), vec![1, 1, 0, 0]);
        assert_eq!(recv_counts(8, 4), vec![2, 2, 2, 2]);
        let rs = ReduceScatter { counts: recv_counts(10, 4) };
        assert_eq!(rs.block(0), (0, 3));
        assert_eq!(rs.block(3), (8, 2));
    }
}
