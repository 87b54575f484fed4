//! osu_alltoallv_persistent: MPI_Alltoallv_init once per size, then MPI_Start and MPI_Wait
//! timed each iteration (see [`super::persistent`]); buffers, fills and
//! checks are osu_alltoallv's.

use super::persistent::persistent_collective;
use super::spec::BenchSpec;

pub const SPEC: BenchSpec = BenchSpec {
    name: "osu_alltoallv_persistent",
    title: "OSU MPI All-to-Allv Personalized Exchange Persistent Latency Test",
    ..super::alltoallv::SPEC
};

persistent_collective!(AlltoallvPersistent over super::ialltoallv::Ialltoallv, SPEC);
