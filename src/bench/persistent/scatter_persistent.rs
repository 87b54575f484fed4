//! osu_scatter_persistent: MPI_Scatter_init once per size, then MPI_Start and MPI_Wait
//! timed each iteration (see [`crate::bench::persistent`]); buffers, fills and
//! checks are osu_scatter's. The root is rank 0 (no `-k`, as OSU's).

use crate::bench::persistent::persistent_collective;
use crate::spec::BenchSpec;

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_scatter_persistent",
    title: "OSU MPI Scatter Persistent Latency Test",
    letters: "hvfmixMacuGDPTIlz",
    ..crate::bench::collective::scatter::SPEC
};

persistent_collective!(ScatterPersistent over crate::bench::nonblocking::iscatter::Iscatter, SPEC);
