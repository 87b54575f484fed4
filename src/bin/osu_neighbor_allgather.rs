//! osu_neighbor_allgather, OSU 7.4 compatible.
use commbench::bench::{engine::runner, neighborhood::neighbor_allgather::NeighborAllgather};

fn main() {
    runner::main::<NeighborAllgather>()
}
