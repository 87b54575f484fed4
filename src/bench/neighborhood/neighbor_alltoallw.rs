//! osu_neighbor_alltoallw: MPI_Neighbor_alltoallw: osu_neighbor_alltoallv with byte displacements
//! and a type per neighbour, every one the run's. The title is OSU's own
//! (it names the plain all-to-all-w).
//! Topology, buffers, fills, checks and the kernel are shared
//! (bench/neighborhood/mod.rs).

use crate::bench::neighborhood::neighbor_collective;
use crate::spec::{BenchSpec, Op};

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_neighbor_alltoallw",
    title: "OSU MPI All-to-Allw Personalized Exchange Latency Test",
    ..crate::bench::neighborhood::neighbor_alltoall::SPEC
};

neighbor_collective!(NeighborAlltoallw, SPEC, Op::NeighborAlltoallw);
