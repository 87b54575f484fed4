//! osu_iallreduce, OSU 7.4 compatible.
use commbench::{bench::nonblocking::iallreduce::Iallreduce, runner};

fn main() {
    runner::main::<Iallreduce>()
}
