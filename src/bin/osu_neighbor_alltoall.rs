//! osu_neighbor_alltoall, OSU 7.4 compatible.
use commbench::bench::{neighbor_alltoall::NeighborAlltoall, runner};

fn main() {
    runner::main::<NeighborAlltoall>()
}
