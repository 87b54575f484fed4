//! osu_gatherv_persistent: MPI_Gatherv_init once per size, then MPI_Start and MPI_Wait
//! timed each iteration (see [`super::persistent`]); buffers, fills and
//! checks are osu_gatherv's. The root is rank 0 (no `-k`, as OSU's).

use super::persistent::persistent_collective;
use super::spec::BenchSpec;

pub const SPEC: BenchSpec = BenchSpec {
    name: "osu_gatherv_persistent",
    title: "OSU MPI Gatherv Persistent Latency Test",
    letters: "hvfmixMacuGDPTIlz",
    ..super::gatherv::SPEC
};

persistent_collective!(GathervPersistent over super::igatherv::Igatherv, SPEC);
