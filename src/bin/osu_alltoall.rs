//! osu_alltoall, OSU 7.4 compatible.
use commbench::{bench::collective::alltoall::Alltoall, runner};

fn main() {
    runner::main::<Alltoall>()
}
