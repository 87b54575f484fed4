//! osu_ineighbor_alltoallw, OSU 7.4 compatible.
use commbench::{bench::neighborhood::ineighbor_alltoallw::IneighborAlltoallw, runner};

fn main() {
    runner::main::<IneighborAlltoallw>()
}
