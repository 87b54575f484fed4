//! osu_allreduce, OSU 7.4 compatible.
use commbench::{bench::collective::allreduce::Allreduce, runner};

fn main() {
    runner::main::<Allreduce>()
}
