//! osu_barrier_persistent: MPI_Barrier_init once per size, then MPI_Start and MPI_Wait
//! timed each iteration (see [`crate::bench::persistent`]); buffers, fills and
//! checks are osu_barrier's.

use crate::bench::persistent::persistent_collective;
use crate::spec::BenchSpec;

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_barrier_persistent",
    title: "OSU MPI Barrier Persistent Latency Test",
    ..crate::bench::collective::barrier::SPEC
};

persistent_collective!(BarrierPersistent over crate::bench::nonblocking::ibarrier::Ibarrier, SPEC);
