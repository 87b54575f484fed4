//! osu_ineighbor_alltoallv, OSU 7.4 compatible.
use commbench::bench::{engine::runner, neighborhood::ineighbor_alltoallv::IneighborAlltoallv};

fn main() {
    runner::main::<IneighborAlltoallv>()
}
