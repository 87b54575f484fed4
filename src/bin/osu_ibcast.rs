//! osu_ibcast, OSU 7.4 compatible.
use commbench::bench::{ibcast::Ibcast, runner};

fn main() {
    runner::main::<Ibcast>()
}
