//! osu_ineighbor_alltoallv: the non-blocking form of osu_neighbor_alltoallv (MPI_Ineighbor_alltoallv),
//! timed by OSU's overlap method (see [`super::nonblocking`]) over its
//! twin's topology, buffers, fills and checks.

use super::neighborhood::ineighbor_collective;
use super::spec::{BenchSpec, MetricKind, NBC_ITERS};
use super::neighbor_alltoallv::NeighborAlltoallv;

pub const SPEC: BenchSpec = BenchSpec {
    name: "osu_ineighbor_alltoallv",
    title: "OSU MPI Non-blocking Neighborhood Alltoallv Latency Test",
    letters: "hvfmixMtacuNGDPTIz",
    metric: MetricKind::Overlap,
    defaults: NBC_ITERS,
    ..super::neighbor_alltoallv::SPEC
};

ineighbor_collective!(IneighborAlltoallv over NeighborAlltoallv, SPEC);
