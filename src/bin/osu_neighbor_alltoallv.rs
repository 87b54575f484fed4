//! osu_neighbor_alltoallv, OSU 7.4 compatible.
use commbench::bench::{engine::runner, neighborhood::neighbor_alltoallv::NeighborAlltoallv};

fn main() {
    runner::main::<NeighborAlltoallv>()
}
