//! osu_reduce_scatter_block: MPI_Reduce_scatter_block with MPI_SUM over
//! a vector of n = size / element-size elements, each rank keeping
//! n / np of the result, as OSU calls it (the n mod np elements left over
//! take part in no call; below np elements the blocks are empty). busbw =
//! algbw * (n-1)/n, with algbw counting the size, as for
//! osu_reduce_scatter.
//!
//! OSU checks a rank's block only when n > np; every non-empty block is
//! checked here.

use crate::backend::VectorCollectives;
use crate::bench::collective::{check_reduction, fill_reduction, Call, Collective, Ranks};
use crate::bench::needs;
use crate::bench::SizeCase;
use crate::buffer::Mismatch;
use crate::report::nccl_tests::Collective as Nccl;
use crate::spec::{BenchSpec, Op};

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_reduce_scatter_block",
    title: "OSU MPI Reduce_scatter_block Latency Test",
    ..crate::bench::collective::reduce_scatter::SPEC
};

pub struct ReduceScatterBlock {
    /// Elements each rank keeps at the current size.
    block: usize,
}

impl ReduceScatterBlock {
    /// Elements each rank keeps at the current size.
    pub fn block(&self) -> usize {
        self.block
    }
}

impl Collective for ReduceScatterBlock {
    const SPEC: &'static BenchSpec = &SPEC;
    const OP: Op = Op::ReduceScatterBlock;
    type Needs = needs::VectorCollectives;

    fn new(_np: usize) -> Self {
        ReduceScatterBlock { block: 0 }
    }

    /// In place, the receive buffer holds the whole input vector.
    fn buffer_bytes(&self, size: usize, _np: usize) -> (usize, usize) {
        (size, size)
    }

    fn prepare(&mut self, case: &SizeCase, job: &Ranks) {
        self.block = case.count / job.np;
    }

    fn bandwidth(&self, size: usize, np: usize) -> Option<(f64, f64)> {
        Some((size as f64, Nccl::ReduceScatter.bus_factor(np)))
    }

    fn fill(&self, send: &mut [u8], recv: &mut [u8], case: &SizeCase, job: &Ranks, i: usize) {
        fill_reduction(send, recv, case, job, i);
    }

    /// Element l of this rank's result is element rank * block + l of the
    /// summed vector.
    fn check(&self, recv: &[u8], case: &SizeCase, job: &Ranks, i: usize) -> Option<Mismatch> {
        check_reduction(recv, case, job, i, job.rank * self.block, self.block)
    }
}

impl<T: VectorCollectives> Call<T> for ReduceScatterBlock {
    #[inline(always)]
    fn call(&self, t: &T, send: &T::Buf, recv: &mut T::Buf, case: &SizeCase, job: &Ranks, _i: usize) {
        t.reduce_scatter_block_sum(job.operands(send, recv), self.block, case.datatype);
    }
}
