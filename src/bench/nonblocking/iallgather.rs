//! osu_iallgather: MPI_Iallgather of size bytes from every rank to every rank, timed by OSU's overlap method (see
//! [`super::nonblocking`]); buffers, fills and checks are
//! osu_allgather's.

use super::allgather::Allgather;
use super::nonblocking::nonblocking_collective;
use super::spec::{BenchSpec, MetricKind, NBC_ITERS};

pub const SPEC: BenchSpec = BenchSpec {
    name: "osu_iallgather",
    title: "OSU MPI Non-blocking Allgather Latency Test",
    letters: "hvfmixMtacuGDPTIlz",
    metric: MetricKind::Overlap,
    defaults: NBC_ITERS,
    ..super::allgather::SPEC
};

nonblocking_collective!(Iallgather over Allgather, SPEC, |c, t, send, recv, case, job, i| {
    t.iallgather(job.operands(send, recv), case.count, case.datatype)
});
