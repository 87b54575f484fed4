//! osu_alltoallv_persistent, OSU 7.4 compatible.
use commbench::{bench::persistent::alltoallv_persistent::AlltoallvPersistent, runner};

fn main() {
    runner::main::<AlltoallvPersistent>()
}
