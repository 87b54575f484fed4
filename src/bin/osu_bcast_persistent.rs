//! osu_bcast_persistent, OSU 7.4 compatible.
use commbench::{bench::persistent::bcast_persistent::BcastPersistent, runner};

fn main() {
    runner::main::<BcastPersistent>()
}
