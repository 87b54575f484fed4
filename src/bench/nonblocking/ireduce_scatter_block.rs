//! osu_ireduce_scatter_block: MPI_Ireduce_scatter_block with MPI_SUM, n / np elements per rank, timed by OSU's
//! overlap method (see [`crate::bench::nonblocking`]); buffers, fills and checks
//! are osu_reduce_scatter_block's.

use crate::bench::collective::reduce_scatter_block::ReduceScatterBlock;
use crate::bench::nonblocking::nonblocking_collective;
use crate::spec::{BenchSpec, MetricKind, NBC_ITERS};

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_ireduce_scatter_block",
    title: "OSU MPI Non-blocking Reduce_scatter_block Latency Test",
    letters: "hvfmixMtacuGPTIlz",
    metric: MetricKind::Overlap,
    defaults: NBC_ITERS,
    ..crate::bench::collective::reduce_scatter_block::SPEC
};

nonblocking_collective!(IreduceScatterBlock over ReduceScatterBlock, SPEC, |c, t, send, recv, case, job, i| {
    t.start(|t| t.reduce_scatter_block_sum(job.operands(send, recv), c.block(), case.datatype))
});
