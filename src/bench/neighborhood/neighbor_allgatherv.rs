//! osu_neighbor_allgatherv: MPI_Neighbor_allgatherv: osu_neighbor_allgather with a receive layout
//! (OSU's: the same count from every source, blocks end to end).
//! Topology, buffers, fills, checks and the kernel are shared
//! (bench/neighborhood/mod.rs).

use crate::bench::neighborhood::neighbor_collective;
use crate::spec::{BenchSpec, Op};

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_neighbor_allgatherv",
    title: "OSU MPI Neighborhood Allgatherv Latency Test",
    ..crate::bench::neighborhood::neighbor_allgather::SPEC
};

neighbor_collective!(NeighborAllgatherv, SPEC, Op::NeighborAllgatherv);
