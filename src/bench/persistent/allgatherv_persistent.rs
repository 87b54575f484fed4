//! osu_allgatherv_persistent: MPI_Allgatherv_init once per size, then MPI_Start and MPI_Wait
//! timed each iteration (see [`crate::bench::persistent`]); buffers, fills and
//! checks are osu_allgatherv's.

use crate::bench::persistent::persistent_collective;
use crate::spec::BenchSpec;

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_allgatherv_persistent",
    title: "OSU MPI Allgatherv Persistent Latency Test",
    ..crate::bench::collective::allgatherv::SPEC
};

persistent_collective!(AllgathervPersistent over crate::bench::nonblocking::iallgatherv::Iallgatherv, SPEC);
