//! osu_alltoallw, OSU 7.4 compatible.
use commbench::{bench::collective::alltoallw::Alltoallw, runner};

fn main() {
    runner::main::<Alltoallw>()
}
