//! osu_allgather_persistent: MPI_Allgather_init once per size, then MPI_Start and MPI_Wait
//! timed each iteration (see [`crate::bench::persistent`]); buffers, fills and
//! checks are osu_allgather's.

use crate::bench::persistent::persistent_collective;
use crate::spec::BenchSpec;

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_allgather_persistent",
    title: "OSU MPI Allgather Persistent Latency Test",
    ..crate::bench::collective::allgather::SPEC
};

persistent_collective!(AllgatherPersistent over crate::bench::nonblocking::iallgather::Iallgather, SPEC);
