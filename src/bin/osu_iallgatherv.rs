//! osu_iallgatherv, OSU 7.4 compatible.
use commbench::bench::{engine::runner, nonblocking::iallgatherv::Iallgatherv};

fn main() {
    runner::main::<Iallgatherv>()
}
