//! osu_allgatherv_persistent: MPI_Allgatherv_init once per size, then MPI_Start and MPI_Wait
//! timed each iteration (see [`super::persistent`]); buffers, fills and
//! checks are osu_allgatherv's.

use super::persistent::persistent_collective;
use super::spec::BenchSpec;

pub const SPEC: BenchSpec = BenchSpec {
    name: "osu_allgatherv_persistent",
    title: "OSU MPI Allgatherv Persistent Latency Test",
    ..super::allgatherv::SPEC
};

persistent_collective!(AllgathervPersistent over super::iallgatherv::Iallgatherv, SPEC);
