//! osu_ialltoallw, OSU 7.4 compatible.
use commbench::bench::{engine::runner, nonblocking::ialltoallw::Ialltoallw};

fn main() {
    runner::main::<Ialltoallw>()
}
