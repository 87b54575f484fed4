//! osu_alltoall_persistent: MPI_Alltoall_init once per size, then MPI_Start and MPI_Wait
//! timed each iteration (see [`crate::bench::persistent`]); buffers, fills and
//! checks are osu_alltoall's.

use crate::bench::persistent::persistent_collective;
use crate::spec::BenchSpec;

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_alltoall_persistent",
    title: "OSU MPI All-to-All Personalized Exchange Persistent Latency Test",
    ..crate::bench::collective::alltoall::SPEC
};

persistent_collective!(AlltoallPersistent over crate::bench::nonblocking::ialltoall::Ialltoall, SPEC);
