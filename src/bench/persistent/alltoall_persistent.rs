//! osu_alltoall_persistent: MPI_Alltoall_init once per size, then MPI_Start and MPI_Wait
//! timed each iteration (see [`super::persistent`]); buffers, fills and
//! checks are osu_alltoall's.

use super::persistent::persistent_collective;
use super::spec::BenchSpec;

pub const SPEC: BenchSpec = BenchSpec {
    name: "osu_alltoall_persistent",
    title: "OSU MPI All-to-All Personalized Exchange Persistent Latency Test",
    ..super::alltoall::SPEC
};

persistent_collective!(AlltoallPersistent over super::ialltoall::Ialltoall, SPEC);
