//! osu_ialltoall: MPI_Ialltoall, size bytes from every rank to each rank, timed by OSU's overlap method (see
//! [`super::nonblocking`]); buffers, fills and checks are
//! osu_alltoall's.

use super::alltoall::Alltoall;
use super::nonblocking::nonblocking_collective;
use super::spec::{BenchSpec, MetricKind, NBC_ITERS};

pub const SPEC: BenchSpec = BenchSpec {
    name: "osu_ialltoall",
    title: "OSU MPI Non-blocking All-to-All Latency Test",
    letters: "hvfmixMtacuGDPTIlz",
    metric: MetricKind::Overlap,
    defaults: NBC_ITERS,
    ..super::alltoall::SPEC
};

nonblocking_collective!(Ialltoall over Alltoall, SPEC, |c, t, send, recv, case, job, i| {
    t.ialltoall(job.operands(send, recv), case.count, case.datatype)
});
