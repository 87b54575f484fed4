//! osu_ineighbor_alltoall, OSU 7.4 compatible.
use commbench::{bench::neighborhood::ineighbor_alltoall::IneighborAlltoall, runner};

fn main() {
    runner::main::<IneighborAlltoall>()
}
