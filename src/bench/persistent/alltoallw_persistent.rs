//! osu_alltoallw_persistent: MPI_Alltoallw_init once per size, then MPI_Start and MPI_Wait
//! timed each iteration (see [`crate::bench::persistent`]); buffers, fills and
//! checks are osu_alltoallw's.

use crate::bench::persistent::persistent_collective;
use crate::spec::BenchSpec;

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_alltoallw_persistent",
    title: "OSU MPI All-to-Allw Personalized Exchange Persistent Latency Test",
    ..crate::bench::collective::alltoallw::SPEC
};

persistent_collective!(AlltoallwPersistent over crate::bench::nonblocking::ialltoallw::Ialltoallw, SPEC);
