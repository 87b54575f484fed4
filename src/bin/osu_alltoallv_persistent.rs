//! osu_alltoallv_persistent, OSU 7.4 compatible.
use commbench::bench::{engine::runner, persistent::alltoallv_persistent::AlltoallvPersistent};

fn main() {
    runner::main::<AlltoallvPersistent>()
}
