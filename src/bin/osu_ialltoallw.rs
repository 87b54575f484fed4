//! osu_ialltoallw, OSU 7.4 compatible.
use commbench::bench::{ialltoallw::Ialltoallw, runner};

fn main() {
    runner::main::<Ialltoallw>()
}
