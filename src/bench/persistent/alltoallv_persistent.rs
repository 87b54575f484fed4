//! osu_alltoallv_persistent: MPI_Alltoallv_init once per size, then MPI_Start and MPI_Wait
//! timed each iteration (see [`crate::bench::persistent`]); buffers, fills and
//! checks are osu_alltoallv's.

use crate::bench::persistent::persistent_collective;
use crate::spec::BenchSpec;

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_alltoallv_persistent",
    title: "OSU MPI All-to-Allv Personalized Exchange Persistent Latency Test",
    ..crate::bench::collective::alltoallv::SPEC
};

persistent_collective!(AlltoallvPersistent over crate::bench::nonblocking::ialltoallv::Ialltoallv, SPEC);
