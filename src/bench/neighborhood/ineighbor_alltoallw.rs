//! osu_ineighbor_alltoallw: the non-blocking form of osu_neighbor_alltoallw (MPI_Ineighbor_alltoallw),
//! timed by OSU's overlap method (see [`crate::bench::nonblocking`]) over its
//! twin's topology, buffers, fills and checks.

use crate::bench::neighborhood::ineighbor_collective;
use crate::bench::neighborhood::neighbor_alltoallw::NeighborAlltoallw;
use crate::spec::{BenchSpec, MetricKind, NBC_ITERS};

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_ineighbor_alltoallw",
    title: "OSU MPI Non-blocking Neighborhood Alltoallw Latency Test",
    letters: "hvfmixMtacuNGDPTIz",
    metric: MetricKind::Overlap,
    defaults: NBC_ITERS,
    ..crate::bench::neighborhood::neighbor_alltoallw::SPEC
};

ineighbor_collective!(IneighborAlltoallw over NeighborAlltoallw, SPEC);
