//! osu_ibcast, OSU 7.4 compatible.
use commbench::{bench::nonblocking::ibcast::Ibcast, runner};

fn main() {
    runner::main::<Ibcast>()
}
