//! osu_iallgatherv: MPI_Iallgatherv with osu_allgatherv's layout, timed by OSU's
//! overlap method (see [`super::nonblocking`]); buffers, fills and checks
//! are osu_allgatherv's.

use super::allgatherv::Allgatherv;
use super::nonblocking::nonblocking_collective;
use super::spec::{BenchSpec, MetricKind, NBC_ITERS};

pub const SPEC: BenchSpec = BenchSpec {
    name: "osu_iallgatherv",
    title: "OSU MPI Non-blocking Allgatherv Latency Test",
    letters: "hvfmixMtacuGDPTIlz",
    metric: MetricKind::Overlap,
    defaults: NBC_ITERS,
    ..super::allgatherv::SPEC
};

nonblocking_collective!(Iallgatherv over Allgatherv, SPEC, |c, t, send, recv, case, job, i| {
    t.iallgatherv(job.operands(send, recv), case.count, c.blocks(), case.datatype)
});
