//! osu_gather_persistent, OSU 7.4 compatible.
use commbench::bench::{engine::runner, persistent::gather_persistent::GatherPersistent};

fn main() {
    runner::main::<GatherPersistent>()
}
