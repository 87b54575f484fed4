//! osu_ibarrier, OSU 7.4 compatible.
use commbench::bench::{ibarrier::Ibarrier, runner};

fn main() {
    runner::main::<Ibarrier>()
}
