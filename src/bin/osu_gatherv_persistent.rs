//! osu_gatherv_persistent, OSU 7.4 compatible.
use commbench::bench::{gatherv_persistent::GathervPersistent, runner};

fn main() {
    runner::main::<GathervPersistent>()
}
