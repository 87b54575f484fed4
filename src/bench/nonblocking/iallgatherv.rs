//! osu_iallgatherv: MPI_Iallgatherv with osu_allgatherv's layout, timed by OSU's
//! overlap method (see [`crate::bench::nonblocking`]); buffers, fills and checks
//! are osu_allgatherv's.

use crate::bench::collective::allgatherv::Allgatherv;
use crate::bench::nonblocking::nonblocking_collective;
use crate::spec::{BenchSpec, MetricKind, NBC_ITERS};

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_iallgatherv",
    title: "OSU MPI Non-blocking Allgatherv Latency Test",
    letters: "hvfmixMtacuGDPTIlz",
    metric: MetricKind::Overlap,
    defaults: NBC_ITERS,
    ..crate::bench::collective::allgatherv::SPEC
};

nonblocking_collective!(Iallgatherv over Allgatherv, SPEC, |c, t, send, recv, case, job, i| {
    t.start(|t| t.allgatherv(job.operands(send, recv), case.count, c.blocks(), case.datatype))
});
