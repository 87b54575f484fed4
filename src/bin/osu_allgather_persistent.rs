//! osu_allgather_persistent, OSU 7.4 compatible.
use commbench::bench::{engine::runner, persistent::allgather_persistent::AllgatherPersistent};

fn main() {
    runner::main::<AllgatherPersistent>()
}
