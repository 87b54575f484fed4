//! osu_ialltoallv: MPI_Ialltoallv with osu_alltoallv's layout, timed by OSU's
//! overlap method (see [`crate::bench::nonblocking`]); buffers, fills and checks
//! are osu_alltoallv's.

use crate::bench::collective::alltoallv::Alltoallv;
use crate::bench::nonblocking::nonblocking_collective;
use crate::spec::{BenchSpec, MetricKind, NBC_ITERS};

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_ialltoallv",
    title: "OSU MPI Non-blocking All-to-Allv Personalized Exchange Latency Test",
    letters: "hvfmixMtacuGDPTIlz",
    metric: MetricKind::Overlap,
    defaults: NBC_ITERS,
    ..crate::bench::collective::alltoallv::SPEC
};

nonblocking_collective!(Ialltoallv over Alltoallv, SPEC, |c, t, send, recv, case, job, i| {
    t.start(|t| t.alltoallv(job.operands(send, recv), c.blocks(), c.blocks(), case.datatype))
});
