//! osu_iallreduce, OSU 7.4 compatible.
use commbench::bench::{iallreduce::Iallreduce, runner};

fn main() {
    runner::main::<Iallreduce>()
}
