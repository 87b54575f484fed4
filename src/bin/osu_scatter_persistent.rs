//! osu_scatter_persistent, OSU 7.4 compatible.
use commbench::{bench::persistent::scatter_persistent::ScatterPersistent, runner};

fn main() {
    runner::main::<ScatterPersistent>()
}
