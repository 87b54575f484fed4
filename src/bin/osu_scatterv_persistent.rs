//! osu_scatterv_persistent, OSU 7.4 compatible.
use commbench::bench::{runner, scatterv_persistent::ScattervPersistent};

fn main() {
    runner::main::<ScattervPersistent>()
}
