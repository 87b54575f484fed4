//! osu_allreduce_persistent: MPI_Allreduce_init once per size, then MPI_Start and MPI_Wait
//! timed each iteration (see [`crate::bench::persistent`]); buffers, fills and
//! checks are osu_allreduce's.

use crate::bench::persistent::persistent_collective;
use crate::spec::BenchSpec;

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_allreduce_persistent",
    title: "OSU MPI Allreduce Persistent Latency Test",
    ..crate::bench::collective::allreduce::SPEC
};

persistent_collective!(AllreducePersistent over crate::bench::nonblocking::iallreduce::Iallreduce, SPEC);
