//! osu_gather, OSU 7.4 compatible.
use commbench::{bench::collective::gather::Gather, runner};

fn main() {
    runner::main::<Gather>()
}
