//! osu_ibcast: MPI_Ibcast of size bytes from rank 0, timed by OSU's overlap method (see
//! [`super::nonblocking`]); buffers, fills and checks are
//! osu_bcast's.

use super::bcast::Bcast;
use super::collective::Job;
use super::nonblocking::{nonblocking_bench, NonBlocking};
use super::spec::{BenchSpec, MetricKind, NBC_ITERS};
use super::SizeCase;
use crate::backend::Collectives;

pub const SPEC: BenchSpec = BenchSpec {
    name: "osu_ibcast",
    title: "OSU MPI Non-Blocking Broadcast Latency Test",
    letters: "hvfmixMtacuGDPTIz",
    metric: MetricKind::Overlap,
    defaults: NBC_ITERS,
    ..super::bcast::SPEC
};

pub struct Ibcast;

impl NonBlocking for Ibcast {
    const SPEC: &'static BenchSpec = &SPEC;
    type Blocking = Bcast;

    #[inline(always)]
    unsafe fn start<T: Collectives>(
        _c: &Bcast,
        t: &T,
        send: &T::Buf,
        recv: &mut T::Buf,
        case: &SizeCase,
        job: &Job,
        _i: usize,
    ) {
        let _ = (send, job);
        // SAFETY: passed on from the caller.
        unsafe { t.ibcast(recv, case.count, case.datatype, 0) };
    }
}

nonblocking_bench!(Ibcast);
