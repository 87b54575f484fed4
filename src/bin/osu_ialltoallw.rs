//! osu_ialltoallw, OSU 7.4 compatible.
use commbench::{bench::nonblocking::ialltoallw::Ialltoallw, runner};

fn main() {
    runner::main::<Ialltoallw>()
}
