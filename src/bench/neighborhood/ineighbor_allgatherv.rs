//! osu_ineighbor_allgatherv: the non-blocking form of osu_neighbor_allgatherv (MPI_Ineighbor_allgatherv),
//! timed by OSU's overlap method (see [`crate::bench::nonblocking`]) over its
//! twin's topology, buffers, fills and checks.

use crate::bench::neighborhood::ineighbor_collective;
use crate::bench::neighborhood::neighbor_allgatherv::NeighborAllgatherv;
use crate::spec::{BenchSpec, MetricKind, NBC_ITERS};

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_ineighbor_allgatherv",
    title: "OSU MPI Non-blocking Neighborhood Allgatherv Latency Test",
    letters: "hvfmixMtacuNGDPTIz",
    metric: MetricKind::Overlap,
    defaults: NBC_ITERS,
    ..crate::bench::neighborhood::neighbor_allgatherv::SPEC
};

ineighbor_collective!(IneighborAllgatherv over NeighborAllgatherv, SPEC);
