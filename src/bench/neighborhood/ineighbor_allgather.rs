//! osu_ineighbor_allgather: the non-blocking form of osu_neighbor_allgather (MPI_Ineighbor_allgather),
//! timed by OSU's overlap method (see [`crate::bench::nonblocking`]) over its
//! twin's topology, buffers, fills and checks.

use crate::bench::neighborhood::ineighbor_collective;
use crate::bench::neighborhood::neighbor_allgather::NeighborAllgather;
use crate::spec::{BenchSpec, MetricKind, NBC_ITERS};

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_ineighbor_allgather",
    title: "OSU MPI Non-blocking Neighborhood Allgather Latency Test",
    letters: "hvfmixMtacuNGDPTIz",
    metric: MetricKind::Overlap,
    defaults: NBC_ITERS,
    ..crate::bench::neighborhood::neighbor_allgather::SPEC
};

ineighbor_collective!(IneighborAllgather over NeighborAllgather, SPEC);
