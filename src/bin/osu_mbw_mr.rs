//! osu_mbw_mr, OSU 7.4 compatible.
use commbench::{bench::pt2pt::mbw_mr::MbwMr, runner};

fn main() {
    runner::main::<MbwMr>()
}
