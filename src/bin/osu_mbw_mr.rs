//! osu_mbw_mr, OSU 7.4 compatible.
use commbench::bench::{engine::runner, pt2pt::mbw_mr::MbwMr};

fn main() {
    runner::main::<MbwMr>()
}
