//! osu_bw_persistent: osu_bw's windows through requests bound once per size
//! (MPI_Send_init on rank 0, MPI_Recv_init on rank 1, one per message of
//! the window), each window started with MPI_Startall. Binding and freeing are untimed, as in OSU; the
//! rest is osu_bw's (pt2pt/posting.rs).

use crate::bench::pt2pt::bw::{BwKernel, SPEC as STANDARD};
use crate::bench::pt2pt::posting::persistent_point_to_point_bench;
use crate::spec::BenchSpec;

pub(crate) const SPEC: BenchSpec =
    BenchSpec { name: "osu_bw_persistent", title: "OSU MPI Bandwidth Persistent Test", ..STANDARD };

persistent_point_to_point_bench!(BwPersistent, BwKernel::new);
