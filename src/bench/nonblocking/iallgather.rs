//! osu_iallgather: MPI_Iallgather of size bytes from every rank to every rank, timed by OSU's overlap method (see
//! [`crate::bench::nonblocking`]); buffers, fills and checks are
//! osu_allgather's.

use crate::bench::collective::allgather::Allgather;
use crate::bench::nonblocking::nonblocking_collective;
use crate::spec::{BenchSpec, MetricKind, NBC_ITERS};

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_iallgather",
    title: "OSU MPI Non-blocking Allgather Latency Test",
    letters: "hvfmixMtacuGDPTIlz",
    metric: MetricKind::Overlap,
    defaults: NBC_ITERS,
    ..crate::bench::collective::allgather::SPEC
};

nonblocking_collective!(Iallgather over Allgather, SPEC, |c, t, send, recv, case, job, i| {
    t.start(|t| t.allgather(job.operands(send, recv), case.count, case.datatype))
});
