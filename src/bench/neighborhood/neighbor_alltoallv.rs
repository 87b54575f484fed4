//! osu_neighbor_alltoallv: MPI_Neighbor_alltoallv: osu_neighbor_alltoall with layouts (OSU's:
//! the same count for every neighbour, blocks end to end).
//! Topology, buffers, fills, checks and the kernel are shared
//! (bench/neighborhood/mod.rs).

use crate::bench::neighborhood::neighbor_collective;
use crate::spec::{BenchSpec, Op};

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_neighbor_alltoallv",
    title: "OSU MPI Neighborhood All-to-Allv Latency Test",
    ..crate::bench::neighborhood::neighbor_alltoall::SPEC
};

neighbor_collective!(NeighborAlltoallv, SPEC, Op::NeighborAlltoallv);
