//! osu_igatherv, OSU 7.4 compatible.
use commbench::{bench::nonblocking::igatherv::Igatherv, runner};

fn main() {
    runner::main::<Igatherv>()
}
