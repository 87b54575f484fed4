//! osu_allgatherv, OSU 7.4 compatible.
use commbench::{bench::collective::allgatherv::Allgatherv, runner};

fn main() {
    runner::main::<Allgatherv>()
}
