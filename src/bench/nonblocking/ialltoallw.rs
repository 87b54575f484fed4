//! osu_ialltoallw: MPI_Ialltoallw with osu_alltoallw's layout (byte displacements, one type per peer), timed by OSU's
//! overlap method (see [`crate::bench::nonblocking`]); buffers, fills and checks
//! are osu_alltoallw's.

use crate::bench::collective::alltoallw::Alltoallw;
use crate::bench::nonblocking::nonblocking_collective;
use crate::spec::{BenchSpec, MetricKind, NBC_ITERS};

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_ialltoallw",
    title: "OSU MPI Non-blocking All-to-Allw Personalized Exchange Latency Test",
    letters: "hvfmixMtacuGDPTIlz",
    metric: MetricKind::Overlap,
    defaults: NBC_ITERS,
    ..crate::bench::collective::alltoallw::SPEC
};

nonblocking_collective!(Ialltoallw over Alltoallw, SPEC, |c, t, send, recv, case, job, i| {
    t.start(|t| t.alltoallw(job.operands(send, recv), c.blocks(), c.blocks(), case.datatype))
});
