//! osu_allgather_persistent, OSU 7.4 compatible.
use commbench::{bench::persistent::allgather_persistent::AllgatherPersistent, runner};

fn main() {
    runner::main::<AllgatherPersistent>()
}
