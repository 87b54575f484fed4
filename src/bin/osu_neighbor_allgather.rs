//! osu_neighbor_allgather, OSU 7.4 compatible.
use commbench::{bench::neighborhood::neighbor_allgather::NeighborAllgather, runner};

fn main() {
    runner::main::<NeighborAllgather>()
}
