//! osu_scatter_persistent, OSU 7.4 compatible.
use commbench::bench::{runner, scatter_persistent::ScatterPersistent};

fn main() {
    runner::main::<ScatterPersistent>()
}
