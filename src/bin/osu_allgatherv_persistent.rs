//! osu_allgatherv_persistent, OSU 7.4 compatible.
use commbench::bench::{engine::runner, persistent::allgatherv_persistent::AllgathervPersistent};

fn main() {
    runner::main::<AllgathervPersistent>()
}
