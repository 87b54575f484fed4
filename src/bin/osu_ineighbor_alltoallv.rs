//! osu_ineighbor_alltoallv, OSU 7.4 compatible.
use commbench::{bench::neighborhood::ineighbor_alltoallv::IneighborAlltoallv, runner};

fn main() {
    runner::main::<IneighborAlltoallv>()
}
