//! osu_neighbor_alltoall: MPI_Neighbor_alltoall: a different size-byte block to each destination,
//! one from each source.
//! Topology, buffers, fills, checks and the kernel are shared
//! (bench/neighborhood/mod.rs).

use crate::bench::neighborhood::neighbor_collective;
use crate::spec::{BenchSpec, Op};

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_neighbor_alltoall",
    title: "OSU MPI Neighborhood Alltoall Latency Test",
    ..crate::bench::neighborhood::neighbor_allgather::SPEC
};

neighbor_collective!(NeighborAlltoall, SPEC, Op::NeighborAlltoall);
