//! osu_ineighbor_alltoallv: the non-blocking form of osu_neighbor_alltoallv (MPI_Ineighbor_alltoallv),
//! timed by OSU's overlap method (see [`crate::bench::nonblocking`]) over its
//! twin's topology, buffers, fills and checks.

use crate::bench::neighborhood::ineighbor_collective;
use crate::bench::neighborhood::neighbor_alltoallv::NeighborAlltoallv;
use crate::spec::{BenchSpec, MetricKind, NBC_ITERS};

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_ineighbor_alltoallv",
    title: "OSU MPI Non-blocking Neighborhood Alltoallv Latency Test",
    letters: "hvfmixMtacuNGDPTIz",
    metric: MetricKind::Overlap,
    defaults: NBC_ITERS,
    ..crate::bench::neighborhood::neighbor_alltoallv::SPEC
};

ineighbor_collective!(IneighborAlltoallv over NeighborAlltoallv, SPEC);
