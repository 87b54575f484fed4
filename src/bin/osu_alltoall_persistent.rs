//! osu_alltoall_persistent, OSU 7.4 compatible.
use commbench::bench::{alltoall_persistent::AlltoallPersistent, runner};

fn main() {
    runner::main::<AlltoallPersistent>()
}
