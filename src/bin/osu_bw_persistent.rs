//! osu_bw_persistent, OSU 7.4 compatible.
use commbench::bench::{engine::runner, pt2pt::bw_persistent::BwPersistent};

fn main() {
    runner::main::<BwPersistent>()
}
