//! osu_bcast_persistent: MPI_Bcast_init once per size, then MPI_Start and MPI_Wait
//! timed each iteration (see [`super::persistent`]); buffers, fills and
//! checks are osu_bcast's.

use super::persistent::persistent_collective;
use super::spec::BenchSpec;

pub const SPEC: BenchSpec = BenchSpec {
    name: "osu_bcast_persistent",
    title: "OSU MPI Broadcast Persistent Latency Test",
    ..super::bcast::SPEC
};

persistent_collective!(BcastPersistent over super::ibcast::Ibcast, SPEC);
