//! osu_allgatherv_persistent, OSU 7.4 compatible.
use commbench::{bench::persistent::allgatherv_persistent::AllgathervPersistent, runner};

fn main() {
    runner::main::<AllgathervPersistent>()
}
