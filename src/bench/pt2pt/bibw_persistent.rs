//! osu_bibw_persistent: osu_bibw's windows both ways through requests bound once per
//! size (a receive and a send per message of the window on each rank),
//! each window started with MPI_Startall. Binding and freeing are untimed, as in OSU; the
//! rest is osu_bibw's (pt2pt/posting.rs).

use crate::bench::pt2pt::bibw::{BibwKernel, SPEC as STANDARD};
use crate::bench::pt2pt::posting::persistent_point_to_point_bench;
use crate::spec::BenchSpec;

pub(crate) const SPEC: BenchSpec =
    BenchSpec { name: "osu_bibw_persistent", title: "OSU MPI Bi-Directional Bandwidth Persistent Test", ..STANDARD };

persistent_point_to_point_bench!(BibwPersistent, BibwKernel::new);
