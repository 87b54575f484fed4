//! osu_igather: MPI_Igather of size bytes from every rank to the root of each iteration (`-k`), timed by OSU's
//! overlap method (see [`super::nonblocking`]); buffers, fills and checks
//! are osu_gather's.

use super::gather::Gather;
use super::nonblocking::nonblocking_collective;
use super::spec::{BenchSpec, MetricKind, NBC_ITERS};

pub const SPEC: BenchSpec = BenchSpec {
    name: "osu_igather",
    title: "OSU MPI Non-blocking Gather Latency Test",
    letters: "hvfmixMtacuGDPTIlzk",
    metric: MetricKind::Overlap,
    defaults: NBC_ITERS,
    ..super::gather::SPEC
};

nonblocking_collective!(Igather over Gather, SPEC, |c, t, send, recv, case, job, i| {
    let root = job.root_of(i);
    let io = job.rooted(send, recv, root);
    t.igather(io, case.count, case.datatype, root)
});
