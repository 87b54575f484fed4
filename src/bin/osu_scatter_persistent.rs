//! osu_scatter_persistent, OSU 7.4 compatible.
use commbench::bench::{engine::runner, persistent::scatter_persistent::ScatterPersistent};

fn main() {
    runner::main::<ScatterPersistent>()
}
