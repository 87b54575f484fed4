//! osu_igatherv, OSU 7.4 compatible.
use commbench::bench::{engine::runner, nonblocking::igatherv::Igatherv};

fn main() {
    runner::main::<Igatherv>()
}
