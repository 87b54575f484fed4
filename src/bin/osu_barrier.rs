//! osu_barrier, OSU 7.4 compatible.
use commbench::{bench::collective::barrier::Barrier, runner};

fn main() {
    runner::main::<Barrier>()
}
