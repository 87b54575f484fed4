//! osu_neighbor_alltoallw, OSU 7.4 compatible.
use commbench::{bench::neighborhood::neighbor_alltoallw::NeighborAlltoallw, runner};

fn main() {
    runner::main::<NeighborAlltoallw>()
}
