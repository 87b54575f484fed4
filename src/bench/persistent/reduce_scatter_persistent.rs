//! osu_reduce_scatter_persistent: MPI_Reduce_scatter_init once per size, then MPI_Start and MPI_Wait
//! timed each iteration (see [`crate::bench::persistent`]); buffers, fills and
//! checks are osu_reduce_scatter's.

use crate::bench::persistent::persistent_collective;
use crate::spec::BenchSpec;

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_reduce_scatter_persistent",
    title: "OSU MPI Reduce_scatter Persistent Latency Test",
    ..crate::bench::collective::reduce_scatter::SPEC
};

persistent_collective!(ReduceScatterPersistent over crate::bench::nonblocking::ireduce_scatter::IreduceScatter, SPEC);
