//! osu_allgather, OSU 7.4 compatible.
use commbench::bench::{allgather::Allgather, runner};

fn main() {
    runner::main::<Allgather>()
}
