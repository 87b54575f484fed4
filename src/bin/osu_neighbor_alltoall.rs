//! osu_neighbor_alltoall, OSU 7.4 compatible.
use commbench::bench::{engine::runner, neighborhood::neighbor_alltoall::NeighborAlltoall};

fn main() {
    runner::main::<NeighborAlltoall>()
}
