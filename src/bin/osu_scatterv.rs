//! osu_scatterv, OSU 7.4 compatible.
use commbench::{bench::collective::scatterv::Scatterv, runner};

fn main() {
    runner::main::<Scatterv>()
}
