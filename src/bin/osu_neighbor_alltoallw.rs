//! osu_neighbor_alltoallw, OSU 7.4 compatible.
use commbench::bench::{engine::runner, neighborhood::neighbor_alltoallw::NeighborAlltoallw};

fn main() {
    runner::main::<NeighborAlltoallw>()
}
