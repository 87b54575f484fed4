//! osu_gatherv_persistent: MPI_Gatherv_init once per size, then MPI_Start and MPI_Wait
//! timed each iteration (see [`crate::bench::persistent`]); buffers, fills and
//! checks are osu_gatherv's. The root is rank 0 (no `-k`, as OSU's).

use crate::bench::persistent::persistent_collective;
use crate::spec::BenchSpec;

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_gatherv_persistent",
    title: "OSU MPI Gatherv Persistent Latency Test",
    letters: "hvfmixMacuGDPTIlz",
    ..crate::bench::collective::gatherv::SPEC
};

persistent_collective!(GathervPersistent over crate::bench::nonblocking::igatherv::Igatherv, SPEC);
