//! osu_scatterv_persistent, OSU 7.4 compatible.
use commbench::{bench::persistent::scatterv_persistent::ScattervPersistent, runner};

fn main() {
    runner::main::<ScattervPersistent>()
}
