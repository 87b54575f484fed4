//! osu_iallreduce: MPI_Iallreduce with MPI_SUM, timed by OSU's overlap
//! method (see [`crate::bench::nonblocking`]); buffers, fills and checks are
//! osu_allreduce's.

use crate::bench::collective::allreduce::Allreduce;
use crate::bench::nonblocking::nonblocking_collective;
use crate::spec::{BenchSpec, MetricKind, NBC_ITERS};

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_iallreduce",
    title: "OSU MPI Non-blocking Allreduce Latency Test",
    letters: "hvfmixMtacuGPTIlz",
    metric: MetricKind::Overlap,
    defaults: NBC_ITERS,
    ..crate::bench::collective::allreduce::SPEC
};

nonblocking_collective!(Iallreduce over Allreduce, SPEC, |c, t, send, recv, case, job, i| {
    t.start(|t| t.allreduce(job.operands(send, recv), case.count, case.datatype, job.reduction))
});
