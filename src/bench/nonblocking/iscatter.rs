//! osu_iscatter: MPI_Iscatter of size bytes to every rank from the root of each iteration (`-k`), timed by OSU's
//! overlap method (see [`crate::bench::nonblocking`]); buffers, fills and checks
//! are osu_scatter's.

use crate::bench::collective::scatter::Scatter;
use crate::bench::nonblocking::nonblocking_collective;
use crate::spec::{BenchSpec, MetricKind, NBC_ITERS};

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_iscatter",
    title: "OSU MPI Non-blocking Scatter Latency Test",
    letters: "hvfmixMtacuGDPTIlzk",
    metric: MetricKind::Overlap,
    defaults: NBC_ITERS,
    ..crate::bench::collective::scatter::SPEC
};

nonblocking_collective!(Iscatter over Scatter, SPEC, |c, t, send, recv, case, job, i| {
    let root = job.root_of(i);
    let io = job.rooted(send, recv, root);
    t.start(|t| t.scatter(io, case.count, case.datatype, root))
});
