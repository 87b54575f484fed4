//! osu_ialltoall: MPI_Ialltoall, size bytes from every rank to each rank, timed by OSU's overlap method (see
//! [`super::nonblocking`]); buffers, fills and checks are
//! osu_alltoall's.

use super::alltoall::Alltoall;
use super::collective::Job;
use super::nonblocking::{nonblocking_bench, NonBlocking};
use super::spec::{BenchSpec, MetricKind, NBC_ITERS};
use super::SizeCase;
use crate::backend::Collectives;

pub const SPEC: BenchSpec = BenchSpec {
    name: "osu_ialltoall",
    title: "OSU MPI Non-blocking All-to-All Latency Test",
    letters: "hvfmixMtacuGDPTIlz",
    metric: MetricKind::Overlap,
    defaults: NBC_ITERS,
    ..super::alltoall::SPEC
};

pub struct Ialltoall;

impl NonBlocking for Ialltoall {
    const SPEC: &'static BenchSpec = &SPEC;
    type Blocking = Alltoall;

    #[inline(always)]
    unsafe fn start<T: Collectives>(
        _c: &Alltoall,
        t: &T,
        send: &T::Buf,
        recv: &mut T::Buf,
        case: &SizeCase,
        job: &Job,
        _i: usize,
    ) {
        // SAFETY: passed on from the caller.
        unsafe { t.ialltoall(job.operands(send, recv), case.count, case.datatype) };
    }
}

nonblocking_bench!(Ialltoall);
