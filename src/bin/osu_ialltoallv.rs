//! osu_ialltoallv, OSU 7.4 compatible.
use commbench::{bench::nonblocking::ialltoallv::Ialltoallv, runner};

fn main() {
    runner::main::<Ialltoallv>()
}
