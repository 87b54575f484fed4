//! osu_iallgather, OSU 7.4 compatible.
use commbench::bench::{engine::runner, nonblocking::iallgather::Iallgather};

fn main() {
    runner::main::<Iallgather>()
}
