//! osu_ineighbor_allgather: the non-blocking form of osu_neighbor_allgather (MPI_Ineighbor_allgather),
//! timed by OSU's overlap method (see [`super::nonblocking`]) over its
//! twin's topology, buffers, fills and checks.

use super::neighborhood::ineighbor_collective;
use super::spec::{BenchSpec, MetricKind, NBC_ITERS};
use super::neighbor_allgather::NeighborAllgather;

pub const SPEC: BenchSpec = BenchSpec {
    name: "osu_ineighbor_allgather",
    title: "OSU MPI Non-blocking Neighborhood Allgather Latency Test",
    letters: "hvfmixMtacuNGDPTIz",
    metric: MetricKind::Overlap,
    defaults: NBC_ITERS,
    ..super::neighbor_allgather::SPEC
};

ineighbor_collective!(IneighborAllgather over NeighborAllgather, SPEC);
