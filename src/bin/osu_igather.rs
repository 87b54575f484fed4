//! osu_igather, OSU 7.4 compatible.
use commbench::{bench::nonblocking::igather::Igather, runner};

fn main() {
    runner::main::<Igather>()
}
