//! osu_ireduce: MPI_Ireduce with MPI_SUM to the root of each iteration (`-k`), timed by OSU's
//! overlap method (see [`crate::bench::nonblocking`]); buffers, fills and checks
//! are osu_reduce's.

use crate::bench::collective::reduce::Reduce;
use crate::bench::nonblocking::nonblocking_collective;
use crate::spec::{BenchSpec, MetricKind, NBC_ITERS};

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_ireduce",
    title: "OSU MPI Non-blocking Reduce Latency Test",
    letters: "hvfmixMtacuGPTIlzk",
    metric: MetricKind::Overlap,
    defaults: NBC_ITERS,
    ..crate::bench::collective::reduce::SPEC
};

nonblocking_collective!(Ireduce over Reduce, SPEC, |c, t, send, recv, case, job, i| {
    t.start(|t| t.reduce(job.operands(send, recv), case.count, case.datatype, job.reduction, job.root_of(i)))
});
