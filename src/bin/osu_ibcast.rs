//! osu_ibcast, OSU 7.4 compatible.
use commbench::bench::{engine::runner, nonblocking::ibcast::Ibcast};

fn main() {
    runner::main::<Ibcast>()
}
