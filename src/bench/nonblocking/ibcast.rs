//! osu_ibcast: MPI_Ibcast of size bytes from rank 0, timed by OSU's overlap method (see
//! [`crate::bench::nonblocking`]); buffers, fills and checks are
//! osu_bcast's.

use crate::bench::collective::bcast::Bcast;
use crate::bench::nonblocking::nonblocking_collective;
use crate::spec::{BenchSpec, MetricKind, NBC_ITERS};

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_ibcast",
    title: "OSU MPI Non-Blocking Broadcast Latency Test",
    letters: "hvfmixMtacuGDPTIz",
    metric: MetricKind::Overlap,
    defaults: NBC_ITERS,
    ..crate::bench::collective::bcast::SPEC
};

nonblocking_collective!(Ibcast over Bcast, SPEC, |c, t, send, recv, case, job, i| {
    t.start(|t| t.bcast(recv, case.count, case.datatype, 0))
});
