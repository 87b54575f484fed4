//! osu_bcast_persistent, OSU 7.4 compatible.
use commbench::bench::{bcast_persistent::BcastPersistent, runner};

fn main() {
    runner::main::<BcastPersistent>()
}
