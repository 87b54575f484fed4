//! osu_igatherv: MPI_Igatherv with osu_gatherv's layout to the root of each iteration (`-k`), timed by OSU's
//! overlap method (see [`super::nonblocking`]); buffers, fills and checks
//! are osu_gatherv's.

use super::gatherv::Gatherv;
use super::nonblocking::nonblocking_collective;
use super::spec::{BenchSpec, MetricKind, NBC_ITERS};

pub const SPEC: BenchSpec = BenchSpec {
    name: "osu_igatherv",
    title: "OSU MPI Non-blocking Gatherv Latency Test",
    letters: "hvfmixMtacuGDPTIlzk",
    metric: MetricKind::Overlap,
    defaults: NBC_ITERS,
    ..super::gatherv::SPEC
};

nonblocking_collective!(Igatherv over Gatherv, SPEC, |c, t, send, recv, case, job, i| {
    let root = job.root_of(i);
    let io = job.rooted(send, recv, root);
    t.igatherv(io, case.count, c.blocks(), case.datatype, root)
});
