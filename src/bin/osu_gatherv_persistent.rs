//! osu_gatherv_persistent, OSU 7.4 compatible.
use commbench::bench::{engine::runner, persistent::gatherv_persistent::GathervPersistent};

fn main() {
    runner::main::<GathervPersistent>()
}
