//! osu_bw, OSU 7.4 compatible.
use commbench::{bench::pt2pt::bw::Bw, runner};

fn main() {
    runner::main::<Bw>()
}
