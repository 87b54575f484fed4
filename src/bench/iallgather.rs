//! osu_iallgather: MPI_Iallgather of size bytes from every rank to every rank, timed by OSU's overlap method (see
//! [`super::nonblocking`]); buffers, fills and checks are
//! osu_allgather's.

use super::allgather::Allgather;
use super::collective::Job;
use super::nonblocking::{nonblocking_bench, NonBlocking};
use super::spec::{BenchSpec, MetricKind, NBC_ITERS};
use super::SizeCase;
use crate::backend::Collectives;

pub const SPEC: BenchSpec = BenchSpec {
    name: "osu_iallgather",
    title: "OSU MPI Non-blocking Allgather Latency Test",
    letters: "hvfmixMtacuGDPTIlz",
    metric: MetricKind::Overlap,
    defaults: NBC_ITERS,
    ..super::allgather::SPEC
};

pub struct Iallgather;

impl NonBlocking for Iallgather {
    const SPEC: &'static BenchSpec = &SPEC;
    type Blocking = Allgather;

    #[inline(always)]
    unsafe fn start<T: Collectives>(
        _c: &Allgather,
        t: &T,
        send: &T::Buf,
        recv: &mut T::Buf,
        case: &SizeCase,
        job: &Job,
        _i: usize,
    ) {
        // SAFETY: passed on from the caller.
        unsafe { t.iallgather(job.operands(send, recv), case.count, case.datatype) };
    }
}

nonblocking_bench!(Iallgather);
