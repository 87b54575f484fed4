//! osu_ialltoall, OSU 7.4 compatible.
use commbench::bench::{engine::runner, nonblocking::ialltoall::Ialltoall};

fn main() {
    runner::main::<Ialltoall>()
}
