//! osu_iscatter: MPI_Iscatter of size bytes to every rank from the root of each iteration (`-k`), timed by OSU's
//! overlap method (see [`super::nonblocking`]); buffers, fills and checks
//! are osu_scatter's.

use super::scatter::Scatter;
use super::nonblocking::nonblocking_collective;
use super::spec::{BenchSpec, MetricKind, NBC_ITERS};

pub const SPEC: BenchSpec = BenchSpec {
    name: "osu_iscatter",
    title: "OSU MPI Non-blocking Scatter Latency Test",
    letters: "hvfmixMtacuGDPTIlzk",
    metric: MetricKind::Overlap,
    defaults: NBC_ITERS,
    ..super::scatter::SPEC
};

nonblocking_collective!(Iscatter over Scatter, SPEC, |c, t, send, recv, case, job, i| {
    let root = job.root_of(i);
    let io = job.rooted(send, recv, root);
    t.iscatter(io, case.count, case.datatype, root)
});
