//! osu_gather_persistent: MPI_Gather_init once per size, then MPI_Start and MPI_Wait
//! timed each iteration (see [`super::persistent`]); buffers, fills and
//! checks are osu_gather's. The root is rank 0 (no `-k`, as OSU's).

use super::persistent::persistent_collective;
use super::spec::BenchSpec;

pub const SPEC: BenchSpec = BenchSpec {
    name: "osu_gather_persistent",
    title: "OSU MPI Gather Persistent Latency Test",
    letters: "hvfmixMacuGDPTIlz",
    ..super::gather::SPEC
};

persistent_collective!(GatherPersistent over super::igather::Igather, SPEC);
