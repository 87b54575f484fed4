//! osu_iscatterv: MPI_Iscatterv with osu_scatterv's layout from the root of each iteration (`-k`), timed by OSU's
//! overlap method (see [`crate::bench::nonblocking`]); buffers, fills and checks
//! are osu_scatterv's.

use crate::bench::collective::scatterv::Scatterv;
use crate::bench::nonblocking::nonblocking_collective;
use crate::spec::{BenchSpec, MetricKind, NBC_ITERS};

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_iscatterv",
    title: "OSU MPI Non-blocking Scatterv Latency Test",
    letters: "hvfmixMtacuGDPTIlzk",
    metric: MetricKind::Overlap,
    defaults: NBC_ITERS,
    ..crate::bench::collective::scatterv::SPEC
};

nonblocking_collective!(Iscatterv over Scatterv, SPEC, |c, t, send, recv, case, job, i| {
    let root = job.root_of(i);
    let io = job.rooted(send, recv, root);
    t.start(|t| t.scatterv(io, c.blocks(), case.count, case.datatype, root))
});
