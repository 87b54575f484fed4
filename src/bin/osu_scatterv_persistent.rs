//! osu_scatterv_persistent, OSU 7.4 compatible.
use commbench::bench::{engine::runner, persistent::scatterv_persistent::ScattervPersistent};

fn main() {
    runner::main::<ScattervPersistent>()
}
