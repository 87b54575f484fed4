//! osu_alltoallw_persistent: MPI_Alltoallw_init once per size, then MPI_Start and MPI_Wait
//! timed each iteration (see [`super::persistent`]); buffers, fills and
//! checks are osu_alltoallw's.

use super::persistent::persistent_collective;
use super::spec::BenchSpec;

pub const SPEC: BenchSpec = BenchSpec {
    name: "osu_alltoallw_persistent",
    title: "OSU MPI All-to-Allw Personalized Exchange Persistent Latency Test",
    ..super::alltoallw::SPEC
};

persistent_collective!(AlltoallwPersistent over super::ialltoallw::Ialltoallw, SPEC);
