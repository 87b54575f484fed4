//! osu_ineighbor_alltoall: the non-blocking form of osu_neighbor_alltoall (MPI_Ineighbor_alltoall),
//! timed by OSU's overlap method (see [`crate::bench::nonblocking`]) over its
//! twin's topology, buffers, fills and checks.

use crate::bench::neighborhood::ineighbor_collective;
use crate::bench::neighborhood::neighbor_alltoall::NeighborAlltoall;
use crate::spec::{BenchSpec, MetricKind, NBC_ITERS};

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_ineighbor_alltoall",
    title: "OSU MPI Non-blocking Neighborhood Alltoall Latency Test",
    letters: "hvfmixMtacuNGDPTIz",
    metric: MetricKind::Overlap,
    defaults: NBC_ITERS,
    ..crate::bench::neighborhood::neighbor_alltoall::SPEC
};

ineighbor_collective!(IneighborAlltoall over NeighborAlltoall, SPEC);
