//! osu_neighbor_alltoallv, OSU 7.4 compatible.
use commbench::{bench::neighborhood::neighbor_alltoallv::NeighborAlltoallv, runner};

fn main() {
    runner::main::<NeighborAlltoallv>()
}
