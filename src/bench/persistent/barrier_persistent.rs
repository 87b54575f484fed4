//! osu_barrier_persistent: MPI_Barrier_init once per size, then MPI_Start and MPI_Wait
//! timed each iteration (see [`super::persistent`]); buffers, fills and
//! checks are osu_barrier's.

use super::persistent::persistent_collective;
use super::spec::BenchSpec;

pub const SPEC: BenchSpec = BenchSpec {
    name: "osu_barrier_persistent",
    title: "OSU MPI Barrier Persistent Latency Test",
    ..super::barrier::SPEC
};

persistent_collective!(BarrierPersistent over super::ibarrier::Ibarrier, SPEC);
