//! osu_neighbor_allgatherv, OSU 7.4 compatible.
use commbench::{bench::neighborhood::neighbor_allgatherv::NeighborAllgatherv, runner};

fn main() {
    runner::main::<NeighborAllgatherv>()
}
