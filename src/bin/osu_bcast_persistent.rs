//! osu_bcast_persistent, OSU 7.4 compatible.
use commbench::bench::{engine::runner, persistent::bcast_persistent::BcastPersistent};

fn main() {
    runner::main::<BcastPersistent>()
}
