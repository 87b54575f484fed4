//! osu_reduce: MPI_Reduce with MPI_SUM to a fixed root (`-k fixed:R`,
//! default 0) or one that rotates with the iteration (`-k rotate`). OSU
//! synchronises before each call, not after. busbw = algbw.

use crate::backend::Collectives;
use crate::bench::collective::{
    check_reduction, fill_reduction, inputs, reduced, Call, Collective, Ranks, Sync, Verifiable,
};
use crate::bench::needs;
use crate::bench::SizeCase;
use crate::buffer::Mismatch;
use crate::report::nccl_tests::Collective as Nccl;
use crate::spec::{BenchSpec, Op};

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_reduce",
    title: "OSU MPI Reduce Latency Test",
    letters: "hvfmixMacuGPTIlzk",
    ..crate::bench::collective::allreduce::SPEC
};

pub struct Reduce;

impl Collective for Reduce {
    const SPEC: &'static BenchSpec = &SPEC;
    const OP: Op = Op::Reduce;
    type Needs = needs::Collectives;

    fn new(_np: usize) -> Self {
        Reduce
    }

    fn buffer_bytes(&self, size: usize, _np: usize) -> (usize, usize) {
        (size, size)
    }

    /// In place, the root reduces into its receive buffer and the other
    /// ranks send from theirs.
    fn sync(&self) -> Sync {
        Sync::Before
    }

    fn bandwidth(&self, size: usize, np: usize) -> Option<(f64, f64)> {
        Some((size as f64, Nccl::Reduce.bus_factor(np)))
    }

    fn fill(&self, send: &mut [u8], recv: &mut [u8], case: &SizeCase, job: &Ranks, i: usize) {
        fill_reduction(send, recv, case, job, i);
    }

    /// Only the root of the iteration holds the result.
    fn check(&self, recv: &[u8], case: &SizeCase, job: &Ranks, i: usize) -> Option<Mismatch> {
        if job.rank != job.root_of(i) {
            return None;
        }
        check_reduction(recv, case, job, i, 0, case.count)
    }

    /// nccl-tests' data: every rank's input reduced at the root; the
    /// others' receive buffers as they were (in place: the input).
    fn verifiable(&self, case: &SizeCase, job: &Ranks, i: usize) -> Option<Verifiable> {
        let (c, s) = (case.count, job.reduction_stream(i));
        let expect = if job.rank == job.root_of(i) {
            vec![reduced(0, c, 0, s)]
        } else if job.in_place {
            vec![inputs(0, c, 0, s)]
        } else {
            Vec::new()
        };
        Some(Verifiable::reducing(job.reduction, vec![inputs(0, c, 0, s)], job.in_place, 0..c, expect))
    }
}

impl<T: Collectives> Call<T> for Reduce {
    #[inline(always)]
    fn call(&self, t: &T, send: &T::Buf, recv: &mut T::Buf, case: &SizeCase, job: &Ranks, i: usize) {
        t.reduce(job.operands(send, recv), case.count, case.datatype, job.reduction, job.root_of(i));
    }
}
