//! osu_alltoall_persistent, OSU 7.4 compatible.
use commbench::{bench::persistent::alltoall_persistent::AlltoallPersistent, runner};

fn main() {
    runner::main::<AlltoallPersistent>()
}
