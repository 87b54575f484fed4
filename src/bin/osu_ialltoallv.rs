//! osu_ialltoallv, OSU 7.4 compatible.
use commbench::bench::{engine::runner, nonblocking::ialltoallv::Ialltoallv};

fn main() {
    runner::main::<Ialltoallv>()
}
