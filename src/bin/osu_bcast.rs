//! osu_bcast, OSU 7.4 compatible.
use commbench::{bench::collective::bcast::Bcast, runner};

fn main() {
    runner::main::<Bcast>()
}
