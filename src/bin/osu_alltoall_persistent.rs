//! osu_alltoall_persistent, OSU 7.4 compatible.
use commbench::bench::{engine::runner, persistent::alltoall_persistent::AlltoallPersistent};

fn main() {
    runner::main::<AlltoallPersistent>()
}
