//! osu_ialltoallv, OSU 7.4 compatible.
use commbench::bench::{ialltoallv::Ialltoallv, runner};

fn main() {
    runner::main::<Ialltoallv>()
}
