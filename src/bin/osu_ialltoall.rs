//! osu_ialltoall, OSU 7.4 compatible.
use commbench::bench::{ialltoall::Ialltoall, runner};

fn main() {
    runner::main::<Ialltoall>()
}
