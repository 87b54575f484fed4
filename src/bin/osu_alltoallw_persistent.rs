//! osu_alltoallw_persistent, OSU 7.4 compatible.
use commbench::{bench::persistent::alltoallw_persistent::AlltoallwPersistent, runner};

fn main() {
    runner::main::<AlltoallwPersistent>()
}
