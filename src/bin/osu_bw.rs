//! osu_bw, OSU 7.4 compatible.
use commbench::bench::{engine::runner, pt2pt::bw::Bw};

fn main() {
    runner::main::<Bw>()
}
