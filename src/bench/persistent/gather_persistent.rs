//! osu_gather_persistent: MPI_Gather_init once per size, then MPI_Start and MPI_Wait
//! timed each iteration (see [`crate::bench::persistent`]); buffers, fills and
//! checks are osu_gather's. The root is rank 0 (no `-k`, as OSU's).

use crate::bench::persistent::persistent_collective;
use crate::spec::BenchSpec;

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_gather_persistent",
    title: "OSU MPI Gather Persistent Latency Test",
    letters: "hvfmixMacuGDPTIlz",
    ..crate::bench::collective::gather::SPEC
};

persistent_collective!(GatherPersistent over crate::bench::nonblocking::igather::Igather, SPEC);
