//! osu_gatherv_persistent, OSU 7.4 compatible.
use commbench::{bench::persistent::gatherv_persistent::GathervPersistent, runner};

fn main() {
    runner::main::<GathervPersistent>()
}
