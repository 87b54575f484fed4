//! osu_iallgatherv, OSU 7.4 compatible.
use commbench::{bench::nonblocking::iallgatherv::Iallgatherv, runner};

fn main() {
    runner::main::<Iallgatherv>()
}
