//! osu_igather, OSU 7.4 compatible.
use commbench::bench::{engine::runner, nonblocking::igather::Igather};

fn main() {
    runner::main::<Igather>()
}
