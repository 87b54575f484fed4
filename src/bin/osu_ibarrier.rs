//! osu_ibarrier, OSU 7.4 compatible.
use commbench::{bench::nonblocking::ibarrier::Ibarrier, runner};

fn main() {
    runner::main::<Ibarrier>()
}
