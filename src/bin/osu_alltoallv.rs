//! osu_alltoallv, OSU 7.4 compatible.
use commbench::{bench::collective::alltoallv::Alltoallv, runner};

fn main() {
    runner::main::<Alltoallv>()
}
