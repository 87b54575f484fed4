//! osu_gather_persistent, OSU 7.4 compatible.
use commbench::{bench::persistent::gather_persistent::GatherPersistent, runner};

fn main() {
    runner::main::<GatherPersistent>()
}
