//! osu_ineighbor_alltoallw, OSU 7.4 compatible.
use commbench::bench::{engine::runner, neighborhood::ineighbor_alltoallw::IneighborAlltoallw};

fn main() {
    runner::main::<IneighborAlltoallw>()
}
