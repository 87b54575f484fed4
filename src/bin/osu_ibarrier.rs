//! osu_ibarrier, OSU 7.4 compatible.
use commbench::bench::{engine::runner, nonblocking::ibarrier::Ibarrier};

fn main() {
    runner::main::<Ibarrier>()
}
