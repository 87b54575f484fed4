//! osu_ineighbor_alltoall: the non-blocking form of osu_neighbor_alltoall (MPI_Ineighbor_alltoall),
//! timed by OSU's overlap method (see [`super::nonblocking`]) over its
//! twin's topology, buffers, fills and checks.

use super::neighborhood::ineighbor_collective;
use super::spec::{BenchSpec, MetricKind, NBC_ITERS};
use super::neighbor_alltoall::NeighborAlltoall;

pub const SPEC: BenchSpec = BenchSpec {
    name: "osu_ineighbor_alltoall",
    title: "OSU MPI Non-blocking Neighborhood Alltoall Latency Test",
    letters: "hvfmixMtacuNGDPTIz",
    metric: MetricKind::Overlap,
    defaults: NBC_ITERS,
    ..super::neighbor_alltoall::SPEC
};

ineighbor_collective!(IneighborAlltoall over NeighborAlltoall, SPEC);
