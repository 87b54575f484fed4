//! osu_ineighbor_alltoallw: the non-blocking form of osu_neighbor_alltoallw (MPI_Ineighbor_alltoallw),
//! timed by OSU's overlap method (see [`super::nonblocking`]) over its
//! twin's topology, buffers, fills and checks.

use super::neighborhood::ineighbor_collective;
use super::spec::{BenchSpec, MetricKind, NBC_ITERS};
use super::neighbor_alltoallw::NeighborAlltoallw;

pub const SPEC: BenchSpec = BenchSpec {
    name: "osu_ineighbor_alltoallw",
    title: "OSU MPI Non-blocking Neighborhood Alltoallw Latency Test",
    letters: "hvfmixMtacuNGDPTIz",
    metric: MetricKind::Overlap,
    defaults: NBC_ITERS,
    ..super::neighbor_alltoallw::SPEC
};

ineighbor_collective!(IneighborAlltoallw over NeighborAlltoallw, SPEC);
