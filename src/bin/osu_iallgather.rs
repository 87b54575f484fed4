//! osu_iallgather, OSU 7.4 compatible.
use commbench::{bench::nonblocking::iallgather::Iallgather, runner};

fn main() {
    runner::main::<Iallgather>()
}
