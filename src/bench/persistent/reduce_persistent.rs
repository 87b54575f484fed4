//! osu_reduce_persistent: MPI_Reduce_init once per size, then MPI_Start and MPI_Wait
//! timed each iteration (see [`super::persistent`]); buffers, fills and
//! checks are osu_reduce's. The root is rank 0 (no `-k`, as OSU's).

use super::persistent::persistent_collective;
use super::spec::BenchSpec;

pub const SPEC: BenchSpec = BenchSpec {
    name: "osu_reduce_persistent",
    title: "OSU MPI Reduce Persistent Latency Test",
    letters: "hvfmixMacuGPTIlz",
    ..super::reduce::SPEC
};

persistent_collective!(ReducePersistent over super::ireduce::Ireduce, SPEC);
