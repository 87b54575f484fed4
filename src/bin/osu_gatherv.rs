//! osu_gatherv, OSU 7.4 compatible.
use commbench::{bench::collective::gatherv::Gatherv, runner};

fn main() {
    runner::main::<Gatherv>()
}
