//! osu_neighbor_allgather: MPI_Neighbor_allgather: size bytes from every rank to each of its
//! destinations, a block from each source received.
//! Topology, buffers, fills, checks and the kernel are shared
//! (bench/neighborhood/mod.rs).

use crate::bench::neighborhood::neighbor_collective;
use crate::spec::{BenchSpec, MetricKind, Op, ProcRule, COLL_ITERS};

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_neighbor_allgather",
    title: "OSU MPI Neighborhood Allgather Latency Test",
    letters: "hvfmixMacuNGDPTIz",
    procs: ProcRule::AtLeastTwo,
    metric: MetricKind::Collective,
    defaults: COLL_ITERS,
    large_switch: true,
    min_size: 1,
    max_size: 1 << 20,
    buffer_times_np: true,
    accel_slot: true,
    ..BenchSpec::DEFAULT
};

neighbor_collective!(NeighborAllgather, SPEC, Op::NeighborAllgather);
