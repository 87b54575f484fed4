//! osu_ireduce, OSU 7.4 compatible.
use commbench::{bench::nonblocking::ireduce::Ireduce, runner};

fn main() {
    runner::main::<Ireduce>()
}
