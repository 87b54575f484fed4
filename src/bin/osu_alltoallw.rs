//! osu_alltoallw, OSU 7.4 compatible.
use commbench::bench::{alltoallw::Alltoallw, runner};

fn main() {
    runner::main::<Alltoallw>()
}
