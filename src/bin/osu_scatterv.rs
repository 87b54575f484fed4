//! osu_scatterv, OSU 7.4 compatible.
use commbench::bench::{runner, scatterv::Scatterv};

fn main() {
    runner::main::<Scatterv>()
}
