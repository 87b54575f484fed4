//! osu_igatherv: MPI_Igatherv with osu_gatherv's layout to the root of each iteration (`-k`), timed by OSU's
//! overlap method (see [`crate::bench::nonblocking`]); buffers, fills and checks
//! are osu_gatherv's.

use crate::bench::collective::gatherv::Gatherv;
use crate::bench::nonblocking::nonblocking_collective;
use crate::spec::{BenchSpec, MetricKind, NBC_ITERS};

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_igatherv",
    title: "OSU MPI Non-blocking Gatherv Latency Test",
    letters: "hvfmixMtacuGDPTIlzk",
    metric: MetricKind::Overlap,
    defaults: NBC_ITERS,
    ..crate::bench::collective::gatherv::SPEC
};

nonblocking_collective!(Igatherv over Gatherv, SPEC, |c, t, send, recv, case, job, i| {
    let root = job.root_of(i);
    let io = job.rooted(send, recv, root);
    t.start(|t| t.gatherv(io, case.count, c.blocks(), case.datatype, root))
});
