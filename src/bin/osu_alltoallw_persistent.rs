//! osu_alltoallw_persistent, OSU 7.4 compatible.
use commbench::bench::{engine::runner, persistent::alltoallw_persistent::AlltoallwPersistent};

fn main() {
    runner::main::<AlltoallwPersistent>()
}
