//! osu_ineighbor_allgatherv: the non-blocking form of osu_neighbor_allgatherv (MPI_Ineighbor_allgatherv),
//! timed by OSU's overlap method (see [`super::nonblocking`]) over its
//! twin's topology, buffers, fills and checks.

use super::neighborhood::ineighbor_collective;
use super::spec::{BenchSpec, MetricKind, NBC_ITERS};
use super::neighbor_allgatherv::NeighborAllgatherv;

pub const SPEC: BenchSpec = BenchSpec {
    name: "osu_ineighbor_allgatherv",
    title: "OSU MPI Non-blocking Neighborhood Allgatherv Latency Test",
    letters: "hvfmixMtacuNGDPTIz",
    metric: MetricKind::Overlap,
    defaults: NBC_ITERS,
    ..super::neighbor_allgatherv::SPEC
};

ineighbor_collective!(IneighborAllgatherv over NeighborAllgatherv, SPEC);
