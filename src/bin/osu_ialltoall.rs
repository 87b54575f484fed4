//! osu_ialltoall, OSU 7.4 compatible.
use commbench::{bench::nonblocking::ialltoall::Ialltoall, runner};

fn main() {
    runner::main::<Ialltoall>()
}
