//! osu_allreduce: MPI_Allreduce with MPI_SUM; every rank gets the sum.
//! busbw = algbw * 2(n-1)/n.

use crate::backend::Collectives;
use crate::bench::collective::{check_reduction, fill_reduction, inputs, reduced, Call, Collective, Ranks, Verifiable};
use crate::bench::needs;
use crate::bench::SizeCase;
use crate::buffer::Mismatch;
use crate::report::nccl_tests::Collective as Nccl;
use crate::spec::{BenchSpec, MetricKind, Op, ProcRule, COLL_ITERS};

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_allreduce",
    title: "OSU MPI Allreduce Latency Test",
    letters: "hvfmixMacuGPTIlz",
    procs: ProcRule::AtLeastTwo,
    metric: MetricKind::Collective,
    defaults: COLL_ITERS,
    large_switch: true,
    min_size: 1,
    max_size: 1 << 20,
    accel_slot: true,
    ..BenchSpec::DEFAULT
};

pub struct Allreduce;

impl Collective for Allreduce {
    const SPEC: &'static BenchSpec = &SPEC;
    const OP: Op = Op::Allreduce;
    type Needs = needs::Collectives;

    fn new(_np: usize) -> Self {
        Allreduce
    }

    fn buffer_bytes(&self, size: usize, _np: usize) -> (usize, usize) {
        (size, size)
    }

    fn bandwidth(&self, size: usize, np: usize) -> Option<(f64, f64)> {
        Some((size as f64, Nccl::AllReduce.bus_factor(np)))
    }

    fn fill(&self, send: &mut [u8], recv: &mut [u8], case: &SizeCase, job: &Ranks, i: usize) {
        fill_reduction(send, recv, case, job, i);
    }

    fn check(&self, recv: &[u8], case: &SizeCase, job: &Ranks, i: usize) -> Option<Mismatch> {
        check_reduction(recv, case, job, i, 0, case.count)
    }

    /// nccl-tests' data: every rank's input reduced, at every rank.
    fn verifiable(&self, case: &SizeCase, job: &Ranks, i: usize) -> Option<Verifiable> {
        let (c, s) = (case.count, job.reduction_stream(i));
        Some(Verifiable::reducing(
            job.reduction,
            vec![inputs(0, c, 0, s)],
            job.in_place,
            0..c,
            vec![reduced(0, c, 0, s)],
        ))
    }
}

impl<T: Collectives> Call<T> for Allreduce {
    #[inline(always)]
    fn call(&self, t: &T, send: &T::Buf, recv: &mut T::Buf, case: &SizeCase, job: &Ranks, _i: usize) {
        t.allreduce(job.operands(send, recv), case.count, case.datatype, job.reduction);
    }
}
