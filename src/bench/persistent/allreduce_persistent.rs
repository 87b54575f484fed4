//! osu_allreduce_persistent: MPI_Allreduce_init once per size, then MPI_Start and MPI_Wait
//! timed each iteration (see [`super::persistent`]); buffers, fills and
//! checks are osu_allreduce's.

use super::persistent::persistent_collective;
use super::spec::BenchSpec;

pub const SPEC: BenchSpec = BenchSpec {
    name: "osu_allreduce_persistent",
    title: "OSU MPI Allreduce Persistent Latency Test",
    ..super::allreduce::SPEC
};

persistent_collective!(AllreducePersistent over super::iallreduce::Iallreduce, SPEC);
