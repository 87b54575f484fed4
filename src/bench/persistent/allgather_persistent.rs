//! osu_allgather_persistent: MPI_Allgather_init once per size, then MPI_Start and MPI_Wait
//! timed each iteration (see [`super::persistent`]); buffers, fills and
//! checks are osu_allgather's.

use super::persistent::persistent_collective;
use super::spec::BenchSpec;

pub const SPEC: BenchSpec = BenchSpec {
    name: "osu_allgather_persistent",
    title: "OSU MPI Allgather Persistent Latency Test",
    ..super::allgather::SPEC
};

persistent_collective!(AllgatherPersistent over super::iallgather::Iallgather, SPEC);
