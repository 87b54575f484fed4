//! osu_iallreduce: MPI_Iallreduce with MPI_SUM, timed by OSU's overlap
//! method (see [`super::nonblocking`]); buffers, fills and checks are
//! osu_allreduce's.

use super::allreduce::Allreduce;
use super::collective::Job;
use super::nonblocking::{nonblocking_bench, NonBlocking};
use super::spec::{BenchSpec, MetricKind, NBC_ITERS};
use super::SizeCase;
use crate::backend::Collectives;

pub const SPEC: BenchSpec = BenchSpec {
    name: "osu_iallreduce",
    title: "OSU MPI Non-blocking Allreduce Latency Test",
    letters: "hvfmixMtacuGPTIlz",
    metric: MetricKind::Overlap,
    defaults: NBC_ITERS,
    ..super::allreduce::SPEC
};

pub struct Iallreduce;

impl NonBlocking for Iallreduce {
    const SPEC: &'static BenchSpec = &SPEC;
    type Blocking = Allreduce;

    #[inline(always)]
    unsafe fn start<T: Collectives>(
        _c: &Allreduce,
        t: &T,
        send: &T::Buf,
        recv: &mut T::Buf,
        case: &SizeCase,
        job: &Job,
        _i: usize,
    ) {
        // SAFETY: passed on from the caller.
        unsafe { t.iallreduce_sum(job.operands(send, recv), case.count, case.datatype) };
    }
}

nonblocking_bench!(Iallreduce);
