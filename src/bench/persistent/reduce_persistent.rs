//! osu_reduce_persistent: MPI_Reduce_init once per size, then MPI_Start and MPI_Wait
//! timed each iteration (see [`crate::bench::persistent`]); buffers, fills and
//! checks are osu_reduce's. The root is rank 0 (no `-k`, as OSU's).

use crate::bench::persistent::persistent_collective;
use crate::spec::BenchSpec;

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_reduce_persistent",
    title: "OSU MPI Reduce Persistent Latency Test",
    letters: "hvfmixMacuGPTIlz",
    ..crate::bench::collective::reduce::SPEC
};

persistent_collective!(ReducePersistent over crate::bench::nonblocking::ireduce::Ireduce, SPEC);
