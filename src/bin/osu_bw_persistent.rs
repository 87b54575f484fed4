//! osu_bw_persistent, OSU 7.4 compatible.
use commbench::{bench::pt2pt::bw_persistent::BwPersistent, runner};

fn main() {
    runner::main::<BwPersistent>()
}
