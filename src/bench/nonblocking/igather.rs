//! osu_igather: MPI_Igather of size bytes from every rank to the root of each iteration (`-k`), timed by OSU's
//! overlap method (see [`crate::bench::nonblocking`]); buffers, fills and checks
//! are osu_gather's.

use crate::bench::collective::gather::Gather;
use crate::bench::nonblocking::nonblocking_collective;
use crate::spec::{BenchSpec, MetricKind, NBC_ITERS};

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_igather",
    title: "OSU MPI Non-blocking Gather Latency Test",
    letters: "hvfmixMtacuGDPTIlzk",
    metric: MetricKind::Overlap,
    defaults: NBC_ITERS,
    ..crate::bench::collective::gather::SPEC
};

nonblocking_collective!(Igather over Gather, SPEC, |c, t, send, recv, case, job, i| {
    let root = job.root_of(i);
    let io = job.rooted(send, recv, root);
    t.start(|t| t.gather(io, case.count, case.datatype, root))
});
