//! osu_scatterv_persistent: MPI_Scatterv_init once per size, then MPI_Start and MPI_Wait
//! timed each iteration (see [`crate::bench::persistent`]); buffers, fills and
//! checks are osu_scatterv's. The root is rank 0 (no `-k`, as OSU's).

use crate::bench::persistent::persistent_collective;
use crate::spec::BenchSpec;

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_scatterv_persistent",
    title: "OSU MPI Scatterv Persistent Latency Test",
    letters: "hvfmixMacuGDPTIlz",
    ..crate::bench::collective::scatterv::SPEC
};

persistent_collective!(ScattervPersistent over crate::bench::nonblocking::iscatterv::Iscatterv, SPEC);
