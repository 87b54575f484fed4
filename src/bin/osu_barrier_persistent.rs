//! osu_barrier_persistent, OSU 7.4 compatible.
use commbench::bench::{engine::runner, persistent::barrier_persistent::BarrierPersistent};

fn main() {
    runner::main::<BarrierPersistent>()
}
