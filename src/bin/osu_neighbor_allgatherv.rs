//! osu_neighbor_allgatherv, OSU 7.4 compatible.
use commbench::bench::{engine::runner, neighborhood::neighbor_allgatherv::NeighborAllgatherv};

fn main() {
    runner::main::<NeighborAllgatherv>()
}
