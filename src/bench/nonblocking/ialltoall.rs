//! osu_ialltoall: MPI_Ialltoall, size bytes from every rank to each rank, timed by OSU's overlap method (see
//! [`crate::bench::nonblocking`]); buffers, fills and checks are
//! osu_alltoall's.

use crate::bench::collective::alltoall::Alltoall;
use crate::bench::nonblocking::nonblocking_collective;
use crate::spec::{BenchSpec, MetricKind, NBC_ITERS};

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_ialltoall",
    title: "OSU MPI Non-blocking All-to-All Latency Test",
    letters: "hvfmixMtacuGDPTIlz",
    metric: MetricKind::Overlap,
    defaults: NBC_ITERS,
    ..crate::bench::collective::alltoall::SPEC
};

nonblocking_collective!(Ialltoall over Alltoall, SPEC, |c, t, send, recv, case, job, i| {
    t.start(|t| t.alltoall(job.operands(send, recv), case.count, case.datatype))
});
