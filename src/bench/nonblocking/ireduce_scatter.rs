//! osu_ireduce_scatter: MPI_Ireduce_scatter with MPI_SUM, split as osu_reduce_scatter splits it, timed by OSU's
//! overlap method (see [`crate::bench::nonblocking`]); buffers, fills and checks
//! are osu_reduce_scatter's.

use crate::bench::collective::reduce_scatter::ReduceScatter;
use crate::bench::nonblocking::nonblocking_collective;
use crate::spec::{BenchSpec, MetricKind, NBC_ITERS};

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_ireduce_scatter",
    title: "OSU MPI Non-blocking Reduce_scatter Latency Test",
    letters: "hvfmixMtacuGPTIlz",
    metric: MetricKind::Overlap,
    defaults: NBC_ITERS,
    ..crate::bench::collective::reduce_scatter::SPEC
};

nonblocking_collective!(IreduceScatter over ReduceScatter, SPEC, |c, t, send, recv, case, job, i| {
    t.start(|t| t.reduce_scatter(job.operands(send, recv), c.counts(), case.datatype, job.reduction))
});
