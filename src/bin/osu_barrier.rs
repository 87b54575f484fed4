//! osu_barrier, OSU 7.4 compatible.
use commbench::bench::{barrier::Barrier, runner};

fn main() {
    runner::main::<Barrier>()
}
