//! osu_neighbor_alltoall, OSU 7.4 compatible.
use commbench::{bench::neighborhood::neighbor_alltoall::NeighborAlltoall, runner};

fn main() {
    runner::main::<NeighborAlltoall>()
}
