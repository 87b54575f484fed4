//! osu_bcast_persistent: MPI_Bcast_init once per size, then MPI_Start and MPI_Wait
//! timed each iteration (see [`crate::bench::persistent`]); buffers, fills and
//! checks are osu_bcast's.

use crate::bench::persistent::persistent_collective;
use crate::spec::BenchSpec;

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_bcast_persistent",
    title: "OSU MPI Broadcast Persistent Latency Test",
    ..crate::bench::collective::bcast::SPEC
};

persistent_collective!(BcastPersistent over crate::bench::nonblocking::ibcast::Ibcast, SPEC);
